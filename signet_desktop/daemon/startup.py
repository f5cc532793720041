"""Background start-up work (model loading and the like) that must not delay `/health`.

Each task runs once in its own daemon thread after the server is listening; its state
(`pending` -> `running` -> `done` | `failed`, with the error text) is published on the status
board under `"startup"` so `/api/status` shows what is still warming up.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from signet_desktop.service.status import StatusBoard

log = logging.getLogger(__name__)

STATUS_KEY = "startup"
TaskState = Literal["pending", "running", "done", "failed"]


@dataclass(frozen=True, slots=True)
class TaskStatus:
    """One task's state as `/api/status` shows it."""

    state: TaskState
    error: str | None = None
    duration_ms: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"state": self.state, "error": self.error, "durationMs": self.duration_ms}


class StartupTasks:
    """Named one-shot jobs: registered any time, started together once the server is up."""

    def __init__(self, board: StatusBoard) -> None:
        self._board = board
        self._lock = threading.Lock()
        self._pending: list[tuple[str, Callable[[], object]]] = []
        self._status: dict[str, TaskStatus] = {}
        self._threads: list[threading.Thread] = []
        self._started = False
        self._closing = False
        with self._lock:
            self._publish_locked()

    def add(self, name: str, fn: Callable[[], object]) -> None:
        """Register `fn`; it runs at `start()`, or at once if the server is already up."""
        with self._lock:
            if name in self._status:
                raise ValueError(f"start-up task {name!r} is already registered")
            self._status[name] = TaskStatus("pending")
            self._publish_locked()
            run_now = self._started
            if not run_now:
                self._pending.append((name, fn))
        if run_now:
            self._spawn(name, fn)

    def start(self) -> None:
        """Start every pending task (idempotent)."""
        with self._lock:
            if self._started:
                return
            self._started = True
            pending, self._pending = self._pending, []
        for name, fn in pending:
            self._spawn(name, fn)

    def snapshot(self) -> dict[str, TaskStatus]:
        with self._lock:
            return dict(self._status)

    def join(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds in total; True when every task has finished.

        Called at shutdown: a task that fails from now on (the database closes after this)
        is one log line, not a traceback.
        """
        self._closing = True
        deadline = time.monotonic() + timeout
        for thread in list(self._threads):
            thread.join(max(0.0, deadline - time.monotonic()))
        return not any(thread.is_alive() for thread in self._threads)

    def _spawn(self, name: str, fn: Callable[[], object]) -> None:
        thread = threading.Thread(
            target=self._run, args=(name, fn), name=f"startup-{name}", daemon=True
        )
        self._threads.append(thread)
        thread.start()

    def _run(self, name: str, fn: Callable[[], object]) -> None:
        self._set(name, TaskStatus("running"))
        started = time.perf_counter()
        try:
            fn()
        except Exception as exc:  # a failed warm-up is reported, never fatal to the daemon
            if self._closing:
                log.info("start-up task %s abandoned at shutdown (%s)", name, exc)
                return
            elapsed = (time.perf_counter() - started) * 1000
            log.warning("start-up task %s failed: %s", name, exc, exc_info=True)
            self._set(name, TaskStatus("failed", f"{type(exc).__name__}: {exc}", elapsed))
            return
        elapsed = (time.perf_counter() - started) * 1000
        log.info("start-up task %s done in %.0f ms", name, elapsed)
        self._set(name, TaskStatus("done", None, elapsed))

    def _set(self, name: str, status: TaskStatus) -> None:
        with self._lock:
            self._status[name] = status
            self._publish_locked()

    def _publish_locked(self) -> None:
        # Under the lock, so concurrent updates reach the board in the order they happened.
        self._board.set(STATUS_KEY, {name: s.to_json() for name, s in self._status.items()})
