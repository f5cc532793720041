"""The HNSW index files beside the database: written whole or not at all, checked when opened.

One partition (generation x agent) is two files in `<database>.ann/`:
`g<generation>-<agent hash>.usearch` (usearch's own format, memory-mapped when opened) and
`.json` beside it, the stamp: format, generation, agent, dimensions, scalar kind, the highest
embedding id the index covers, its vector count, the file's size and CRC-32.

Writing: the index goes to a temporary name, is fsynced and renamed over the old one; then the
stamp the same way; then the directory is fsynced. A crash at any point leaves either the old
pair, or a new index with the old stamp (its size or checksum no longer match), or stray
temporary files: opening finds the mismatch, says why, and the caller rebuilds. A file is never
served unless its stamp matches it byte for byte.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import os
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from usearch.index import Index

FORMAT = 1
_CRC_CHUNK = 1 << 22
_TEMP_MARK = ".tmp-"


def usearch_index() -> type[Index]:
    """usearch's `Index`, imported after onnxruntime when that is installed: usearch 2.26's
    extension loaded first makes onnxruntime's import crash the process (SIGSEGV)."""
    with contextlib.suppress(ImportError):
        importlib.import_module("onnxruntime")

    from usearch.index import Index

    return Index


@dataclass(frozen=True, slots=True)
class IndexStamp:
    """What an index file holds and how to tell it is whole."""

    format: int
    generation_id: int
    agent_id: str
    dimensions: int
    scalar: str
    max_embedding_id: int
    count: int
    size: int
    crc32: int


@dataclass(frozen=True, slots=True)
class OpenedIndex:
    """A verified index, memory-mapped read-only, with its stamp."""

    index: Index
    stamp: IndexStamp


def index_directory(database_path: Path) -> Path:
    """Where a database's index files live: `<database file>.ann/`."""
    return database_path.with_name(database_path.name + ".ann")


def partition_paths(directory: Path, generation_id: int, agent_id: str) -> tuple[Path, Path]:
    """(index file, stamp file) of one partition; the agent id is hashed into the name."""
    agent = hashlib.sha256(agent_id.encode("utf-8")).hexdigest()[:16]
    stem = directory / f"g{int(generation_id)}-{agent}"
    return stem.with_suffix(".usearch"), stem.with_suffix(".json")


def file_crc32(path: Path) -> int:
    """CRC-32 of a whole file, read in 4 MiB chunks."""
    crc = 0
    with path.open("rb") as handle:
        while chunk := handle.read(_CRC_CHUNK):
            crc = zlib.crc32(chunk, crc)
    return crc


def _fsync_file(path: Path) -> None:
    with path.open("rb+") as handle:
        os.fsync(handle.fileno())


def _fsync_directory(directory: Path) -> None:
    with contextlib.suppress(OSError):  # not every platform can open a directory
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_index(
    index: Index, directory: Path, generation_id: int, agent_id: str, max_embedding_id: int
) -> IndexStamp:
    """Persist `index` atomically (temp name, fsync, rename) and return its stamp.

    Raises OSError (disk full, read-only) after removing its temporary files; the previous
    pair, if any, is left as it was.
    """
    directory.mkdir(parents=True, exist_ok=True)
    index_path, stamp_path = partition_paths(directory, generation_id, agent_id)
    temp_index = index_path.with_name(f"{index_path.name}{_TEMP_MARK}{os.getpid()}")
    temp_stamp = stamp_path.with_name(f"{stamp_path.name}{_TEMP_MARK}{os.getpid()}")
    try:
        index.save(str(temp_index))
        _fsync_file(temp_index)
        stamp = IndexStamp(
            format=FORMAT,
            generation_id=generation_id,
            agent_id=agent_id,
            dimensions=int(index.ndim),
            scalar=str(index.dtype).rsplit(".", 1)[-1].lower(),  # ScalarKind.I8 -> i8
            max_embedding_id=max_embedding_id,
            count=len(index),
            size=temp_index.stat().st_size,
            crc32=file_crc32(temp_index),
        )
        os.replace(temp_index, index_path)
        temp_stamp.write_text(json.dumps(asdict(stamp)))
        _fsync_file(temp_stamp)
        os.replace(temp_stamp, stamp_path)
        _fsync_directory(directory)
    except BaseException:
        for temp in (temp_index, temp_stamp):
            temp.unlink(missing_ok=True)
        raise
    return stamp


def read_stamp(stamp_path: Path) -> IndexStamp | None:
    """The stamp, or None when it is missing or unreadable."""
    try:
        return IndexStamp(**json.loads(stamp_path.read_text()))
    except (OSError, ValueError, TypeError):
        return None


def open_index(
    directory: Path, generation_id: int, agent_id: str, dimensions: int
) -> OpenedIndex | str:
    """The partition's index memory-mapped, or why it cannot be used (then rebuild it)."""
    index_path, stamp_path = partition_paths(directory, generation_id, agent_id)
    if not index_path.exists():
        return "no index file"
    stamp = read_stamp(stamp_path)
    if stamp is None:
        return "the index stamp is missing or unreadable"
    wanted = (FORMAT, generation_id, agent_id, dimensions)
    if (stamp.format, stamp.generation_id, stamp.agent_id, stamp.dimensions) != wanted:
        return "the index was built for another format, generation, agent or width"
    try:
        size = index_path.stat().st_size
        if size != stamp.size or file_crc32(index_path) != stamp.crc32:
            return "the index file does not match its stamp (torn or stale write)"
        index = usearch_index().restore(str(index_path), view=True)
    except (OSError, RuntimeError, ValueError) as exc:
        return f"the index file cannot be read ({exc})"
    if index is None or len(index) != stamp.count or index.ndim != dimensions:
        return "the index file does not hold what its stamp says"
    return OpenedIndex(index, stamp)


def remove_stale_files(directory: Path, keep_generation_id: int) -> list[Path]:
    """Delete other generations' index pairs and leftover temporary files; what was removed."""
    removed: list[Path] = []
    if not directory.is_dir():
        return removed
    keep = f"g{int(keep_generation_id)}-"
    for path in directory.iterdir():
        temporary = _TEMP_MARK in path.name and f"{_TEMP_MARK}{os.getpid()}" not in path.name
        if temporary or not path.name.startswith(keep):
            with contextlib.suppress(OSError):
                path.unlink()
                removed.append(path)
    return removed
