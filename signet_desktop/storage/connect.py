"""Opening SQLite connections: sqlean, sqlite-vec, and the PRAGMAs, all set in one place."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import sqlean

SQLITE_HEADER = b"SQLite format 3\x00"
BUSY_TIMEOUT_MS = 5000

Row = Any  # sqlean.Row: indexable by position and by column name
Params = Sequence[Any] | Mapping[str, Any]


class Cursor(Protocol):
    """The part of a DB-API cursor our SQL paths use."""

    @property
    def rowcount(self) -> int: ...

    @property
    def lastrowid(self) -> int | None: ...

    def fetchone(self) -> Row: ...  # None when no row is left (Any: COUNT(*) always has one)

    def fetchall(self) -> list[Row]: ...

    def __iter__(self) -> Iterator[Row]: ...


class Connection(Protocol):
    """The part of a sqlean connection our SQL paths use (sqlean ships no type stubs).

    Typing it means a misspelt method or a wrong parameter shape is a mypy error, not a
    runtime surprise; rows stay `Any` because their columns depend on the statement.
    """

    def execute(self, sql: str, parameters: Params = ..., /) -> Cursor: ...

    def executemany(self, sql: str, parameters: Iterable[Params], /) -> Cursor: ...

    def close(self) -> None: ...

    def enable_load_extension(self, enabled: bool, /) -> None: ...


class DatabaseFileError(RuntimeError):
    """The database file cannot be used (not SQLite, unreadable); it was left untouched."""


@dataclass(frozen=True, slots=True)
class VecStatus:
    """Whether sqlite-vec loaded on this connection, and why not if it did not."""

    available: bool
    version: str | None
    error: str | None


def check_database_file(path: Path) -> None:
    """Refuse a file that exists but is not SQLite, before anything writes to it."""
    if not path.exists() or path.stat().st_size == 0:
        return
    try:
        with path.open("rb") as handle:
            header = handle.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise DatabaseFileError(f"cannot read database file {path}: {exc}") from exc
    if header != SQLITE_HEADER:
        raise DatabaseFileError(
            f"{path} is not a SQLite database (bad header); refusing to open it. "
            "Move it aside or point --workspace at another directory; the file was not modified."
        )


def load_vec(conn: Connection) -> VecStatus:
    """Load sqlite-vec into `conn`; report failure instead of raising."""
    try:
        import sqlite_vec

        conn.enable_load_extension(True)
        try:
            sqlite_vec.load(conn)
        finally:
            conn.enable_load_extension(False)
        version = conn.execute("SELECT vec_version()").fetchone()[0]
        return VecStatus(True, str(version), None)
    except Exception as exc:  # any loader failure means: run without the ANN mirror
        return VecStatus(False, None, f"{type(exc).__name__}: {exc}")


def connect(path: Path | str, *, with_vec: bool = True) -> tuple[Connection, VecStatus]:
    """Open one connection with WAL, foreign keys, busy timeout and NORMAL sync."""
    raw = sqlean.connect(str(path), isolation_level=None, check_same_thread=False)
    raw.row_factory = sqlean.Row
    conn: Connection = raw
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA temp_store = MEMORY")
    # REPLACE must fire delete triggers, or FTS external-content indexes drift.
    conn.execute("PRAGMA recursive_triggers = ON")
    vec = load_vec(conn) if with_vec else VecStatus(False, None, "disabled")
    return conn, vec


def sqlite_version() -> str:
    """The SQLite library version sqlean ships."""
    return str(sqlean.sqlite_version)
