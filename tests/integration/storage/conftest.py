"""`backend`: the same storage contract test body on SQLite and on PostgreSQL; `daemons`: two
handles on one PostgreSQL database, as two daemons have."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.backends import Backend, open_backend

from signet_desktop.storage.postgres.database import PgDatabase


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """A migrated database of either kind, with one autocommit connection."""
    url = request.getfixturevalue("pg_url") if request.param == "postgres" else None
    opened = open_backend(request.param, tmp_path / "memories.db", url)
    yield opened
    opened.conn.close()


@pytest.fixture
def daemons(pg_url: str) -> Iterator[tuple[PgDatabase, PgDatabase]]:
    """Two handles on one migrated PostgreSQL database: daemon A and daemon B."""
    a, b = PgDatabase(pg_url), PgDatabase(pg_url)
    yield a, b
    a.close()
    b.close()
