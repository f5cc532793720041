"""The PostgreSQL database handle: `storage/database.py: Database`'s contract on a server.

Same surface as the SQLite handle: `write()` (one write transaction, the thread marked so
provider calls inside it raise, nested use joining through a SAVEPOINT, a failed COMMIT
rolled back), `reader()`, `maintenance()`, `ping()`, `close()`, `applied_migrations`,
`vec_available`. The PostgreSQL migrations are applied at open, under their advisory lock.

**What serialises writers.** SQLite has one writer per file; PostgreSQL has many, and no
Python lock reaches another daemon. Write transactions run at READ COMMITTED: two writers of
one row queue on its row lock, and a check-then-insert race between two daemons is settled by
the unique (often partial unique) indexes, the loser getting `errors.UniqueViolation`. Within
one process the handle still serialises its own writers (`serialised_writes`, on by
default): today's callers check then act inside `write()` (a duplicate looked for before the
insert, a job read before its lease, "one running pass" checked before a new one), and that is
only safe while a second thread of the same process cannot interleave. Across daemons those
capabilities get their own walls as they are ported (leases that skip locked rows,
advisory locks per agent); `serialised_writes=False` is for code that already has them.

**Connections.** Two small pools (`pool.py`), opened lazily: up to 4 readers
(`default_transaction_read_only`, as SQLite's readers are `query_only`) and up to 4 writers
(only one ever opened while writes are serialised), so a daemon holds at most 8 of the
server's `max_connections`. `reader()` is one object for every thread that borrows a connection per
statement and hands the rows back materialised: reads are autocommit, each statement its own
snapshot, exactly as a SQLite reader outside a transaction. **Reconnecting.** A connection
lost to a server restart is noticed on its next statement (`PgConnection.broken`), closed
with the other idle ones, and replaced: a read is retried once on a new connection, a write's
BEGIN too (nothing of the caller's ran yet); a write that loses its connection mid-way raises
`errors.DatabaseUnavailable` and the next `write()` connects afresh. `ping()` is false while
the server cannot be reached and true again once it can.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from typing import Any

from signet_desktop.domain.vector_search import VecStatus
from signet_desktop.storage.connect import Connection, Params, savepoint
from signet_desktop.storage.errors import DATABASE_ERRORS, DatabaseError, DatabaseUnavailable
from signet_desktop.storage.guard import write_transaction_mark
from signet_desktop.storage.migrate import load_migrations
from signet_desktop.storage.postgres.connect import (
    CONNECT_TIMEOUT_S,
    PgConnection,
    connect_postgres,
)
from signet_desktop.storage.postgres.migrate import (
    apply_postgres_migrations,
    check_in_step,
    load_postgres_migrations,
)
from signet_desktop.storage.postgres.pool import ConnectionPool

READ_POOL_SIZE = 4
WRITE_POOL_SIZE = 4  # used one at a time while writes are serialised (opened lazily)
BEGIN = "BEGIN ISOLATION LEVEL READ COMMITTED"
READ_ONLY = "SET default_transaction_read_only = on"
PGVECTOR_VERSION = "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
_TRANSACTION_WORDS = ("BEGIN", "START")


class PgDatabase:
    """PostgreSQL behind the `Database` contract: pooled connections, migrations at open."""

    def __init__(
        self,
        url: str,
        *,
        serialised_writes: bool = True,
        read_pool_size: int = READ_POOL_SIZE,
        write_pool_size: int = WRITE_POOL_SIZE,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
    ) -> None:
        self.url = url
        self._connect_timeout_s = connect_timeout_s
        self._readers = ConnectionPool(self._open_reader, read_pool_size)
        self._writers = ConnectionPool(self._open_writer, write_pool_size)
        self._write_lock: threading.RLock | None = threading.RLock() if serialised_writes else None
        self._local = threading.local()
        self._reader = PooledReader(self)
        self._closed = False
        migrations = load_postgres_migrations()
        check_in_step(migrations, load_migrations())
        try:
            with self._outside_transaction() as conn:
                self.applied_migrations = apply_postgres_migrations(conn, migrations)
                self.vec = _pgvector_status(conn)
        except BaseException:
            self.close()
            raise

    @property
    def vec_available(self) -> bool:
        return self.vec.available

    def _open_writer(self) -> PgConnection:
        return connect_postgres(self.url, timeout_s=self._connect_timeout_s)

    def _open_reader(self) -> PgConnection:
        conn = connect_postgres(self.url, timeout_s=self._connect_timeout_s)
        try:
            conn.execute(READ_ONLY)
        except BaseException:
            conn.close()
            raise
        return conn

    def ping(self) -> bool:
        """One trivial read: is the server reachable and answering?"""
        try:
            self.reader().execute("SELECT 1").fetchone()
        except Exception:  # any failure (down, closed, pool exhausted) means "not ready"
            return False
        return True

    def reader(self) -> Connection:
        """The read connection: each statement on a pooled read-only connection."""
        self._check_open()
        return self._reader

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """One write transaction (READ COMMITTED), serialised within this process.

        The thread is marked for its duration so provider calls inside it raise. Nested use
        on the same thread joins the outer transaction via a SAVEPOINT.
        """
        self._check_open()
        outer: PgConnection | None = getattr(self._local, "conn", None)
        if outer is not None:
            with savepoint(outer, can_undo=lambda: not outer.broken):
                yield outer
            return
        with self._writer_turn():
            conn = self._begin()
            self._local.conn = conn
            try:
                with write_transaction_mark():
                    try:
                        yield conn
                        if conn.aborted:  # PostgreSQL would answer this COMMIT with a ROLLBACK
                            raise DatabaseError(
                                "the write transaction was aborted by an earlier error that "
                                "was caught (wrap such a statement in errors.recoverable)"
                            )
                        conn.execute("COMMIT")
                    except BaseException:
                        _rollback_quietly(conn)
                        raise
            finally:
                self._local.conn = None
                self._writers.give(conn)  # closed instead when lost or still in a transaction

    @contextmanager
    def maintenance(self) -> Iterator[Connection]:
        """A write connection outside a transaction (DDL that manages its own, VACUUM)."""
        with self._outside_transaction() as conn:
            yield conn

    @contextmanager
    def _outside_transaction(self) -> Iterator[PgConnection]:
        outer: PgConnection | None = getattr(self._local, "conn", None)
        if outer is not None:
            yield outer
            return
        with self._writer_turn():
            conn = self._take_live(self._writers)
            try:
                yield conn
            finally:
                if conn.in_transaction:
                    _rollback_quietly(conn)
                self._writers.give(conn)

    def close(self) -> None:
        """Close both pools; a connection still borrowed is closed when it is given back."""
        if self._closed:
            return
        self._closed = True
        self._readers.close()
        self._writers.close()

    @property
    def open_connections(self) -> int:
        """Connections this handle holds open now (readers and writers)."""
        return self._readers.open_count + self._writers.open_count

    def read_statement(self, run: Callable[[PgConnection], ListCursor]) -> ListCursor:
        """`run` on a borrowed read connection; once more on a new one if it was lost."""
        self._check_open()
        for attempt in range(2):
            conn = self._readers.take()
            try:
                result = run(conn)
            except DatabaseUnavailable:
                lost = conn.broken
                self._readers.give(conn)
                if lost:
                    self._readers.drop_idle()
                if attempt or not lost:
                    raise
                continue
            except BaseException:
                self._readers.give(conn)
                raise
            self._readers.give(conn)
            return result
        raise AssertionError("unreachable")  # pragma: no cover

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("database is closed")

    def _writer_turn(self) -> AbstractContextManager[Any]:
        return self._write_lock if self._write_lock is not None else nullcontext()

    def _begin(self) -> PgConnection:
        """A writer connection with its transaction begun; a lost pooled one is replaced."""
        for attempt in range(2):
            conn = self._writers.take()
            try:
                conn.execute(BEGIN)
                return conn
            except DatabaseUnavailable:
                lost = conn.broken
                self._writers.give(conn)
                if lost:
                    self._writers.drop_idle()
                if attempt or not lost:
                    raise
            except BaseException:
                self._writers.give(conn)
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _take_live(self, pool: ConnectionPool) -> PgConnection:
        """A connection that answered `SELECT 1` (a lost idle one is replaced once)."""
        for attempt in range(2):
            conn = pool.take()
            try:
                conn.execute("SELECT 1")
                return conn
            except DatabaseUnavailable:
                lost = conn.broken
                pool.give(conn)
                if lost:
                    pool.drop_idle()
                if attempt or not lost:
                    raise
            except BaseException:
                pool.give(conn)
                raise
        raise AssertionError("unreachable")  # pragma: no cover


class ListCursor:
    """A finished statement's rows, held after its connection went back to the pool."""

    def __init__(self, rows: list[Any], rowcount: int) -> None:
        self._rows = rows
        self._next = 0
        self.rowcount = rowcount

    @property
    def lastrowid(self) -> int | None:
        return None

    def fetchone(self) -> Any:
        if self._next >= len(self._rows):
            return None
        self._next += 1
        return self._rows[self._next - 1]

    def fetchmany(self, size: int = 1, /) -> list[Any]:
        rows = self._rows[self._next : self._next + size]
        self._next += len(rows)
        return rows

    def fetchall(self) -> list[Any]:
        rows = self._rows[self._next :]
        self._next = len(self._rows)
        return rows

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


class PooledReader:
    """The `Connection` protocol for reads: every statement borrows a read-only connection.

    There is no transaction to hold across statements (each one is its own snapshot, as on a
    SQLite reader outside BEGIN), so BEGIN is refused rather than silently lost."""

    dialect = "postgresql"

    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    def execute(self, sql: str, parameters: Params = (), /) -> ListCursor:
        _refuse_transaction(sql)
        return self._db.read_statement(lambda conn: _materialised(conn.execute(sql, parameters)))

    def executemany(self, sql: str, parameters: Iterable[Params], /) -> ListCursor:
        _refuse_transaction(sql)
        batch = list(parameters)
        return self._db.read_statement(lambda conn: _materialised(conn.executemany(sql, batch)))

    def close(self) -> None:
        """Nothing to close: the connections belong to the pool (`PgDatabase.close`)."""

    def enable_load_extension(self, enabled: bool, /) -> None:
        raise NotImplementedError("PostgreSQL loads extensions with CREATE EXTENSION")

    @property
    def in_transaction(self) -> bool:
        return False


def _materialised(cursor: Any) -> ListCursor:
    return ListCursor(cursor.fetchall(), cursor.rowcount)


def _refuse_transaction(sql: str) -> None:
    if sql.lstrip()[:5].upper() in _TRANSACTION_WORDS:
        raise RuntimeError(
            "a PostgreSQL reader runs each statement on its own connection; "
            "a transaction belongs in write()"
        )


def _rollback_quietly(conn: PgConnection) -> None:
    """Roll back if a transaction is still open; a lost connection has nothing to roll back
    (the server ended it) and its error must not replace the one being raised."""
    if conn.broken or not conn.in_transaction:
        return
    # On failure the pool closes the connection (still in a transaction) instead of reusing it.
    with suppress(*DATABASE_ERRORS):
        conn.execute("ROLLBACK")


def _pgvector_status(conn: PgConnection) -> VecStatus:
    row = conn.execute(PGVECTOR_VERSION).fetchone()
    if row is None:
        return VecStatus(False, None, "the pgvector extension is not installed")
    return VecStatus(True, f"pgvector {row[0]}", None)


def open_postgres_database(url: str, **options: Any) -> PgDatabase:
    """Connect to `url` and bring its schema up to date."""
    return PgDatabase(url, **options)
