"""A database the daemon refuses is left byte-identical, sidecar files included.

Opening for writing switches a file to WAL (rewriting a rollback-journal header) and
checkpoints a leftover `-wal` when it closes, so every refusal must be decided read-only.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlean

from signet_desktop.storage.connect import DatabaseFileError
from signet_desktop.storage.database import open_database
from signet_desktop.storage.migrate import MigrationError

pytestmark = pytest.mark.migrates  # opens databases through every migration

Mutation = Callable[[sqlean.Connection], None]

# Roughly the head of Signet's own memories.db: its tables, no schema_migrations.name column.
SIGNET_LIKE = """
CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT, checksum TEXT);
CREATE TABLE memories (id TEXT PRIMARY KEY, type TEXT, content TEXT, is_deleted INTEGER);
INSERT INTO schema_migrations VALUES (1, '2025-01-01', 'abc');
INSERT INTO memories VALUES ('m1', 'fact', 'the user prefers tabs', 0);
"""


def _snapshot(directory: Path) -> dict[str, str]:
    """sha256 of every file in `directory` except the WAL index (`-shm`, a shared-memory
    scratch file readers may rebuild), whose presence is checked by name instead."""
    return {
        p.name: "" if p.name.endswith("-shm") else hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.iterdir())
    }


def _ours(directory: Path) -> Path:
    path = directory / "memories.db"
    open_database(path, with_vec=False).close()
    return path


def _rollback_journal(path: Path, mutate: Mutation) -> None:
    """Change our database, then leave it in rollback-journal (DELETE) mode, as a restore
    tool or the sqlite3 shell might."""
    conn = sqlean.connect(str(path), isolation_level=None)
    mutate(conn)
    assert conn.execute("PRAGMA journal_mode = DELETE").fetchone()[0] == "delete"
    conn.close()


def _hot_wal(path: Path, mutate: Mutation, into: Path) -> Path:
    """Copy our database while a change is still only in its `-wal` (a daemon killed mid-run)."""
    conn = sqlean.connect(str(path), isolation_level=None)
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    mutate(conn)
    into.mkdir()
    for suffix in ("", "-wal", "-shm"):
        shutil.copy(path.with_name(path.name + suffix), into / f"memories.db{suffix}")
    conn.close()
    return into / "memories.db"


def _newer(conn: sqlean.Connection) -> None:
    conn.execute(
        "INSERT INTO schema_migrations (version, name, checksum, applied_at) "
        "VALUES (9999, 'from_the_future', 'x', '2030-01-01')"
    )


def _tampered(conn: sqlean.Connection) -> None:
    conn.execute("UPDATE schema_migrations SET checksum = :c WHERE version = 1", {"c": "0" * 64})


def _assert_refused_untouched(path: Path, match: str) -> None:
    before = _snapshot(path.parent)
    with pytest.raises(MigrationError, match=match):
        open_database(path, with_vec=False)
    assert _snapshot(path.parent) == before


def test_foreign_rollback_journal_database_keeps_its_header(tmp_path: Path) -> None:
    path = tmp_path / "memories.db"
    conn = sqlean.connect(str(path), isolation_level=None)
    conn.executescript(SIGNET_LIKE)
    conn.close()
    header = path.read_bytes()[:100]
    assert header[18:20] == b"\x01\x01"  # rollback journal
    _assert_refused_untouched(path, "not created by Signet Desktop")
    assert path.read_bytes()[:100] == header


def test_foreign_wal_database_gains_no_sidecars(tmp_path: Path) -> None:
    path = tmp_path / "memories.db"
    conn = sqlean.connect(str(path), isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.executescript(SIGNET_LIKE)
    conn.close()
    _assert_refused_untouched(path, "not created by Signet Desktop")


@pytest.mark.parametrize(
    ("mutate", "match"),
    [(_newer, "newer"), (_tampered, "checksum mismatch")],
    ids=["newer", "tampered"],
)
def test_refused_rollback_journal_database_is_byte_identical(
    tmp_path: Path, mutate: Mutation, match: str
) -> None:
    path = _ours(tmp_path)
    _rollback_journal(path, mutate)
    _assert_refused_untouched(path, match)


@pytest.mark.parametrize(
    ("mutate", "match"),
    [(_newer, "newer"), (_tampered, "checksum mismatch")],
    ids=["newer", "tampered"],
)
def test_refused_wal_database_is_byte_identical(
    tmp_path: Path, mutate: Mutation, match: str
) -> None:
    path = _ours(tmp_path / "clean")
    conn = sqlean.connect(str(path), isolation_level=None)
    mutate(conn)
    conn.close()  # a clean close: no -wal, no -shm
    _assert_refused_untouched(path, match)
    assert sorted(p.name for p in path.parent.iterdir()) == ["memories.db"]


@pytest.mark.parametrize(
    ("mutate", "match"),
    [(_newer, "newer"), (_tampered, "checksum mismatch")],
    ids=["newer", "tampered"],
)
def test_refusal_seen_only_in_the_wal_does_not_checkpoint_it(
    tmp_path: Path, mutate: Mutation, match: str
) -> None:
    original = _ours(tmp_path / "live")
    path = _hot_wal(original, mutate, tmp_path / "copy")
    assert (path.parent / "memories.db-wal").stat().st_size > 0
    _assert_refused_untouched(path, match)


def test_unreadable_sqlite_file_is_a_file_error_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "memories.db"
    path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4080)
    before = _snapshot(tmp_path)
    with pytest.raises(DatabaseFileError):
        open_database(path, with_vec=False)
    assert _snapshot(tmp_path) == before


def test_an_accepted_database_still_opens_and_migrates(tmp_path: Path) -> None:
    path = _ours(tmp_path)
    _rollback_journal(path, lambda conn: None)
    db = open_database(path, with_vec=False)
    try:
        assert db.applied_migrations == []
        assert db.reader().execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        db.close()
