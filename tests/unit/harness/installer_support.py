"""Helpers for the installer tests: recorded configs and backups."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

CONFIGS = Path(__file__).resolve().parent / "fixtures" / "configs"
URL = "http://127.0.0.1:3850"
# This installation's MCP server by absolute path: the harness's PATH may not hold this venv.
SIGNET_MCP = str(Path(sys.executable).with_name("signet-mcp"))


def put(fixture: str, target: Path) -> Path:
    """Copy a recorded config into place."""
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(CONFIGS / fixture, target)
    return target


def backups(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.signet-backup"))
