"""One daemon per workspace: an exclusive lock on `.daemon/daemon.lock` and the `.daemon/pid` file.

The lock is an `flock` held for the life of the process, so a crash (even SIGKILL) releases it
and a stale pid file never blocks the next start. The pid file is JSON
(`{pid, port, host, startedAt}`) written atomically once the port is bound; a second instance
reads it to say where the first one listens.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

LOCK_FILE_NAME = "daemon.lock"
# A second instance may start while the first has the lock but has not bound its port yet.
PID_WAIT_SECONDS = 3.0
_PID_POLL_SECONDS = 0.05


@dataclass(frozen=True, slots=True)
class PidInfo:
    """What `.daemon/pid` says about the running daemon."""

    pid: int
    port: int
    host: str
    started_at: str

    def to_json(self) -> dict[str, object]:
        return {"pid": self.pid, "port": self.port, "host": self.host, "startedAt": self.started_at}


class AlreadyRunning(Exception):
    """Another process holds the workspace lock; `info` is its pid file, when readable."""

    def __init__(self, lock_path: Path, info: PidInfo | None) -> None:
        self.lock_path = lock_path
        self.info = info
        super().__init__(self.describe())

    def describe(self) -> str:
        """The user-facing sentence."""
        if self.info is None:
            return (
                "Signet Desktop is already running for this workspace "
                f"(lock {self.lock_path} is held; it may still be starting)"
            )
        return f"Signet Desktop is already running on port {self.info.port} (pid {self.info.pid})"


def read_pid_file(path: Path) -> PidInfo | None:
    """Parse a pid file; None when it is missing, partial or not ours."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return PidInfo(
            pid=int(data["pid"]),
            port=int(data["port"]),
            host=str(data["host"]),
            started_at=str(data.get("startedAt", "")),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def foreign_daemon_pid(path: Path) -> int | None:
    """The live pid in a pid file that Signet's own daemon wrote (a bare number), if any.

    Signet (the Bun daemon) keeps a plain-number `.daemon/pid` in the same workspace and does
    not take our lock; two daemons writing one database must not happen. Call this while
    holding the lock: a JSON pid file then can only be a stale one of ours.
    """
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not text.isdigit():
        return None
    pid = int(text)
    if pid <= 0 or pid == os.getpid():
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:  # alive, owned by someone else
        return pid
    return pid


def write_pid_file(path: Path, info: PidInfo) -> None:
    """Write the pid file atomically (temp file + rename), readable by the owner only."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(info.to_json(), handle)
        handle.write("\n")
    os.replace(tmp, path)


def remove_pid_file(path: Path, pid: int) -> None:
    """Remove the pid file if it still names `pid` (never another process's file)."""
    info = read_pid_file(path)
    if info is not None and info.pid == pid:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


class WorkspaceLock:
    """The exclusive, non-blocking workspace lock. Use `acquire()` then `release()`."""

    def __init__(self, daemon_dir: Path, pid_file: Path) -> None:
        self.path = daemon_dir / LOCK_FILE_NAME
        self.pid_file = pid_file
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self, wait_for_pid: float = PID_WAIT_SECONDS) -> None:
        """Take the lock or raise AlreadyRunning (waiting briefly for the holder's pid file)."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise AlreadyRunning(self.path, self._holder_info(wait_for_pid)) from None
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def _holder_info(self, wait: float) -> PidInfo | None:
        deadline = time.monotonic() + wait
        while True:
            info = read_pid_file(self.pid_file)
            if info is not None or time.monotonic() >= deadline:
                return info
            time.sleep(_PID_POLL_SECONDS)

    def release(self) -> None:
        """Drop the lock (idempotent). The lock file stays; its existence means nothing."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
