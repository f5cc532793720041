"""The workspace's memory directory and database files are owner-only from the start."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.storage.database import open_database


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def loose_umask() -> Iterator[None]:
    """The common 022 umask, under which a default mkdir gives 0755 and a file 0644."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


@pytest.mark.usefixtures("loose_umask")
def test_memory_dir_database_and_sidecars_are_owner_only(tmp_path: Path) -> None:
    paths = WorkspacePaths.for_root(tmp_path / "ws")
    paths.ensure()
    assert _mode(paths.memory_dir) == 0o700
    assert _mode(paths.daemon_dir) == 0o700
    db = open_database(paths.db_path, with_vec=False)
    try:
        with db.write() as conn:  # the -wal and -shm exist while a connection is open
            conn.execute("CREATE TABLE scratch (x INTEGER)")
        db.reader().execute("SELECT COUNT(*) FROM scratch").fetchone()
        sidecars = [paths.db_path.with_name(paths.db_path.name + s) for s in ("-wal", "-shm")]
        assert all(p.exists() for p in sidecars)
        assert {p.name: _mode(p) for p in (paths.db_path, *sidecars)} == {
            "memories.db": 0o600,
            "memories.db-wal": 0o600,
            "memories.db-shm": 0o600,
        }
    finally:
        db.close()


@pytest.mark.usefixtures("loose_umask")
def test_database_outside_a_workspace_gets_a_private_directory(tmp_path: Path) -> None:
    path = tmp_path / "new" / "deeper" / "memories.db"
    open_database(path, with_vec=False).close()
    assert _mode(path.parent) == 0o700
    assert _mode(path) == 0o600


def test_existing_modes_are_left_alone(tmp_path: Path) -> None:
    paths = WorkspacePaths.for_root(tmp_path)
    paths.memory_dir.mkdir(mode=0o750)
    os.chmod(paths.memory_dir, 0o750)  # a choice the owner made; we do not override it
    paths.ensure()
    assert _mode(paths.memory_dir) == 0o750
