"""Which SQL dialect a connection speaks, without importing either driver.

The owner modules write portable SQL once; where SQLite and PostgreSQL really differ (JSON
arrays, full text, vectors) an owner keeps both statements side by side and picks one with
`is_postgres(conn)`. A sqlean connection has no `dialect` attribute; the PostgreSQL adapter
(`storage/postgres/connect.py`) says "postgresql".
"""

from __future__ import annotations

import re
from typing import Literal

from signet_desktop.storage.connect import Connection

Dialect = Literal["sqlite", "postgresql"]


def dialect_of(conn: Connection) -> Dialect:
    """The connection's dialect: "postgresql" for the adapter, "sqlite" otherwise."""
    return "postgresql" if getattr(conn, "dialect", None) == "postgresql" else "sqlite"


def is_postgres(conn: Connection) -> bool:
    """True on a PostgreSQL connection."""
    return getattr(conn, "dialect", None) == "postgresql"


# PostgreSQL: a transaction-level advisory lock on a name (hashed to the lock's bigint key).
XACT_LOCK_PG = "SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))"


def lock_until_commit(conn: Connection, name: str) -> None:
    """On PostgreSQL, wait for the advisory lock called `name` and hold it until the caller's
    transaction ends (daemons sharing the database write at once); SQLite's one writer needs
    none. Taking it again in the same transaction is free."""
    if is_postgres(conn):
        conn.execute(XACT_LOCK_PG, {"key": name})


# `json_each(<JSON array>)` [alias]: the array's elements as rows (`value`, and `key` = the
# position). Only arrays, and only the one-argument form: an owner iterating a JSON object or
# a path inside a document (`json_each(x, '$.key')`) writes its PostgreSQL twin by hand.
_JSON_EACH = re.compile(
    r"json_each\(([^(),]+)\)(?:\s+(?:AS\s+)?(?!(?:WHERE|ON|JOIN|LEFT|CROSS|INNER|AND|OR|ORDER|GROUP|LIMIT|UNION)\b)(\w+))?",
    re.IGNORECASE,
)


def json_array_twin(sql: str) -> str:
    """The PostgreSQL twin of a statement that reads JSON arrays with SQLite's `json_each`.

    Each `json_each(x) [alias]` becomes `jsonb_array_elements_text(CAST(x AS jsonb)) WITH
    ORDINALITY AS alias(value, key)`: `value` is text (as a JSON string's is on SQLite; a
    statement comparing numbers casts, or keeps a hand-written twin), `key` counts from 1
    rather than 0 (used for order only). Owners call it once, at import, beside the SQLite
    text: `STATEMENT_PG = json_array_twin(STATEMENT)`.
    """

    def swap(match: re.Match[str]) -> str:
        alias = match.group(2) or "j"
        return (
            f"jsonb_array_elements_text(CAST({match.group(1)} AS jsonb)) "
            f"WITH ORDINALITY AS {alias}(value, key)"
        )

    return _JSON_EACH.sub(swap, sql)


# SQLite's planner hint: a unary `+` before a column keeps it off an index. PostgreSQL has no
# unary plus for text (and needs no such hint): dropped.
_PLANNER_HINT = re.compile(r"(?<=[\s(])\+(?=[A-Za-z_])")


def postgres_twin(sql: str) -> str:
    """`json_array_twin` plus SQLite's `+column` planner hints dropped: the PostgreSQL twin
    of a statement that differs only in those (`STATEMENT_PG = postgres_twin(STATEMENT)`)."""
    return _PLANNER_HINT.sub("", json_array_twin(sql))


def insertion_tie(conn: Connection) -> str:
    """The column that breaks a tie on a timestamp by insertion: SQLite's `rowid`; on
    PostgreSQL, which has none, `ctid` (the row's place in the heap: insertion order for a
    row never updated since, and a stable tie-break for one that was)."""
    return "ctid" if is_postgres(conn) else "rowid"
