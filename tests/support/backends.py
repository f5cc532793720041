"""One handle on either backend for the storage contract tests: its connection, how it opens
a write transaction, and its migration runner."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlean

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.storage import StorageConfig
from signet_desktop.storage import errors
from signet_desktop.storage.connect import Connection, connect
from signet_desktop.storage.migrate import Migration, apply_migrations, load_migrations
from signet_desktop.storage.postgres.connect import connect_postgres
from signet_desktop.storage.postgres.migrate import (
    apply_postgres_migrations,
    load_postgres_migrations,
)


@dataclass(frozen=True, slots=True)
class Backend:
    """A migrated database of one kind."""

    name: str
    conn: Connection
    begin: str  # the statement that opens a write transaction
    integrity_error: type[Exception]

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """One write transaction, committed when the block ends, rolled back on error."""
        self.conn.execute(self.begin)
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")


def open_backend(name: str, sqlite_path: Path, pg_url: str | None) -> Backend:
    """A migrated database: a new SQLite file at `sqlite_path`, or the PostgreSQL `pg_url`."""
    if name == "sqlite":
        conn, _vec = connect(sqlite_path)
        apply_migrations(conn)
        return Backend(name, conn, "BEGIN IMMEDIATE", sqlean.IntegrityError)
    assert pg_url is not None
    return Backend(name, connect_postgres(pg_url), "BEGIN", errors.IntegrityError)


def connector(name: str, sqlite_path: Path, pg_url: str | None) -> Callable[[], Connection]:
    """A function opening one more plain connection to the same database (not migrated)."""
    if name == "sqlite":
        return lambda: connect(sqlite_path)[0]
    assert pg_url is not None
    return lambda: connect_postgres(pg_url)


def runner(name: str) -> tuple[Callable[[], list[Migration]], Callable[..., list[int]]]:
    """The backend's migration loader and runner."""
    if name == "sqlite":
        return load_migrations, apply_migrations
    return load_postgres_migrations, apply_postgres_migrations


def backend_config(request: pytest.FixtureRequest) -> SignetConfig:
    """The default config for a fixture parametrised "sqlite" / "postgres": on "postgres",
    `storage.url` names a fresh database of the tests' server (the `pg_url` fixture)."""
    config = SignetConfig()
    if request.param == "postgres":
        url = request.getfixturevalue("pg_url")
        config = config.model_copy(update={"storage": StorageConfig(url=url)})
    return config
