"""Database errors callers can catch without knowing the backend.

SQLite raises sqlean's DB-API errors, unchanged (its behaviour stays byte-identical). The
PostgreSQL adapter (`storage/postgres/connect.py`) raises only the classes below, translated
from psycopg's (the original is the `__cause__`, its SQLSTATE kept as `sqlstate`). So a
caller catches the pair: `except INTEGRITY_ERRORS` where it used to say `except
sqlean.IntegrityError`, `except DATABASE_ERRORS` for `except sqlean.Error`.

One difference the classes cannot hide: after a failed statement SQLite keeps the transaction
usable (only the statement is undone), PostgreSQL aborts all of it. A caller that catches an
error and goes on writing in the same transaction wraps the statement in `recoverable(conn)`
(a SAVEPOINT on PostgreSQL, nothing on SQLite).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import sqlean

from signet_desktop.domain.errors import Unavailable
from signet_desktop.storage.connect import Connection, savepoint
from signet_desktop.storage.dialect import is_postgres


class DatabaseError(Exception):
    """A PostgreSQL statement failed; `sqlstate` is the server's code, when it sent one."""

    def __init__(self, message: str, sqlstate: str | None = None) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate


class IntegrityError(DatabaseError):
    """A constraint refused the change (unique, foreign key, not null, check)."""


class UniqueViolation(IntegrityError):
    """A unique index or primary key already holds that value."""


class DatabaseUnavailable(DatabaseError, Unavailable):
    """The server cannot be reached (down, restarting, connection lost, no free connection).

    Also the domain's `Unavailable`, so every surface answers it as one (HTTP: a 503
    `database_unavailable`) without knowing the backend; retrying later may succeed.
    """

    code = "database_unavailable"

    def __init__(self, message: str, sqlstate: str | None = None) -> None:
        reason = message.strip().splitlines()[0] if message.strip() else "no answer"
        super().__init__(f"database unavailable, retry shortly ({reason})", sqlstate)


INTEGRITY_ERRORS: tuple[type[Exception], ...] = (sqlean.IntegrityError, IntegrityError)
DATABASE_ERRORS: tuple[type[Exception], ...] = (sqlean.Error, DatabaseError)

_SQLITE_UNIQUE = ("UNIQUE constraint failed", "PRIMARY KEY constraint failed")


def is_unique_violation(exc: BaseException) -> bool:
    """True when `exc` is a unique or primary-key violation, on either backend."""
    if isinstance(exc, UniqueViolation):
        return True
    return isinstance(exc, sqlean.IntegrityError) and str(exc).startswith(_SQLITE_UNIQUE)


@contextmanager
def recoverable(conn: Connection) -> Iterator[None]:
    """Let the transaction go on after the block's statement fails (the error still raises).

    PostgreSQL aborts the whole transaction on an error; a SAVEPOINT around the statement
    undoes only it. SQLite undoes only the statement already, so nothing is sent there.
    """
    if not is_postgres(conn):
        yield
        return
    with savepoint(conn, "recoverable"):
        yield
