"""After every migration, PostgreSQL's schema is SQLite's: the same tables with the same
columns, the same indexes by name (unique where SQLite's are), the same triggers except the
FTS5 sync triggers (a generated tsvector column replaces each FTS5 table, and two more hold
what FTS5's BM25 reads from its index), the migrations numbered in step; applying them
again does nothing, and an edited file is refused."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.backends import open_backend

from signet_desktop.storage.connect import Connection
from signet_desktop.storage.migrate import MigrationError, load_migrations
from signet_desktop.storage.postgres.connect import PgConnection
from signet_desktop.storage.postgres.migrate import (
    apply_postgres_migrations,
    check_in_step,
    load_postgres_migrations,
)

pytestmark = pytest.mark.postgres

# Each FTS5 table (and its shadow tables) is a generated tsvector column of its content table.
FTS_COLUMNS = {
    "memories": "content_tsv",
    "session_transcripts": "content_tsv",
    "memory_artifacts": "content_tsv",
    "memory_hints": "hint_tsv",
    "transcript_turns": "text_tsv",
}
FTS_TABLES = {f"{table}_fts" for table in FTS_COLUMNS}
# What FTS5 keeps inside its index that PostgreSQL's BM25 reads from generated columns (0018):
# each row's term frequencies and length.
BM25_COLUMNS = {"memories": {"content_terms", "content_tokens"}}
FTS_SHADOWS = ("_data", "_idx", "_content", "_docsize", "_config")


@pytest.fixture
def sqlite_conn(tmp_path: Path) -> Iterator[Connection]:
    conn = open_backend("sqlite", tmp_path / "memories.db", None).conn
    yield conn
    conn.close()


def _is_fts(name: str) -> bool:
    return name in FTS_TABLES or any(name == t + s for t in FTS_TABLES for s in FTS_SHADOWS)


def sqlite_tables(conn: Connection) -> dict[str, dict[str, bool]]:
    """Each table's columns and whether each is NOT NULL (FTS5 and sqlite_ tables left out)."""
    names = [
        str(r[0])
        for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        if not str(r[0]).startswith("sqlite_") and not _is_fts(str(r[0]))
    ]
    return {
        name: {
            str(c["name"]): bool(c["notnull"])
            for c in conn.execute(f"PRAGMA table_info({name})").fetchall()
        }
        for name in names
    }


def postgres_tables(conn: PgConnection) -> dict[str, dict[str, bool]]:
    rows = conn.execute(
        "SELECT table_name, column_name, is_nullable FROM information_schema.columns "
        "WHERE table_schema = current_schema()"
    ).fetchall()
    tables: dict[str, dict[str, bool]] = {}
    for table, column, nullable in rows:
        tables.setdefault(str(table), {})[str(column)] = nullable == "NO"
    return tables


def test_every_sqlite_table_is_on_postgres_with_the_same_columns(
    sqlite_conn: Connection, pg_conn: PgConnection
) -> None:
    lite, pg = sqlite_tables(sqlite_conn), postgres_tables(pg_conn)
    assert set(pg) == set(lite)
    for table, columns in lite.items():
        extra = {FTS_COLUMNS[table]} if table in FTS_COLUMNS else set()
        extra |= BM25_COLUMNS.get(table, set())
        assert set(pg[table]) == set(columns) | extra, table
        for column, not_null in columns.items():
            # SQLite lets a TEXT PRIMARY KEY hold NULL; PostgreSQL never does: only SQLite's
            # NOT NULL must hold on both.
            assert pg[table][column] or not not_null, (table, column)


def test_every_sqlite_index_is_on_postgres_by_name_and_uniqueness(
    sqlite_conn: Connection, pg_conn: PgConnection
) -> None:
    lite = {
        str(r[0]): str(r[1])
        for r in sqlite_conn.execute(
            "SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
        ).fetchall()
        if not _is_fts(str(r[1]))
    }
    unique_lite = {
        name
        for name, table in lite.items()
        for r in sqlite_conn.execute(f"PRAGMA index_list({table})").fetchall()
        if r["name"] == name and r["unique"]
    }
    pg = {
        str(r[0]): bool(r[1])
        for r in pg_conn.execute(
            "SELECT c.relname, i.indisunique FROM pg_index i "
            "JOIN pg_class c ON c.oid = i.indexrelid "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema()"
        ).fetchall()
    }
    assert set(lite) <= set(pg), sorted(set(lite) - set(pg))
    assert {name for name in lite if pg[name]} == unique_lite
    tsv_indexes = {f"idx_{table}_{column}" for table, column in FTS_COLUMNS.items()}
    assert tsv_indexes <= set(pg)
    gin = pg_conn.execute(
        "SELECT c.relname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE a.amname = 'gin'"
    ).fetchall()
    assert {str(r[0]) for r in gin} == tsv_indexes


def test_every_trigger_but_the_fts5_sync_ones_is_on_postgres(
    sqlite_conn: Connection, pg_conn: PgConnection
) -> None:
    lite = {
        (str(r[0]), str(r[1]))
        for r in sqlite_conn.execute(
            "SELECT name, tbl_name FROM sqlite_master WHERE type = 'trigger'"
        ).fetchall()
    }
    fts_sync = {
        (f"{table}_{event}", table) for table in FTS_COLUMNS for event in ("ai", "ad", "au")
    }
    assert fts_sync <= lite
    pg = {
        (str(r[0]), str(r[1]))
        for r in pg_conn.execute(
            "SELECT t.tgname, c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
            "WHERE NOT t.tgisinternal"
        ).fetchall()
    }
    assert pg == lite - fts_sync


def test_the_migrations_are_numbered_in_step_and_all_ported(pg_conn: PgConnection) -> None:
    postgres, sqlite = load_postgres_migrations(), load_migrations()
    check_in_step(postgres, sqlite)
    assert [(m.version, m.name) for m in postgres] == [(m.version, m.name) for m in sqlite]
    recorded = pg_conn.execute("SELECT version, name FROM schema_migrations ORDER BY version")
    assert [(int(r[0]), str(r[1])) for r in recorded.fetchall()] == [
        (m.version, m.name) for m in sqlite
    ]


def _schema(conn: PgConnection) -> list[tuple[object, ...]]:
    return [
        tuple(r)
        for r in conn.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = current_schema() ORDER BY 1, 2"
        ).fetchall()
    ]


def test_applying_the_migrations_again_changes_nothing(pg_conn: PgConnection) -> None:
    before = _schema(pg_conn)
    audits = pg_conn.execute("SELECT COUNT(*) FROM schema_migrations_audit").fetchone()[0]
    assert apply_postgres_migrations(pg_conn) == []
    assert _schema(pg_conn) == before
    assert pg_conn.execute("SELECT COUNT(*) FROM schema_migrations_audit").fetchone()[0] == audits


def test_an_edited_ported_migration_is_refused(pg_conn: PgConnection) -> None:
    known = load_postgres_migrations()
    last = known[-1]
    edited = [*known[:-1], dataclasses.replace(last, sql=last.sql + "\n-- edited\n")]
    with pytest.raises(MigrationError, match="checksum mismatch"):
        apply_postgres_migrations(pg_conn, edited)
    assert apply_postgres_migrations(pg_conn, known) == []


def check_clauses(create_sql: str) -> list[str]:
    """The text inside each CHECK (...) of a CREATE TABLE statement."""
    clauses = []
    for match in re.finditer(r"\bCHECK\s*\(", create_sql):
        depth, start = 1, match.end()
        position = start
        while depth:
            depth += {"(": 1, ")": -1}.get(create_sql[position], 0)
            position += 1
        clauses.append(create_sql[start : position - 1])
    return clauses


# A CHECK that only says "valid JSON" is the jsonb type itself on PostgreSQL.
JSON_ONLY = re.compile(r"^\s*(?:(\w+) IS NULL OR )?json_valid\(\w+\)\s*$", re.IGNORECASE)


def test_every_check_but_json_validity_is_on_postgres(
    sqlite_conn: Connection, pg_conn: PgConnection
) -> None:
    lite: dict[str, int] = {}
    for name, sql in sqlite_conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql IS NOT NULL"
    ).fetchall():
        kept = [c for c in check_clauses(str(sql)) if not JSON_ONLY.match(c)]
        if kept:
            lite[str(name)] = len(kept)
    pg = {
        str(r[0]): int(r[1])
        for r in pg_conn.execute(
            "SELECT conrelid::regclass::text, COUNT(*) FROM pg_constraint "
            "WHERE contype = 'c' AND conrelid <> 0 GROUP BY 1"
        ).fetchall()
    }
    assert pg == lite


ON_DELETE = {"a": "NO ACTION", "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL", "d": "SET DEFAULT"}


def test_every_foreign_key_is_on_postgres_with_its_on_delete(
    sqlite_conn: Connection, pg_conn: PgConnection
) -> None:
    lite = {
        (table, str(fk["from"]), str(fk["table"]), str(fk["to"]), str(fk["on_delete"]))
        for table in sqlite_tables(sqlite_conn)
        for fk in sqlite_conn.execute(f"PRAGMA foreign_key_list({table})").fetchall()
    }
    rows = pg_conn.execute(
        "SELECT c.conrelid::regclass::text, a.attname, c.confrelid::regclass::text, "
        "af.attname, c.confdeltype FROM pg_constraint c "
        "CROSS JOIN LATERAL unnest(c.conkey, c.confkey) AS k (col, fcol) "
        "JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.col "
        "JOIN pg_attribute af ON af.attrelid = c.confrelid AND af.attnum = k.fcol "
        "WHERE c.contype = 'f'"
    ).fetchall()
    pg = {(str(r[0]), str(r[1]), str(r[2]), str(r[3]), ON_DELETE[str(r[4])]) for r in rows}
    assert len(lite) > 20 and pg == lite
