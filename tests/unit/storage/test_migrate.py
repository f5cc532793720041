"""The migration runner: ordering, bookkeeping, checksum drift, atomic failure."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlean

from signet_desktop.storage.connect import connect
from signet_desktop.storage.migrate import (
    BOOKKEEPING,
    Migration,
    MigrationError,
    apply_migrations,
    load_migrations,
    migrations_dir,
    split_statements,
)

pytestmark = pytest.mark.migrates  # opens databases through every migration


def test_shipped_migrations_are_contiguous_and_found() -> None:
    found = load_migrations()
    assert [m.version for m in found] == list(range(1, len(found) + 1))
    assert migrations_dir().is_dir()


def test_each_migration_records_checksum_and_audit_timing(tmp_path: Path) -> None:
    conn, _ = connect(tmp_path / "m.db")
    applied = apply_migrations(conn)
    rows = conn.execute("SELECT version, checksum FROM schema_migrations").fetchall()
    audit = conn.execute("SELECT version, duration_ms FROM schema_migrations_audit").fetchall()
    assert [r[0] for r in rows] == applied
    assert {r[1] for r in rows} == {m.checksum for m in load_migrations()}
    assert [r[0] for r in audit] == applied
    assert all(r[1] >= 0 for r in audit)
    assert apply_migrations(conn) == []


def test_changed_checksum_of_applied_migration_stops_startup(tmp_path: Path) -> None:
    conn, _ = connect(tmp_path / "m.db")
    original = [Migration(1, "first", "CREATE TABLE a (x INTEGER);")]
    apply_migrations(conn, original)
    edited = [Migration(1, "first", "CREATE TABLE a (x INTEGER, y TEXT);")]
    with pytest.raises(MigrationError, match="changed after it was applied"):
        apply_migrations(conn, edited)


def test_failed_migration_leaves_no_trace(tmp_path: Path) -> None:
    conn, _ = connect(tmp_path / "m.db")
    broken = [
        Migration(1, "ok", "CREATE TABLE a (x INTEGER);"),
        Migration(2, "broken", "CREATE TABLE b (x INTEGER);\nCREATE TABLE a (x INTEGER);"),
    ]
    with pytest.raises(MigrationError, match="0002_broken failed"):
        apply_migrations(conn, broken)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "a" in tables and "b" not in tables
    versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations")]
    assert versions == [1]


def test_database_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    conn, _ = connect(tmp_path / "m.db")
    apply_migrations(conn, [Migration(1, "a", "CREATE TABLE a (x);"), Migration(2, "b", "")])
    with pytest.raises(MigrationError, match="newer"):
        apply_migrations(conn, [Migration(1, "a", "CREATE TABLE a (x);")])


def test_gaps_in_numbering_are_refused(tmp_path: Path) -> None:
    (tmp_path / "0001_a.sql").write_text("CREATE TABLE a (x);")
    (tmp_path / "0003_c.sql").write_text("CREATE TABLE c (x);")
    with pytest.raises(MigrationError, match="contiguous"):
        load_migrations(tmp_path)


def test_trigger_bodies_split_as_one_statement() -> None:
    sql = (
        "CREATE TABLE t (x);\n"
        "CREATE TRIGGER tr AFTER INSERT ON t BEGIN\n  SELECT 1;\n  SELECT 2;\nEND;\n"
        "-- trailing comment\n"
    )
    statements = split_statements(sql)
    assert len(statements) == 2
    assert statements[1].startswith("CREATE TRIGGER") and statements[1].endswith("END;")
    conn = sqlean.connect(":memory:")
    for statement in statements:
        conn.execute(statement)


def test_a_foreign_database_is_refused_without_changes(tmp_path: Path) -> None:
    """A Signet (TypeScript) database has its own schema_migrations: never touch it."""
    path = tmp_path / "signet.db"
    conn, _ = connect(path)
    conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT)")
    conn.execute("CREATE TABLE memories (id TEXT PRIMARY KEY, content TEXT)")
    before = sorted(r[0] for r in conn.execute("SELECT name FROM sqlite_master"))
    with pytest.raises(MigrationError, match="not created by Signet Desktop"):
        apply_migrations(conn)
    after = sorted(r[0] for r in conn.execute("SELECT name FROM sqlite_master"))
    assert before == after


def test_a_first_start_stopped_between_the_bookkeeping_tables_is_resumed(tmp_path: Path) -> None:
    """Only our schema_migrations exists (a stop mid-creation by an older build): carry on."""
    path = tmp_path / "memories.db"
    conn, _ = connect(path)
    conn.execute(BOOKKEEPING.split(";")[0])
    applied = apply_migrations(conn)
    assert applied == [m.version for m in load_migrations()]
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "schema_migrations_audit" in names
