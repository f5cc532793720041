"""Which database handle `storage.url` asks for: SQLite's `Database` or `PgDatabase`.

Both keep one contract (`DatabaseHandle`): `write()`, `reader()`, `maintenance()`, `ping()`,
`close()`, `applied_migrations`, `vec_available` (`storage/handle.py`). This is the one place
that picks the backend: `service/container.py: build_service` calls it for the daemon.
"""

from __future__ import annotations

from pathlib import Path

from signet_desktop.config.storage import StorageConfig
from signet_desktop.storage.database import Database, open_database
from signet_desktop.storage.handle import DatabaseHandle

__all__ = ["DatabaseHandle", "open_store"]


def open_store(
    storage: StorageConfig, sqlite_path: Path, *, with_vec: bool = True
) -> DatabaseHandle:
    """The database `storage.url` names: the SQLite file at `sqlite_path` for `sqlite:`, the
    PostgreSQL server otherwise (migrated at open, like the file)."""
    if storage.backend == "sqlite":
        database: Database = open_database(sqlite_path, with_vec=with_vec)
        return database
    # Imported here: the SQLite path never loads the PostgreSQL driver (~0.2 s of imports).
    from signet_desktop.storage.postgres.database import open_postgres_database

    return open_postgres_database(storage.url)
