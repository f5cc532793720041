"""Fixtures for the installer tests: a fake HOME and where each harness keeps its files."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from signet_desktop.harness.installers.files import Locations


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def locations(home: Path) -> Locations:
    # PATH holds this interpreter's scripts, so `signet` and `signet-mcp` are bare names.
    return Locations(home, {"HOME": str(home), "PATH": str(Path(sys.executable).parent)})
