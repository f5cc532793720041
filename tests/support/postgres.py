"""Fixtures for tests on a real PostgreSQL: one embedded server per test process, a fresh
database per test made from a migrated template.

`postgres_server` starts the server the first time a test in this process asks for it
(tests/support/postgres_server.py) and stops it at the end of the session; a server that
cannot start fails the test with its log, never skips it. `pg_template` applies the
PostgreSQL migrations once to a template database; `pg_url` is a new database copied from it
(CREATE DATABASE ... TEMPLATE, ~30 ms) and dropped after the test. Every test that uses them
carries the `postgres` marker (`-m postgres` / `-m "not postgres"` select them).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator

import pytest

from signet_desktop.storage.postgres.connect import PgConnection, connect_postgres
from signet_desktop.storage.postgres.migrate import apply_postgres_migrations
from tests.support.postgres_server import RunningPostgres, start_postgres

TEMPLATE = "signet_template"
_names = itertools.count(1)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[RunningPostgres]:
    """The embedded server of this test process."""
    server = start_postgres()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def pg_template(postgres_server: RunningPostgres) -> str:
    """A database with every PostgreSQL migration applied, to copy for each test."""
    admin = connect_postgres(postgres_server.url())
    try:
        admin.execute(f"CREATE DATABASE {TEMPLATE}")
    finally:
        admin.close()
    conn = connect_postgres(postgres_server.url(TEMPLATE))
    try:
        apply_postgres_migrations(conn)
    finally:
        conn.close()  # CREATE DATABASE ... TEMPLATE needs the template without connections
    return TEMPLATE


def new_database(server: RunningPostgres, template: str) -> str:
    """A new database copied from `template`; returns its name."""
    name = f"t_{os.getpid()}_{next(_names)}"
    admin = connect_postgres(server.url())
    try:
        admin.execute(f"CREATE DATABASE {name} TEMPLATE {template} STRATEGY FILE_COPY")
    finally:
        admin.close()
    return name


def drop_database(server: RunningPostgres, name: str) -> None:
    """Drop a test's database, closing whatever the test left connected."""
    admin = connect_postgres(server.url())
    try:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    finally:
        admin.close()


def _require_marker(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("postgres") is None:
        raise pytest.UsageError(f"{request.node.nodeid} uses PostgreSQL: mark it `postgres`")


@pytest.fixture
def pg_url(
    request: pytest.FixtureRequest, postgres_server: RunningPostgres, pg_template: str
) -> Iterator[str]:
    """The URL of a new, migrated database for this test."""
    _require_marker(request)
    name = new_database(postgres_server, pg_template)
    yield postgres_server.url(name)
    drop_database(postgres_server, name)


@pytest.fixture
def pg_empty_url(request: pytest.FixtureRequest, postgres_server: RunningPostgres) -> Iterator[str]:
    """The URL of a new database without any migration (template0)."""
    _require_marker(request)
    name = new_database(postgres_server, "template0")
    yield postgres_server.url(name)
    drop_database(postgres_server, name)


@pytest.fixture
def pg_conn(pg_url: str) -> Iterator[PgConnection]:
    """One adapter connection to this test's migrated database."""
    conn = connect_postgres(pg_url)
    yield conn
    conn.close()
