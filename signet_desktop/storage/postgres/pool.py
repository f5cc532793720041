"""A small pool of PostgreSQL connections (psycopg_pool is not a dependency; this is enough).

Connections are opened lazily, up to `size`, and handed out one per borrower. A connection
given back closed, lost (`PgConnection.broken`) or still inside a transaction is closed
instead of kept. When one connection turns out lost the others idle in the pool are
probably lost too (the server restarted): `drop_idle` closes them all, so the next borrower
connects afresh instead of finding out one dead connection at a time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import suppress

from signet_desktop.storage.errors import DatabaseUnavailable
from signet_desktop.storage.postgres.connect import PgConnection

WAIT_FOR_FREE_S = 30.0


class PoolClosed(RuntimeError):
    """The pool was closed; its database handle is closed."""


class ConnectionPool:
    """At most `size` open connections to one database, shared by threads."""

    def __init__(self, connect: Callable[[], PgConnection], size: int) -> None:
        if size < 1:
            raise ValueError("a pool needs room for at least one connection")
        self._connect = connect
        self.size = size
        self._idle: list[PgConnection] = []
        self._open = 0  # idle + borrowed (+ being opened)
        self._cond = threading.Condition()
        self._closed = False

    @property
    def open_count(self) -> int:
        """Connections open now, idle or borrowed."""
        with self._cond:
            return self._open

    def take(self, wait_s: float = WAIT_FOR_FREE_S) -> PgConnection:
        """An idle connection, a new one while there is room, or the next one given back."""
        with self._cond:
            while True:
                if self._closed:
                    raise PoolClosed("database is closed")
                if self._idle:
                    return self._idle.pop()
                if self._open < self.size:
                    self._open += 1
                    break
                if not self._cond.wait(wait_s):
                    raise DatabaseUnavailable(
                        f"no PostgreSQL connection free after {wait_s:.0f} s "
                        f"(all {self.size} in use)"
                    )
        try:
            return self._connect()
        except BaseException:
            self._forget()
            raise

    def give(self, conn: PgConnection) -> None:
        """Return a borrowed connection: kept when it is healthy and idle, closed otherwise."""
        with self._cond:
            keep = not self._closed and not conn.broken and not conn.in_transaction
            if keep:
                self._idle.append(conn)
                self._cond.notify()
                return
        self.discard(conn)

    def discard(self, conn: PgConnection) -> None:
        """Close a borrowed connection and free its place."""
        _close_quietly(conn)
        self._forget()

    def drop_idle(self) -> None:
        """Close every idle connection (after one was found lost: they likely all are)."""
        with self._cond:
            idle, self._idle = self._idle, []
            self._open -= len(idle)
            self._cond.notify_all()
        for conn in idle:
            _close_quietly(conn)

    def close(self) -> None:
        """Refuse new borrowers and close the idle connections; borrowed ones close when
        they are given back."""
        with self._cond:
            self._closed = True
        self.drop_idle()

    def _forget(self) -> None:
        with self._cond:
            self._open -= 1
            self._cond.notify()


def _close_quietly(conn: PgConnection) -> None:
    with suppress(Exception):  # a lost connection may fail to close; it is gone either way
        conn.close()
