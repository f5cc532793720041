"""The target's record of a copy under way: `storage_transfer_progress`, one row per table.

Written in the same transaction as each batch of rows (`copy.py`), so a run killed at any
moment resumes where the last committed batch left it and never copies a row twice. The row
named `*` says which source the copy comes from: a target holding data with no record, or a
record of another source, is refused. Once the copy is verified the table is dropped and the
target is an ordinary Signet database.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres
from signet_desktop.storage.transfer.plan import PROGRESS_TABLE, TablePlan, quoted

MARKER = "*"
CREATE = f"""
CREATE TABLE {PROGRESS_TABLE} (
    table_name TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    last_key TEXT,
    rows_done INTEGER NOT NULL DEFAULT 0,
    done INTEGER NOT NULL DEFAULT 0
)
"""
ADD_ROW = (
    "INSERT INTO storage_transfer_progress (table_name, source) VALUES (:table_name, :source) "
    "ON CONFLICT (table_name) DO NOTHING"
)
RECORD = (
    "UPDATE storage_transfer_progress SET last_key = :last_key, rows_done = :rows_done "
    "WHERE table_name = :table_name"
)
FINISH = "UPDATE storage_transfer_progress SET done = 1 WHERE table_name = :table_name"
READ = f"SELECT table_name, source, last_key, rows_done, done FROM {PROGRESS_TABLE}"
EXISTS_SQLITE = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = :name"
EXISTS_PG = (
    "SELECT 1 FROM information_schema.tables "
    "WHERE table_schema = current_schema() AND table_name = :name"
)


@dataclass(frozen=True, slots=True)
class TableProgress:
    """Where one table's copy stands."""

    last_key: tuple[Any, ...] | None = None
    rows_done: int = 0
    done: bool = False


def has_record(conn: Connection) -> bool:
    """Whether the database holds a copy's progress table."""
    sql = EXISTS_PG if is_postgres(conn) else EXISTS_SQLITE
    return conn.execute(sql, {"name": PROGRESS_TABLE}).fetchone() is not None


def recorded_source(conn: Connection) -> str | None:
    """The source the recorded copy comes from (None: no record)."""
    if not has_record(conn):
        return None
    row = conn.execute(f"{READ} WHERE table_name = :m", {"m": MARKER}).fetchone()
    return str(row[1]) if row else None


def first_table_with_data(conn: Connection, plans: list[TablePlan]) -> str | None:
    """A table holding rows a fresh schema would not (None: the database is empty)."""
    for plan in plans:
        where = " WHERE id <> 'default'" if plan.name == "agents" else ""
        if conn.execute(f"SELECT 1 FROM {quoted(plan.name)}{where} LIMIT 1").fetchone():
            return plan.name
    return None


def begin_record(conn: Connection, source: str, plans: list[TablePlan]) -> None:
    """Create the record of a new copy from `source` (inside the caller's transaction)."""
    if not has_record(conn):
        conn.execute(CREATE)
    for name in (MARKER, *(p.name for p in plans)):
        conn.execute(ADD_ROW, {"table_name": name, "source": source})


def read_progress(conn: Connection) -> dict[str, TableProgress]:
    """Every table's progress, by name."""
    found = {}
    for r in conn.execute(READ).fetchall():
        key = tuple(json.loads(r[2])) if r[2] is not None else None
        found[str(r[0])] = TableProgress(key, int(r[3]), bool(r[4]))
    return found


def record_batch(conn: Connection, table: str, last_key: tuple[Any, ...], rows_done: int) -> None:
    """The last key copied and the rows done so far (same transaction as the rows)."""
    params = {"table_name": table, "last_key": json.dumps(list(last_key)), "rows_done": rows_done}
    conn.execute(RECORD, params)


def finish_table(conn: Connection, table: str) -> None:
    """Mark a table's copy complete."""
    conn.execute(FINISH, {"table_name": table})


def drop_record(conn: Connection) -> None:
    """Remove the record once the copy is verified."""
    conn.execute(f"DROP TABLE IF EXISTS {PROGRESS_TABLE}")
