"""Opening SQLite connections: sqlean, sqlite-vec, and the PRAGMAs, all set in one place."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

import sqlean

from signet_desktop.domain.vector_search import VecStatus

SQLITE_HEADER = b"SQLite format 3\x00"
BUSY_TIMEOUT_MS = 5000
# No memory map (SQLite's default): reads go through read() into a 2 MB page cache per
# connection, and the OS file cache (shared, reclaimable, not the process's memory) holds
# the rest. A 1 GiB map made BM25 reads at 100k memories ~30% faster (issue 14), but every
# connection maps the file on its own and every page a pass touched stayed in the process's
# RSS, once per connection: the desktop app at 100k memories settled at 1.5 GB, 1.1 GB of it
# the mapped database (docs/BENCHMARKS.md, "Memory at 100k memories").
MMAP_BYTES = 0

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

    def fetchmany(self, size: int = ..., /) -> list[Row]: ...

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

    @property
    def in_transaction(self) -> bool: ...


def rollback_if_open(conn: Connection) -> None:
    """Roll back the transaction, if one is still open. A signal (KeyboardInterrupt) can land
    after COMMIT returned but before its block was left: a bare ROLLBACK then fails with "no
    transaction is active" and that error would replace the interrupt (seen: a SIGTERM during
    start-up reported as a database error, exit 2)."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")


class DatabaseFileError(RuntimeError):
    """The database file cannot be used (not SQLite, unreadable); it was left untouched."""


@contextmanager
def savepoint(
    conn: Connection, name: str = "nested", *, can_undo: Callable[[], bool] = lambda: True
) -> Iterator[None]:
    """The block inside SAVEPOINT `name` (both dialects): an error undoes the block alone and
    the outer transaction goes on; `can_undo` false (the connection is lost) skips the undo."""
    conn.execute(f"SAVEPOINT {name}")
    try:
        yield
    except BaseException:
        if can_undo():
            conn.execute(f"ROLLBACK TO SAVEPOINT {name}")
            conn.execute(f"RELEASE SAVEPOINT {name}")
        raise
    conn.execute(f"RELEASE SAVEPOINT {name}")


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


def connect_read_only(path: Path) -> Connection:
    """A look at an existing database that writes nothing: no WAL switch, no new sidecar files.

    `connect()` sets `journal_mode = WAL`, which rewrites the header of a rollback-journal
    file, so every refusal is decided here first. A file without a `-wal` or `-journal`
    beside it is opened `immutable` (otherwise SQLite would create `-wal`/`-shm` for a WAL
    file and leave them behind); with one, plain read-only, so uncheckpointed pages are seen.
    """
    sidecars = (path.with_name(path.name + suffix) for suffix in ("-wal", "-journal"))
    flags = "mode=ro" if any(p.exists() for p in sidecars) else "mode=ro&immutable=1"
    try:
        raw = sqlean.connect(f"{path.absolute().as_uri()}?{flags}", uri=True, isolation_level=None)
    except sqlean.Error as exc:
        raise DatabaseFileError(f"cannot open database file {path}: {exc}") from exc
    raw.row_factory = sqlean.Row
    conn: Connection = raw
    conn.execute("PRAGMA query_only = ON")
    return conn


def create_private_file(path: Path) -> None:
    """Create an empty database file readable by its owner only (0600), if there is none.

    SQLite gives its `-wal`, `-shm` and `-journal` files the database file's mode, so they
    are owner-only too. The directory is created 0700.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    os.close(fd)


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
    conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
    # REPLACE must fire delete triggers, or FTS external-content indexes drift.
    conn.execute("PRAGMA recursive_triggers = ON")
    vec = load_vec(conn) if with_vec else VecStatus(False, None, "disabled")
    return conn, vec


def sqlite_version() -> str:
    """The SQLite library version sqlean ships."""
    return str(sqlean.sqlite_version)
