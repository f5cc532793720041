"""Session-level advisory locks on a connection of their own, for work that outlives any
transaction (a Dreaming pass runs for minutes, its provider calls outside transactions).

`SessionLock.try_acquire(url, key)` opens one connection and asks `pg_try_advisory_lock(key)`
without waiting: the lock, or None when another session (another daemon, or another thread
here) holds it. The lock is the session's: it is held until `release()`, or until the session
ends — the daemon killed, its connection lost, the server restarted — so a dead holder never
leaves it taken. The other side of that: a holder whose connection was lost no longer holds
it, and must stop what the lock protected. `intact()` tells, checking the connection at most
every `check_s` (a `SELECT 1`); once lost it stays lost (the work re-acquires from scratch).
"""

from __future__ import annotations

import hashlib
import threading
import time
from contextlib import suppress

from signet_desktop.storage.errors import DATABASE_ERRORS
from signet_desktop.storage.postgres.connect import PgConnection, connect_postgres

TRY_LOCK = "SELECT pg_try_advisory_lock(:key) AS held"
UNLOCK = "SELECT pg_advisory_unlock(:key)"
PROBE = "SELECT 1"
DEFAULT_CHECK_S = 5.0
CONNECT_TIMEOUT_S = 5.0


def lock_key(namespace: str, name: str) -> int:
    """A 64-bit advisory lock key for `name` within `namespace` (first 8 bytes of SHA-256, signed,
    as `pg_advisory_lock(bigint)` takes it); distinct names collide with odds of 2**-64."""
    digest = hashlib.sha256(f"{namespace}\x00{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class SessionLock:
    """One held session-level advisory lock and the connection holding it."""

    def __init__(self, conn: PgConnection, key: int, *, check_s: float = DEFAULT_CHECK_S) -> None:
        self._conn = conn
        self.key = key
        self._check_s = check_s
        self._checked = time.monotonic()
        self._lost = False
        self._released = False
        self._guard = threading.Lock()

    @classmethod
    def try_acquire(
        cls, url: str, key: int, *, check_s: float = DEFAULT_CHECK_S
    ) -> SessionLock | None:
        """The lock on a new connection, or None when another session holds it (no wait).
        A server that cannot be reached raises `errors.DatabaseUnavailable`."""
        conn = connect_postgres(url, timeout_s=CONNECT_TIMEOUT_S)
        try:
            row = conn.execute(TRY_LOCK, {"key": key}).fetchone()
            held = row is not None and bool(row["held"])
        except BaseException:
            conn.close()
            raise
        if not held:
            conn.close()
            return None
        return cls(conn, key, check_s=check_s)

    @property
    def pid(self) -> int:
        """The server process of the holding session (for tests and diagnostics)."""
        return int(self._conn.raw.info.backend_pid)

    def intact(self) -> bool:
        """Is the lock still held? False once released or once its session was lost."""
        with self._guard:
            if self._lost or self._released:
                return False
            now = time.monotonic()
            if now - self._checked < self._check_s and not self._conn.broken:
                return True
            self._checked = now
            try:
                self._conn.execute(PROBE)
            except DATABASE_ERRORS:
                self._lost = True
            if self._conn.broken:
                self._lost = True
            return not self._lost

    def release(self) -> None:
        """Unlock and close the connection (closing alone would end the session's lock too);
        quiet when the session is already gone. Idempotent."""
        with self._guard:
            if self._released:
                return
            self._released = True
            if not self._lost and not self._conn.broken:
                with suppress(*DATABASE_ERRORS):
                    self._conn.execute(UNLOCK, {"key": self.key})
            self._conn.close()
