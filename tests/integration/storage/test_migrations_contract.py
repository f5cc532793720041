"""Both migration runners refuse the same things the same way, leaving the database as it was:
a changed checksum, a newer schema; and of two runners started at once, one applies."""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

import pytest
from support.backends import Backend, connector, runner

from signet_desktop.storage.connect import Connection
from signet_desktop.storage.migrate import MigrationError


def snapshot(conn: Connection) -> tuple[list[tuple[object, ...]], int]:
    """What a refusal must not change: the recorded migrations and the audit's length."""
    recorded = conn.execute(
        "SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version"
    ).fetchall()
    audits = conn.execute("SELECT COUNT(*) FROM schema_migrations_audit").fetchone()[0]
    return [tuple(r) for r in recorded], int(audits)


def test_a_changed_applied_migration_is_refused(backend: Backend) -> None:
    load, apply = runner(backend.name)
    known = load()
    before = snapshot(backend.conn)
    changed = [dataclasses.replace(known[0], sql=known[0].sql + "\n-- edited\n"), *known[1:]]
    with pytest.raises(MigrationError, match="checksum mismatch"):
        apply(backend.conn, changed)
    assert snapshot(backend.conn) == before
    assert apply(backend.conn, known) == []


def test_a_newer_schema_is_refused_untouched(backend: Backend) -> None:
    load, apply = runner(backend.name)
    known = load()
    extra = dataclasses.replace(
        known[-1],
        version=len(known) + 1,
        name="from_the_future",
        sql="CREATE TABLE future_things (id INTEGER PRIMARY KEY);",
    )
    assert apply(backend.conn, [*known, extra]) == [len(known) + 1]
    before = snapshot(backend.conn)
    with pytest.raises(MigrationError, match="newer Signet Desktop"):
        apply(backend.conn, known)
    assert snapshot(backend.conn) == before
    assert backend.conn.execute("SELECT COUNT(*) FROM future_things").fetchone()[0] == 0


@pytest.mark.postgres
def test_two_runners_at_once_on_an_empty_postgres_database_apply_once(pg_empty_url: str) -> None:
    load, apply = runner("postgres")
    known = load()
    open_conn = connector("postgres", Path("unused"), pg_empty_url)
    conns = [open_conn() for _ in range(2)]
    start = threading.Barrier(2)
    results: list[list[int]] = []
    errors: list[BaseException] = []

    def run(conn: Connection) -> None:
        start.wait()
        try:
            results.append(apply(conn, known))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(conn,)) for conn in conns]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert errors == []
        assert sorted(results, key=len) == [[], [m.version for m in known]]
        recorded, audits = snapshot(conns[0])
        assert [r[0] for r in recorded] == [m.version for m in known] and audits == len(known)
    finally:
        for conn in conns:
            conn.close()


@pytest.mark.postgres
def test_a_foreign_postgres_schema_is_refused_untouched(pg_empty_url: str) -> None:
    load, apply = runner("postgres")
    conn = connector("postgres", Path("unused"), pg_empty_url)()
    try:
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        with pytest.raises(MigrationError, match="not created by Signet Desktop"):
            apply(conn, load())
        tables = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        ).fetchall()
        assert [r[0] for r in tables] == ["notes"]
    finally:
        conn.close()
