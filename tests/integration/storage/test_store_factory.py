"""storage/store.py: `storage.url` picks the database handle (the daemon serves either;
tests/integration/test_pg_daemon_start.py starts one on PostgreSQL)."""

from __future__ import annotations

from pathlib import Path

import pytest

from signet_desktop.config.storage import StorageConfig
from signet_desktop.storage.database import Database
from signet_desktop.storage.postgres.database import PgDatabase
from signet_desktop.storage.postgres.migrate import load_postgres_migrations
from signet_desktop.storage.store import open_store

EVERY_VERSION = [m.version for m in load_postgres_migrations()]


def test_the_default_url_opens_the_workspace_sqlite_file(tmp_path: Path) -> None:
    path = tmp_path / "memory" / "memories.db"
    store = open_store(StorageConfig(), path)
    try:
        assert isinstance(store, Database) and store.path == path and path.exists()
        assert store.ping()
    finally:
        store.close()


@pytest.mark.postgres
def test_a_postgresql_url_opens_the_server_and_leaves_no_file(
    tmp_path: Path, pg_empty_url: str
) -> None:
    path = tmp_path / "memory" / "memories.db"
    store = open_store(StorageConfig(url=pg_empty_url), path)
    try:
        assert isinstance(store, PgDatabase) and store.url == pg_empty_url
        assert store.applied_migrations == EVERY_VERSION and store.ping()
        with store.write() as conn:
            assert conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0] == 0
    finally:
        store.close()
    assert not path.exists() and not path.parent.exists()
