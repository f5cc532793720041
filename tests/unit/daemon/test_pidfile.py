"""The workspace lock and pid file: one daemon per workspace, stale files never block."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from signet_desktop.daemon.pidfile import (
    AlreadyRunning,
    PidInfo,
    WorkspaceLock,
    foreign_daemon_pid,
    read_pid_file,
    remove_pid_file,
    write_pid_file,
)


def test_pid_file_round_trips_as_signet_json(tmp_path: Path) -> None:
    path = tmp_path / "pid"
    write_pid_file(path, PidInfo(123, 3850, "127.0.0.1", "2025-01-01T00:00:00.000Z"))
    assert json.loads(path.read_text()) == {
        "pid": 123,
        "port": 3850,
        "host": "127.0.0.1",
        "startedAt": "2025-01-01T00:00:00.000Z",
    }
    assert read_pid_file(path) == PidInfo(123, 3850, "127.0.0.1", "2025-01-01T00:00:00.000Z")
    assert oct(path.stat().st_mode & 0o777) == oct(0o600)
    assert [p.name for p in tmp_path.iterdir()] == ["pid"]  # no temp file left behind


@pytest.mark.parametrize("text", ["", "12345\n", "{", '{"pid": 1}', '{"pid": "x", "port": 1}'])
def test_unreadable_pid_files_read_as_none(tmp_path: Path, text: str) -> None:
    path = tmp_path / "pid"
    path.write_text(text)
    assert read_pid_file(path) is None
    assert read_pid_file(tmp_path / "missing") is None


def test_remove_only_removes_our_own_pid_file(tmp_path: Path) -> None:
    path = tmp_path / "pid"
    write_pid_file(path, PidInfo(99999, 1, "h", ""))
    remove_pid_file(path, os.getpid())
    assert path.exists()
    write_pid_file(path, PidInfo(os.getpid(), 1, "h", ""))
    remove_pid_file(path, os.getpid())
    assert not path.exists()
    remove_pid_file(path, os.getpid())  # missing is fine


def test_second_lock_reports_the_holders_port(tmp_path: Path) -> None:
    first = WorkspaceLock(tmp_path, tmp_path / "pid")
    first.acquire()
    write_pid_file(tmp_path / "pid", PidInfo(4242, 3999, "127.0.0.1", ""))
    second = WorkspaceLock(tmp_path, tmp_path / "pid")
    with pytest.raises(AlreadyRunning) as caught:
        second.acquire(wait_for_pid=0)
    assert caught.value.describe() == ("Signet Desktop is already running on port 3999 (pid 4242)")
    assert not second.held
    first.release()
    second.acquire(wait_for_pid=0)
    assert second.held
    second.release()
    second.release()  # idempotent


def test_holder_without_pid_file_is_still_refused(tmp_path: Path) -> None:
    first = WorkspaceLock(tmp_path, tmp_path / "pid")
    first.acquire()
    try:
        with pytest.raises(AlreadyRunning, match="already running for this workspace"):
            WorkspaceLock(tmp_path, tmp_path / "pid").acquire(wait_for_pid=0.1)
    finally:
        first.release()


def test_lock_of_a_killed_process_is_free_again(tmp_path: Path) -> None:
    """flock dies with its process: a crash leaves a stale pid file but never a stuck lock."""
    script = (
        "import sys, pathlib, os\n"
        "from signet_desktop.daemon.pidfile import WorkspaceLock, PidInfo, write_pid_file\n"
        "d = pathlib.Path(sys.argv[1])\n"
        "WorkspaceLock(d, d / 'pid').acquire()\n"
        "write_pid_file(d / 'pid', PidInfo(os.getpid(), 1, 'h', ''))\n"
        "os._exit(0)\n"  # no cleanup at all
    )
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=True, timeout=60)
    assert read_pid_file(tmp_path / "pid") is not None  # stale file left behind
    lock = WorkspaceLock(tmp_path, tmp_path / "pid")
    lock.acquire(wait_for_pid=0)
    assert lock.held
    lock.release()


def test_signets_own_plain_pid_file_is_detected_only_while_alive(tmp_path: Path) -> None:
    path = tmp_path / "pid"
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        path.write_text(f"{sleeper.pid}\n")
        assert foreign_daemon_pid(path) == sleeper.pid
    finally:
        sleeper.kill()
        sleeper.wait(30)
    assert foreign_daemon_pid(path) is None  # dead: stale
    path.write_text(str(os.getpid()))
    assert foreign_daemon_pid(path) is None  # ourselves
    write_pid_file(path, PidInfo(sleeper.pid, 1, "h", ""))
    assert foreign_daemon_pid(path) is None  # JSON: one of ours (stale, we hold the lock)
    assert foreign_daemon_pid(tmp_path / "missing") is None
