"""What `signet storage migrate` copies, in which order, and how each table is keyed.

The tables copied are those both schemas hold (the two migration sets are in step:
`tests/integration/storage/test_pg_schema_parity.py`). What only SQLite has is derived and
rebuilt, never copied: the FTS5 tables and their shadow tables (PostgreSQL's tsvector columns
are generated), the vec0 mirrors and binary codes of each embedding generation (on
PostgreSQL an HNSW index over `embeddings`), `sqlite_sequence`. Each database keeps its own
`schema_migrations` record. Generated columns (the tsvectors) are not copied.

Order: parents before children (foreign keys), the counter tables last (`COUNTER_TABLES`).
A table that references itself (entities.merged_into, entity_attributes.superseded_by) is
copied parents first too (`TablePlan.self_refs`; `copy.py` orders its rows).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from signet_desktop.storage.connect import Connection
from signet_desktop.storage.transfer.convert import Kind, kind_of

PROGRESS_TABLE = "storage_transfer_progress"
# Each database records its own migrations (the two files differ, so do their checksums).
OWN_RECORD = frozenset({"schema_migrations", "schema_migrations_audit"})
# Rows the migrations themselves write (the `default` agent): the source's overwrite them.
SEEDED = frozenset({"agents"})
# Kept by the 0009 triggers as memories and embeddings arrive; copied last, overwriting what
# the triggers counted, so the target holds the source's rows exactly (zero rows included).
COUNTER_TABLES = ("memory_counts", "memory_vector_counts")
# Columns the 0012 trigger counts up as memory_entity_mentions arrive: inserted as 0, set to
# the source's value once every table is in (`copy.py: restore_counted`).
TRIGGER_COUNTED = {"entities": ("mentions",)}
DERIVED_SQLITE = re.compile(
    r"^(sqlite_.*|.*_fts(_(config|data|docsize|idx|content))?|vec_embeddings_g\d+(_.*)?"
    r"|vec_bits_g\d+)$"
)

PG_COLUMNS = """
SELECT table_name, column_name, udt_name, is_identity, is_generated
FROM information_schema.columns WHERE table_schema = current_schema()
ORDER BY table_name, ordinal_position
"""
PG_TABLES = """
SELECT table_name FROM information_schema.tables
WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
"""
SQLITE_TABLES = "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"


class TransferError(RuntimeError):
    """The copy cannot go on (or must not start); the message says why, in one line."""


@dataclass(frozen=True, slots=True)
class TablePlan:
    """One table to copy."""

    name: str
    columns: tuple[str, ...]
    kinds: tuple[Kind, ...]
    key: tuple[str, ...]
    identity: str | None = None  # PostgreSQL's GENERATED ALWAYS column (its rowid key)
    self_refs: tuple[tuple[str, str], ...] = ()  # (column, referenced column) in this table
    overwrite: bool = False  # the target may hold rows already (seeded, counted)
    zeroed: tuple[str, ...] = ()  # inserted as 0: the target's triggers count them

    def kind(self, column: str) -> Kind:
        return self.kinds[self.columns.index(column)]


def quoted(name: str) -> str:
    """An identifier in double quotes (a column is called `trigger`, another `timestamp`)."""
    return '"' + name.replace('"', '""') + '"'


def build_plan(sqlite: Connection, postgres: Connection) -> list[TablePlan]:
    """The tables to copy, parents first; refuses schemas that are not each other's twin."""
    pg_tables = {str(r[0]) for r in postgres.execute(PG_TABLES).fetchall()}
    pg_columns: dict[str, list[tuple[str, str, bool, bool]]] = {}
    for r in postgres.execute(PG_COLUMNS).fetchall():
        pg_columns.setdefault(str(r[0]), []).append(
            (str(r[1]), str(r[2]), r[3] == "YES", r[4] != "NEVER")
        )
    sqlite_tables = [str(r[0]) for r in sqlite.execute(SQLITE_TABLES).fetchall()]
    pg_tables.discard(PROGRESS_TABLE)  # the target's own record of this copy
    sqlite_tables = [t for t in sqlite_tables if t != PROGRESS_TABLE]
    shared = []
    for name in sqlite_tables:
        if name in OWN_RECORD or (name not in pg_tables and DERIVED_SQLITE.match(name)):
            continue
        if name not in pg_tables:
            raise TransferError(f"table {name} has no PostgreSQL twin; the schemas differ")
        shared.append(name)
    missing = sorted(pg_tables - set(shared) - OWN_RECORD)
    if missing:
        raise TransferError(f"PostgreSQL tables {missing} have no SQLite twin; the schemas differ")
    plans = {name: _table_plan(sqlite, name, pg_columns[name]) for name in shared}
    return [plans[name] for name in _parents_first(sqlite, shared)]


def _table_plan(
    sqlite: Connection, name: str, pg_columns: list[tuple[str, str, bool, bool]]
) -> TablePlan:
    info = sqlite.execute(f"PRAGMA table_info({quoted(name)})").fetchall()
    sqlite_columns = [str(r[1]) for r in info]
    copied = {column: (udt, ident) for column, udt, ident, generated in pg_columns if not generated}
    if set(sqlite_columns) != set(copied):
        raise TransferError(
            f"table {name}: columns differ between the schemas "
            f"({sorted(set(sqlite_columns) ^ set(copied))})"
        )
    key = tuple(str(r[1]) for r in sorted(info, key=lambda r: int(r[5])) if int(r[5]) > 0)
    if not key:
        key = _unique_not_null(sqlite, name, {str(r[1]) for r in info if int(r[3])})
    identity = next((c for c in sqlite_columns if copied[c][1]), None)
    refs = tuple(
        (str(r[3]), str(r[4]))
        for r in sqlite.execute(f"PRAGMA foreign_key_list({quoted(name)})").fetchall()
        if str(r[2]) == name
    )
    return TablePlan(
        name=name,
        columns=tuple(sqlite_columns),
        kinds=tuple(kind_of(copied[c][0]) for c in sqlite_columns),
        key=key,
        identity=identity,
        self_refs=refs,
        overwrite=name in SEEDED or name in COUNTER_TABLES,
        zeroed=TRIGGER_COUNTED.get(name, ()),
    )


def _unique_not_null(sqlite: Connection, name: str, not_null: set[str]) -> tuple[str, ...]:
    """A table without a primary key is keyed by a unique index over NOT NULL columns."""
    for index in sqlite.execute(f"PRAGMA index_list({quoted(name)})").fetchall():
        if not int(index[2]):
            continue
        columns = tuple(
            str(r[2]) for r in sqlite.execute(f"PRAGMA index_info({quoted(str(index[1]))})")
        )
        if columns and set(columns) <= not_null:
            return columns
    raise TransferError(f"table {name} has neither a primary key nor a unique NOT NULL key")


def _parents_first(sqlite: Connection, tables: list[str]) -> list[str]:
    """Tables ordered so each comes after the tables it references; counters last."""
    parents = {
        name: {
            str(r[2])
            for r in sqlite.execute(f"PRAGMA foreign_key_list({quoted(name)})").fetchall()
            if str(r[2]) != name and str(r[2]) in tables
        }
        for name in tables
    }
    ordered: list[str] = []
    pending = sorted(t for t in tables if t not in COUNTER_TABLES)
    while pending:
        ready = [t for t in pending if parents[t] <= set(ordered)]
        if not ready:
            raise TransferError(f"foreign keys form a cycle among {pending}")
        ordered.extend(ready)
        pending = [t for t in pending if t not in ready]
    return ordered + [t for t in COUNTER_TABLES if t in tables]
