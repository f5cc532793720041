"""The database handle every service holds, whichever backend serves it.

`storage/database.py: Database` (SQLite) and `storage/postgres/database.py: PgDatabase` both
satisfy `DatabaseHandle`; services and the container are typed with it so that
`service/container.py: build_service` wires the same facade over either. What only SQLite's
handle has (`path`: the file) is not here: a caller that needs a workspace folder takes it
from the config (`WorkspacePaths`), not from the database.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol

from signet_desktop.domain.vector_search import VecStatus
from signet_desktop.storage.connect import Connection


class DatabaseHandle(Protocol):
    """What every service uses of its database, on either backend."""

    applied_migrations: list[int]
    # sqlite-vec on SQLite, pgvector on PostgreSQL: loaded or not, and why not.
    vec: VecStatus

    @property
    def vec_available(self) -> bool: ...

    def ping(self) -> bool: ...

    def reader(self) -> Connection: ...

    def write(self) -> AbstractContextManager[Connection]: ...

    def maintenance(self) -> AbstractContextManager[Connection]: ...

    def close(self) -> None: ...
