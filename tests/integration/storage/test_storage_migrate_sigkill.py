"""`signet storage migrate` killed with SIGKILL mid-copy (a real process, no seam), then run
again: it resumes from the target's record and ends verified, each row once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from signet_desktop.storage.errors import DATABASE_ERRORS
from signet_desktop.storage.postgres.connect import connect_postgres
from tests.integration.storage.transfer_workspace import build_workspace, file_digest

pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[3]
DONE = "SELECT rows_done FROM storage_transfer_progress WHERE table_name = 'memories'"


def start(workspace: Path, target: str) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "signet_desktop.cli.main", "storage", "migrate"]
    return subprocess.Popen(
        [*argv, "--to", target, "--batch-size", "1"],
        cwd=ROOT,
        env={**os.environ, "SIGNET_WORKSPACE": str(workspace)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def memories_done(url: str) -> int:
    conn = connect_postgres(url)
    try:
        row = conn.execute(DONE).fetchone()
    except DATABASE_ERRORS:  # the record is not there yet
        return 0
    finally:
        conn.close()
    return int(row[0]) if row else 0


def test_a_sigkilled_copy_resumes_and_verifies(tmp_path: Path, pg_empty_url: str) -> None:
    build_workspace(tmp_path, extra=150)
    db = tmp_path / "memory" / "memories.db"
    before = file_digest(db)
    process = start(tmp_path, pg_empty_url)
    deadline = time.monotonic() + 120
    while memories_done(pg_empty_url) < 20:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.communicate()
    stopped_at = memories_done(pg_empty_url)
    assert 20 <= stopped_at < 156

    again = start(tmp_path, pg_empty_url)
    out, err = again.communicate(timeout=240)
    assert again.returncode == 0, err
    assert "resuming the unfinished copy" in err
    assert f"memories: {stopped_at + 1}/156 rows" in err  # went on after the last committed
    assert "copied and verified" in out
    assert file_digest(db) == before
    conn = connect_postgres(pg_empty_url)
    try:
        counts = "SELECT COUNT(*), COUNT(DISTINCT id) FROM memories"
        assert tuple(conn.execute(counts).fetchone()) == (156, 156)
    finally:
        conn.close()
