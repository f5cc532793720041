"""The PostgreSQL adapter's statement translation and rows, and the migrations' numbering."""

from __future__ import annotations

import subprocess
import sys

import pytest

from signet_desktop.storage.dialect import dialect_of, is_postgres
from signet_desktop.storage.migrate import Migration, MigrationError, load_migrations
from signet_desktop.storage.postgres.connect import PgConnection, PgRow, translate
from signet_desktop.storage.postgres.migrate import check_in_step, load_postgres_migrations


def test_named_parameters_become_psycopg_placeholders() -> None:
    assert translate("SELECT * FROM t WHERE a = :a AND (:b IS NULL OR b = :b)") == (
        "SELECT * FROM t WHERE a = %(a)s AND (%(b)s IS NULL OR b = %(b)s)"
    )


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT ':not_a_param', x::text FROM t", "SELECT ':not_a_param', x::text FROM t"),
        ('SELECT "odd:name" FROM t', 'SELECT "odd:name" FROM t'),
        (
            "SELECT 1 -- :comment\nFROM t WHERE a = :a",
            "SELECT 1 -- :comment\nFROM t WHERE a = %(a)s",
        ),
        (
            "SELECT 'it''s :x' WHERE b LIKE '%' || :b",
            "SELECT 'it''s :x' WHERE b LIKE '%%' || %(b)s",
        ),
        ("SELECT CAST(:q AS vector(3))", "SELECT CAST(%(q)s AS vector(3))"),
    ],
)
def test_literals_names_comments_and_casts_are_left_alone(sql: str, expected: str) -> None:
    assert translate(sql) == expected


def test_sqlite_instr_becomes_strpos_outside_literals() -> None:
    sql = "SELECT 'instr(x)' WHERE instr(lower(a), :t) > 0 AND myinstr(a) AND INSTR(b, 'c')"
    assert translate(sql) == (
        "SELECT 'instr(x)' WHERE strpos(lower(a), %(t)s) > 0 AND myinstr(a) AND strpos(b, 'c')"
    )


def test_a_row_reads_by_position_and_by_name() -> None:
    row = PgRow(("m1", 0.5), {"id": 0, "importance": 1})
    assert (row[0], row["id"], row["importance"], row[-1]) == ("m1", "m1", 0.5, 0.5)
    assert row.keys() == ["id", "importance"] and list(row) == ["m1", 0.5] and len(row) == 2
    with pytest.raises(KeyError):
        row["absent"]


def test_the_dialect_is_read_from_the_connection() -> None:
    pg = PgConnection.__new__(PgConnection)
    assert dialect_of(pg) == "postgresql" and is_postgres(pg)
    assert dialect_of(object()) == "sqlite" and not is_postgres(object())  # type: ignore[arg-type]


def test_every_postgres_migration_has_its_sqlite_twin() -> None:
    postgres = load_postgres_migrations()
    assert postgres, "no PostgreSQL migrations found"
    check_in_step(postgres, load_migrations())


def test_a_postgres_migration_out_of_step_is_refused() -> None:
    sqlite = load_migrations()
    stray = Migration(1, "not_the_same_name", "SELECT 1;")
    with pytest.raises(MigrationError, match="numbered in step"):
        check_in_step([stray], sqlite)
    ahead = Migration(len(sqlite) + 1, "ahead", "SELECT 1;")
    with pytest.raises(MigrationError, match="no SQLite twin"):
        check_in_step([ahead], sqlite)


def test_the_dialect_module_imports_no_driver() -> None:
    code = (
        "import sys, signet_desktop.storage.dialect, signet_desktop.recall.vector; "
        "print('psycopg' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
