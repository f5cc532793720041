"""The database handle: migrations at open, write ownership, the provider guard, bad files."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from signet_desktop.storage.connect import MMAP_BYTES, DatabaseFileError
from signet_desktop.storage.database import Database, open_database
from signet_desktop.storage.guard import (
    ProviderCallInWriteTransaction,
    assert_provider_call_allowed,
    in_write_transaction,
)

pytestmark = pytest.mark.migrates  # opens databases through every migration


def test_pragmas_are_set_on_every_connection(db: Database) -> None:
    for conn in (db.reader(),):
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 1000
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
        assert conn.execute("PRAGMA mmap_size").fetchone()[0] == MMAP_BYTES == 0  # see connect.py
    with db.write() as conn:
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_sqlite_vec_and_fts5_are_loaded(db: Database) -> None:
    assert db.vec.available, db.vec.error
    assert db.reader().execute("SELECT vec_version()").fetchone()[0].startswith("v")


def test_provider_guard_fires_inside_a_write_transaction(db: Database) -> None:
    assert_provider_call_allowed("embedding:test")  # fine outside
    with db.write():
        assert in_write_transaction()
        with pytest.raises(ProviderCallInWriteTransaction, match="embedding:test"):
            assert_provider_call_allowed("embedding:test")
    assert not in_write_transaction()


def test_guard_mark_is_per_thread(db: Database) -> None:
    seen: list[bool] = []
    with db.write():
        worker = threading.Thread(target=lambda: seen.append(in_write_transaction()))
        worker.start()
        worker.join()
    assert seen == [False]


def test_failed_write_rolls_back_everything(db: Database) -> None:
    with pytest.raises(RuntimeError), db.write() as conn:
        conn.execute(
            "INSERT INTO memory_jobs (id, job_type, created_at, updated_at) "
            "VALUES ('j1', 'x', 'now', 'now')"
        )
        raise RuntimeError("crash mid-transaction")
    assert db.reader().execute("SELECT COUNT(*) FROM memory_jobs").fetchone()[0] == 0


def test_nested_write_joins_outer_and_rolls_back_inner_only(db: Database) -> None:
    insert = (
        "INSERT INTO memory_jobs (id, job_type, created_at, updated_at) "
        "VALUES (:id, 'x', 'now', 'now')"
    )
    with db.write() as conn:
        conn.execute(insert, {"id": "outer"})
        with pytest.raises(ValueError), db.write() as inner:
            inner.execute(insert, {"id": "inner"})
            raise ValueError("inner fails")
    ids = [r[0] for r in db.reader().execute("SELECT id FROM memory_jobs").fetchall()]
    assert ids == ["outer"]


def test_reads_see_committed_writes_from_another_thread(db: Database) -> None:
    def write() -> None:
        with db.write() as conn:
            conn.execute(
                "INSERT INTO memory_jobs (id, job_type, created_at, updated_at) "
                "VALUES ('t', 'x', 'now', 'now')"
            )

    worker = threading.Thread(target=write)
    worker.start()
    worker.join()
    assert db.reader().execute("SELECT COUNT(*) FROM memory_jobs").fetchone()[0] == 1


def test_readers_cannot_write(db: Database) -> None:
    with pytest.raises(Exception, match=r"readonly|read-only|attempt to write"):
        db.reader().execute(
            "INSERT INTO memory_jobs (id, job_type, created_at, updated_at) "
            "VALUES ('r', 'x', 'now', 'now')"
        )


def test_a_file_that_is_not_sqlite_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "memories.db"
    original = b"this is a text file, not a database\n" * 50
    path.write_bytes(original)
    with pytest.raises(DatabaseFileError, match="not a SQLite database"):
        open_database(path)
    assert path.read_bytes() == original
    assert not (tmp_path / "memories.db-wal").exists()


def test_reopen_applies_nothing_new_and_keeps_data(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    first = open_database(path)
    assert first.applied_migrations[0] == 1
    with first.write() as conn:
        conn.execute(
            "INSERT INTO memory_jobs (id, job_type, created_at, updated_at) "
            "VALUES ('keep', 'x', 'now', 'now')"
        )
    first.close()
    second = open_database(path)
    assert second.applied_migrations == []
    assert second.reader().execute("SELECT id FROM memory_jobs").fetchone()[0] == "keep"
    second.close()


def test_database_still_opens_without_sqlite_vec(tmp_path: Path) -> None:
    database = open_database(tmp_path / "m.db", with_vec=False)
    assert not database.vec.available
    assert database.vec.error
    database.close()


def test_a_failed_commit_leaves_no_transaction_open(db: Database) -> None:
    # A deferred foreign key is checked at COMMIT: the COMMIT fails, and SQLite keeps the
    # transaction open. The handle must end it, or the next writer would join a transaction
    # nobody commits (and its acknowledged write would vanish at the next rollback).
    with db.write() as conn:
        conn.execute("CREATE TABLE parent (id INTEGER PRIMARY KEY)")
        conn.execute(
            "CREATE TABLE child "
            "(parent INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)"
        )
    with pytest.raises(Exception, match="FOREIGN KEY"), db.write() as conn:
        conn.execute("INSERT INTO child VALUES (42)")
    with db.write() as conn:  # a new transaction: the failed one is gone, rolled back
        conn.execute("INSERT INTO parent VALUES (1)")
    assert db.reader().execute("SELECT COUNT(*) FROM child").fetchone()[0] == 0
    assert db.reader().execute("SELECT COUNT(*) FROM parent").fetchone()[0] == 1
