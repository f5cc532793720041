"""Staged copies: a harness file copied into the workspace as immutable evidence.

`stage` copies a file to `memory/imports/<source_id>/<relative>.<sha256[:16]>.jsonl` (temp file,
fsync, rename, read-only), opened through the roots check so a file swapped for a link out of
them is never copied. A file that changed while it was copied is not staged (None): the
importer leaves it for the next run.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from signet_desktop.config.atomic import fsync_dir
from signet_desktop.safety import local_files

COPY_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class Staged:
    """A staged copy: its path under the workspace, sha256 and size."""

    relative: str
    digest: str
    size: int


def stage(
    path: Path,
    relative: str,
    before: os.stat_result,
    *,
    staging_root: Path,
    workspace: Path,
    roots: Sequence[Path],
) -> Staged | None:
    """Copy `path` into `staging_root`; None when it changed while copying."""
    rel = Path(relative)
    directory = staging_root / rel.parent
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    temp = directory / f".{rel.name}.{uuid.uuid4().hex}.part"
    digest = hashlib.sha256()
    copied = 0
    with local_files.open_file(str(path), roots) as src, temp.open("wb") as dst:
        while chunk := src.read(COPY_CHUNK):
            digest.update(chunk)
            dst.write(chunk)
            copied += len(chunk)
        dst.flush()
        os.fsync(dst.fileno())
    after = path.stat()
    if (
        copied != before.st_size
        or after.st_size != before.st_size
        or after.st_mtime_ns != before.st_mtime_ns
    ):
        temp.unlink(missing_ok=True)
        return None
    hexdigest = digest.hexdigest()
    final = directory / f"{rel.stem}.{hexdigest[:16]}{rel.suffix}"
    if final.exists():  # the same bytes, staged by an earlier (perhaps killed) run
        temp.unlink()
    else:
        os.chmod(temp, 0o400)
        os.replace(temp, final)
        fsync_dir(directory)
    return Staged(final.relative_to(workspace).as_posix(), hexdigest, copied)
