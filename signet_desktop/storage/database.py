"""The database handle: one write owner, per-thread read connections, migrations at open."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlean

from signet_desktop.storage.connect import (
    Connection,
    DatabaseFileError,
    check_database_file,
    connect,
    connect_read_only,
    create_private_file,
    rollback_if_open,
    savepoint,
)
from signet_desktop.storage.guard import in_write_transaction, write_transaction_mark
from signet_desktop.storage.migrate import (
    Migration,
    apply_migrations,
    check_schema,
    load_migrations,
)


class Database:
    """SQLite in WAL mode: writes serialised through one connection, reads in parallel."""

    def __init__(self, path: Path, *, with_vec: bool = True) -> None:
        self.path = path
        self._with_vec = with_vec
        migrations = load_migrations()
        refuse_unusable(path, migrations)
        self._write_conn, self.vec = connect(path, with_vec=with_vec)
        self._write_lock = threading.RLock()
        self._local = threading.local()
        self._readers: list[Connection] = []
        self._readers_lock = threading.Lock()
        self._closed = False
        try:
            with self._write_lock:
                self.applied_migrations = apply_migrations(self._write_conn, migrations)
        except BaseException:
            self._write_conn.close()
            raise

    @property
    def vec_available(self) -> bool:
        return self.vec.available

    def ping(self) -> bool:
        """One trivial read on this thread's connection: is the database usable at all?"""
        try:
            self.reader().execute("SELECT 1").fetchone()
        except Exception:  # any failure (closed, locked out, I/O) means "not ready"
            return False
        return True

    def reader(self) -> Connection:
        """This thread's read connection (opened on first use)."""
        if self._closed:
            raise RuntimeError("database is closed")
        conn: Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn, _ = connect(self.path, with_vec=self._with_vec)
            conn.execute("PRAGMA query_only = ON")
            self._local.conn = conn
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """One write transaction (BEGIN IMMEDIATE .. COMMIT), serialised across threads.

        The thread is marked for its duration so provider calls inside it raise.
        Nested use on the same thread joins the outer transaction via a SAVEPOINT.
        """
        if self._closed:
            raise RuntimeError("database is closed")
        with self._write_lock:
            conn = self._write_conn
            if in_write_transaction():
                with savepoint(conn):
                    yield conn
                return
            with write_transaction_mark():
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                    # A COMMIT that fails (a deferred constraint, busy, I/O) leaves the
                    # transaction open: it is rolled back, or the next writer would join it.
                    conn.execute("COMMIT")
                except BaseException:
                    rollback_if_open(conn)
                    raise

    @contextmanager
    def maintenance(self) -> Iterator[Connection]:
        """The write connection outside a transaction (DDL that manages its own, VACUUM)."""
        with self._write_lock:
            yield self._write_conn

    def close(self) -> None:
        """Close every connection this handle opened."""
        if self._closed:
            return
        self._closed = True
        with self._readers_lock:
            for conn in self._readers:
                conn.close()
            self._readers.clear()
        with self._write_lock:
            self._write_conn.execute("PRAGMA optimize")
            self._write_conn.close()


def refuse_unusable(path: Path, migrations: list[Migration]) -> None:
    """Run every refusal before the first write connection, or create the file owner-only.

    Opening for writing switches the file to WAL (rewriting a rollback-journal header) and
    checkpoints a leftover `-wal` on close, so a refused file must never get that far.
    """
    check_database_file(path)
    if not path.exists() or path.stat().st_size == 0:
        create_private_file(path)
        return
    probe = connect_read_only(path)
    try:
        check_schema(probe, migrations)
    except sqlean.Error as exc:
        raise DatabaseFileError(f"cannot read database file {path}: {exc}") from exc
    finally:
        probe.close()


def open_database(path: Path, *, with_vec: bool = True) -> Database:
    """Open (creating if needed) and migrate the database at `path`."""
    return Database(path, with_vec=with_vec)
