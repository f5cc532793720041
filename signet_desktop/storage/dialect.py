"""Which SQL dialect a connection speaks, without importing either driver.

The owner modules write portable SQL once; where SQLite and PostgreSQL really differ (JSON
arrays, full text, vectors) an owner keeps both statements side by side and picks one with
`is_postgres(conn)`. A sqlean connection has no `dialect` attribute; the PostgreSQL adapter
(`storage/postgres/connect.py`) says "postgresql".
"""

from __future__ import annotations

from typing import Literal

from signet_desktop.storage.connect import Connection

Dialect = Literal["sqlite", "postgresql"]


def dialect_of(conn: Connection) -> Dialect:
    """The connection's dialect: "postgresql" for the adapter, "sqlite" otherwise."""
    return "postgresql" if getattr(conn, "dialect", None) == "postgresql" else "sqlite"


def is_postgres(conn: Connection) -> bool:
    """True on a PostgreSQL connection."""
    return getattr(conn, "dialect", None) == "postgresql"
