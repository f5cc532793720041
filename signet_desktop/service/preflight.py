"""Checks a surface may run without opening the workspace (for `signet doctor`)."""

from __future__ import annotations

from pathlib import Path

from signet_desktop.storage.connect import DatabaseFileError, check_database_file


def database_file_problem(path: Path) -> str | None:
    """Why the file at `path` is not a usable SQLite database, or None (read-only check)."""
    try:
        check_database_file(path)
    except DatabaseFileError as exc:
        return str(exc)
    return None
