"""Replace a file in one rename: the one atomic write agent.yaml and the installers share;
`fsync_dir` makes a rename in a directory durable (the secret store, staged imports)."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

NEW_FILE_MODE = 0o600


def replace_file(path: Path, text: str, new_mode: int = NEW_FILE_MODE) -> None:
    """Write `text` to a temp file beside `path`, flush it to disk and rename it over `path`,
    keeping the old file's mode (`new_mode` for a new file). On any error `path` is as it
    was, no temp file is left, and the error is raised."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        keep = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        keep = new_mode
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, keep)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def fsync_dir(directory: Path) -> None:
    """Flush `directory`'s entries to disk, so a file renamed into it survives a crash."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
