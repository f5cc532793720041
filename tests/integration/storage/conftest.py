"""`backend`: the same storage contract test body on SQLite and on PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.backends import Backend, open_backend


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """A migrated database of either kind, with one autocommit connection."""
    url = request.getfixturevalue("pg_url") if request.param == "postgres" else None
    opened = open_backend(request.param, tmp_path / "memories.db", url)
    yield opened
    opened.conn.close()
