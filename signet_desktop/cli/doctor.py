"""`signet doctor`'s checks: the shared ones of `service/diagnostics.py` plus the daemon's.

The local checks (workspace, config, database header) and the judgement of the service's
values live in `service/diagnostics.py`, shared with the inspector's Health pane (the CLI reads
those values back from `/api/status` through `cli/status_wire.py`); this module adds the check
only the CLI makes (did a daemon answer `/health`, on which workspace). Rendering and the exit
status live in status_commands.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from signet_desktop.cli.output import duration_text
from signet_desktop.service.diagnostics import (
    Check,
    Level,
    config_checks,
    database_check,
    embedding_check,
    failed,
    memory_md_checks,
    render,
    safety_check,
    startup_checks,
    vector_check,
    workspace_check,
)

__all__ = [
    "Check",
    "Level",
    "config_checks",
    "daemon_check",
    "database_check",
    "embedding_check",
    "failed",
    "memory_md_checks",
    "render",
    "safety_check",
    "startup_checks",
    "vector_check",
    "workspace_check",
]


def daemon_check(url: str, health: Mapping[str, Any], root: Path) -> list[Check]:
    """The daemon answered /health; warn when it serves a different workspace than ours."""
    facts = [f"version {health.get('version', '?')}"]
    if health.get("pid") is not None:
        facts.append(f"pid {health['pid']}")
    if isinstance(health.get("uptime"), int | float):
        facts.append(f"up {duration_text(health['uptime'])}")
    state = str(health.get("status", "ok"))
    level = Level.OK if state in {"ok", "healthy"} else Level.WARN
    checks = [Check(level, f"daemon {state} at {url} ({', '.join(facts)})")]
    served = health.get("agentsDir")
    if isinstance(served, str) and served and Path(served) != root:
        checks.append(
            Check(
                Level.WARN,
                f"the daemon serves workspace {served}, but this shell resolves {root} "
                "(set SIGNET_WORKSPACE or pass --workspace to check the same one)",
            )
        )
    return checks
