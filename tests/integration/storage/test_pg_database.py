"""The database handle's contract, one test body per backend: SQLite's `Database` and
`PgDatabase` (storage/postgres/database.py) commit, roll back, nest, guard and close alike."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

import pytest
from support.postgres_server import resume_postgres, start_postgres

from signet_desktop.storage.connect import Connection
from signet_desktop.storage.database import open_database
from signet_desktop.storage.errors import (
    INTEGRITY_ERRORS,
    DatabaseError,
    DatabaseUnavailable,
    is_unique_violation,
    recoverable,
)
from signet_desktop.storage.guard import (
    ProviderCallInWriteTransaction,
    assert_provider_call_allowed,
)
from signet_desktop.storage.postgres.connect import connect_postgres
from signet_desktop.storage.postgres.database import PgDatabase
from signet_desktop.storage.postgres.migrate import load_postgres_migrations
from signet_desktop.storage.store import DatabaseHandle

PROBE = "CREATE TABLE probe (id INTEGER PRIMARY KEY, note TEXT NOT NULL)"
# A foreign key checked at COMMIT, on both backends.
NODES = (
    "CREATE TABLE node (id INTEGER PRIMARY KEY,"
    " parent INTEGER REFERENCES node(id) DEFERRABLE INITIALLY DEFERRED)"
)

EVERY_VERSION = [m.version for m in load_postgres_migrations()]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def handle(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[DatabaseHandle]:
    """An open database of either kind with the `probe` and `node` tables."""
    opened: DatabaseHandle
    if request.param == "postgres":
        opened = PgDatabase(request.getfixturevalue("pg_url"))
    else:
        opened = open_database(tmp_path / "memory" / "memories.db")
    with opened.maintenance() as conn:
        conn.execute(PROBE)
        conn.execute(NODES)
    yield opened
    opened.close()


def notes(db: DatabaseHandle) -> list[str]:
    return [str(r["note"]) for r in db.reader().execute("SELECT note FROM probe ORDER BY id")]


def insert(conn: Connection, row_id: int, note: str) -> None:
    conn.execute("INSERT INTO probe (id, note) VALUES (:id, :note)", {"id": row_id, "note": note})


def test_a_write_commits_and_a_reader_sees_it(handle: DatabaseHandle) -> None:
    with handle.write() as conn:
        insert(conn, 1, "one")
        assert conn.in_transaction
    assert notes(handle) == ["one"]
    assert handle.ping()


def test_an_exception_rolls_the_whole_write_back(handle: DatabaseHandle) -> None:
    with pytest.raises(ValueError, match="stop"), handle.write() as conn:
        insert(conn, 1, "one")
        insert(conn, 2, "two")
        raise ValueError("stop")
    assert notes(handle) == []
    with handle.write() as conn:  # the connection was left usable
        insert(conn, 3, "three")
    assert notes(handle) == ["three"]


def test_a_nested_write_that_fails_rolls_back_only_its_own_part(handle: DatabaseHandle) -> None:
    with handle.write() as outer:
        insert(outer, 1, "outer")
        with pytest.raises(ValueError), handle.write() as inner:
            assert inner is outer  # the same transaction, joined through a SAVEPOINT
            insert(inner, 2, "inner")
            raise ValueError("undo the inner part")
        with handle.write() as inner:
            insert(inner, 3, "kept inner")
    assert notes(handle) == ["outer", "kept inner"]


def test_a_nested_constraint_failure_leaves_the_outer_write_usable(handle: DatabaseHandle) -> None:
    """On PostgreSQL the failed statement aborted the transaction; the savepoint undoes that."""
    with handle.write() as outer:
        insert(outer, 1, "one")
        with pytest.raises(INTEGRITY_ERRORS), handle.write() as inner:
            insert(inner, 1, "the same id")
        insert(outer, 2, "two")
    assert notes(handle) == ["one", "two"]


def test_a_commit_refused_by_a_deferred_constraint_is_rolled_back(handle: DatabaseHandle) -> None:
    with pytest.raises(INTEGRITY_ERRORS), handle.write() as conn:
        conn.execute("INSERT INTO node (id, parent) VALUES (1, 99)")  # checked at COMMIT
        insert(conn, 1, "lost with the commit")
    assert notes(handle) == []
    with handle.write() as conn:  # not inside the failed transaction
        insert(conn, 2, "next")
        assert conn.execute("SELECT COUNT(*) FROM node").fetchone()[0] == 0
    assert notes(handle) == ["next"]


def test_a_provider_call_inside_a_write_raises(handle: DatabaseHandle) -> None:
    assert_provider_call_allowed("embed")  # outside: allowed
    with pytest.raises(ProviderCallInWriteTransaction), handle.write():
        assert_provider_call_allowed("embed")
    with handle.write(), handle.write(), pytest.raises(ProviderCallInWriteTransaction):
        assert_provider_call_allowed("embed")  # nested too
    assert_provider_call_allowed("embed")  # the mark is gone after the block


def test_a_unique_violation_reads_the_same_on_both(handle: DatabaseHandle) -> None:
    with handle.write() as conn:
        insert(conn, 1, "one")
    with pytest.raises(INTEGRITY_ERRORS) as caught, handle.write() as conn:
        insert(conn, 1, "again")
    assert is_unique_violation(caught.value)
    with pytest.raises(INTEGRITY_ERRORS) as caught, handle.write() as conn:
        conn.execute("INSERT INTO probe (id) VALUES (2)")  # NOT NULL, not unique
    assert not is_unique_violation(caught.value)


def test_recoverable_keeps_the_transaction_going_after_a_caught_error(
    handle: DatabaseHandle,
) -> None:
    with handle.write() as conn:
        insert(conn, 1, "one")
        try:
            with recoverable(conn):
                insert(conn, 1, "the same id")
        except INTEGRITY_ERRORS:
            insert(conn, 2, "after the refusal")
    assert notes(handle) == ["one", "after the refusal"]


def test_concurrent_writers_keep_every_acknowledged_write(handle: DatabaseHandle) -> None:
    """Four threads, 25 writes each: every acknowledged row is there, and a read-then-write
    inside `write()` loses no update (writers of one process are serialised on both)."""
    with handle.write() as conn:
        insert(conn, 0, "0")  # a counter, read and written back by every transaction
    acknowledged: list[int] = []
    lock = threading.Lock()
    start = threading.Barrier(4, timeout=30)

    def writer(worker: int) -> None:
        start.wait()
        for n in range(25):
            row_id = worker * 1000 + n + 1
            with handle.write() as conn:
                insert(conn, row_id, f"w{worker}")
                count = int(conn.execute("SELECT note FROM probe WHERE id = 0").fetchone()[0])
                conn.execute("UPDATE probe SET note = :n WHERE id = 0", {"n": str(count + 1)})
            with lock:
                acknowledged.append(row_id)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(acknowledged) == 100
    rows = handle.reader().execute("SELECT id FROM probe WHERE id > 0").fetchall()
    assert sorted(int(r[0]) for r in rows) == sorted(acknowledged)
    assert handle.reader().execute("SELECT note FROM probe WHERE id = 0").fetchone()[0] == "100"


def test_close_refuses_further_use(handle: DatabaseHandle) -> None:
    handle.close()
    handle.close()  # twice is harmless
    with pytest.raises(RuntimeError, match="closed"), handle.write():
        pass
    with pytest.raises(RuntimeError, match="closed"):
        handle.reader()
    assert not handle.ping()


# PostgreSQL only: what SQLite has no counterpart for.


@pytest.mark.postgres
def test_a_caught_error_without_a_savepoint_fails_the_write_instead_of_losing_it(
    pg_url: str,
) -> None:
    """PostgreSQL answers COMMIT in an aborted transaction with a silent ROLLBACK; the
    handle raises instead, so the caller never believes the write was kept."""
    db = PgDatabase(pg_url)
    try:
        with db.maintenance() as conn:
            conn.execute(PROBE)
        with pytest.raises(DatabaseError, match="aborted"), db.write() as conn:
            insert(conn, 1, "one")
            with suppress(*INTEGRITY_ERRORS):
                insert(conn, 1, "the same id")
        assert notes(db) == []
        with db.write() as conn:
            insert(conn, 2, "next")
        assert notes(db) == ["next"]
    finally:
        db.close()


@pytest.mark.postgres
def test_migrations_at_open_and_pgvector(pg_empty_url: str) -> None:
    first = PgDatabase(pg_empty_url)
    try:
        assert first.applied_migrations == EVERY_VERSION
        assert first.vec_available and first.vec.version is not None
    finally:
        first.close()
    again = PgDatabase(pg_empty_url)
    try:
        assert again.applied_migrations == []
        assert again.reader().execute("SELECT COUNT(*) FROM memories").fetchone()[0] == 0
    finally:
        again.close()


@pytest.mark.postgres
def test_the_reader_is_read_only_and_holds_no_transaction(pg_url: str) -> None:
    db = PgDatabase(pg_url)
    try:
        with pytest.raises(DatabaseError, match="read-only"):
            db.reader().execute("DELETE FROM memories")
        with pytest.raises(RuntimeError, match="transaction belongs in write"):
            db.reader().execute("BEGIN")
        assert not db.reader().in_transaction
    finally:
        db.close()


@pytest.mark.postgres
def test_parallel_writers_without_the_process_lock_keep_every_acknowledged_write(
    pg_url: str,
) -> None:
    """`serialised_writes=False`: several transactions at once, each row written once."""
    db = PgDatabase(pg_url, serialised_writes=False, write_pool_size=4)
    acknowledged: list[int] = []
    lock = threading.Lock()
    inside = threading.Barrier(4, timeout=30)
    try:
        with db.maintenance() as conn:
            conn.execute(PROBE)

        def writer(worker: int) -> None:
            for n in range(20):
                with db.write() as conn:
                    insert(conn, worker * 1000 + n, f"w{worker}")
                    if n == 0:
                        inside.wait()  # four transactions open at the same moment
                with lock:
                    acknowledged.append(worker * 1000 + n)

        threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        rows = db.reader().execute("SELECT id FROM probe").fetchall()
        assert sorted(int(r[0]) for r in rows) == sorted(acknowledged)
        assert len(acknowledged) == 80
    finally:
        db.close()


def server_connections(url: str, database: str) -> int:
    admin = connect_postgres(url)
    try:
        row = admin.execute(
            "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = :db AND pid <> pg_backend_pid()",
            {"db": database},
        ).fetchone()
        return int(row[0])
    finally:
        admin.close()


@pytest.mark.postgres
def test_close_closes_the_pool(pg_url: str) -> None:
    db = PgDatabase(pg_url)
    database = pg_url.rsplit("/", 1)[1]
    with db.write() as conn:
        conn.execute("SELECT 1")
    assert db.ping()
    assert db.open_connections == 2  # one writer, one reader, both idle in their pools
    assert server_connections(pg_url, database) == 2
    db.close()
    assert db.open_connections == 0
    deadline = time.monotonic() + 10  # a backend leaves pg_stat_activity as it exits, just after
    while server_connections(pg_url, database) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server_connections(pg_url, database) == 0


@pytest.mark.postgres
@pytest.mark.slow
def test_ping_follows_a_server_restart_and_the_handle_reconnects() -> None:
    """Stopped: ping false, a write refused as unavailable. Started again on the same port:
    ping true, and reads and writes work on new connections without reopening the handle."""
    server = start_postgres()
    try:
        db = PgDatabase(server.url(), connect_timeout_s=2)
        with db.maintenance() as conn:
            conn.execute(PROBE)
        with db.write() as conn:
            insert(conn, 1, "before")
        assert db.ping()
        server.halt()
        assert not db.ping()
        with pytest.raises(DatabaseUnavailable), db.write() as conn:
            insert(conn, 2, "while down")
        server = resume_postgres(server)
        assert db.ping()
        with db.write() as conn:
            insert(conn, 3, "after")
        assert notes(db) == ["before", "after"]
        db.close()
    finally:
        server.stop()


@pytest.mark.postgres
@pytest.mark.slow
def test_a_restart_between_statements_is_invisible_to_the_next_write() -> None:
    """Pooled connections lost to the restart are replaced at BEGIN, before the caller runs."""
    server = start_postgres()
    try:
        db = PgDatabase(server.url())
        with db.maintenance() as conn:
            conn.execute(PROBE)
        with db.write() as conn:
            insert(conn, 1, "before")
        assert notes(db) == ["before"]  # a read connection idles in the pool too
        server.halt()
        server = resume_postgres(server)
        with db.write() as conn:  # no ping first: the dead pooled connection is found here
            insert(conn, 2, "after")
        assert notes(db) == ["before", "after"]
        db.close()
    finally:
        server.stop()


@pytest.mark.postgres
@pytest.mark.slow
def test_a_write_that_loses_its_server_mid_way_raises_and_the_next_one_reconnects() -> None:
    server = start_postgres()
    try:
        db = PgDatabase(server.url(), connect_timeout_s=2)
        with db.maintenance() as conn:
            conn.execute(PROBE)
        with pytest.raises(DatabaseUnavailable), db.write() as conn:
            insert(conn, 1, "never acknowledged")
            server.halt()
            insert(conn, 2, "on a lost connection")
        server = resume_postgres(server)
        with db.write() as conn:
            insert(conn, 3, "after")
        assert notes(db) == ["after"]
        assert db.open_connections == 2  # the lost writer was closed, not kept
        db.close()
    finally:
        server.stop()
