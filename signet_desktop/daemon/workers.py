"""Hosting long-running workers (`run_forever(stop)`) in threads for the daemon's lifetime.

Workers are plain Python (see STYLE: `run_once()` / `run_forever(stop)`). The runtime starts
them once the server listens and stops them before the database closes; both the headless
process and the Qt shell host them here (they never touch Qt). Their liveness is published
on the status board under `"workers"`.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Protocol

from signet_desktop.service.status import StatusBoard

log = logging.getLogger(__name__)

STATUS_KEY = "workers"


class Worker(Protocol):
    """A loop that returns soon after `stop` is set."""

    def run_forever(self, stop: threading.Event) -> None: ...


class WorkerThreads:
    """Named workers, one daemon thread each, sharing one stop event."""

    def __init__(self, board: StatusBoard) -> None:
        self._board = board
        self._workers: dict[str, Worker] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._states: dict[str, dict[str, Any]] = {}
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._started = False

    def add(self, name: str, worker: Worker) -> None:
        """Register a worker; it starts with `start()` (or at once if already started)."""
        with self._lock:
            if name in self._workers:
                raise ValueError(f"worker {name!r} is already registered")
            self._workers[name] = worker
            self._states[name] = {"state": "pending", "error": None}
            self._publish_locked()
            started = self._started
        if started:
            self._spawn(name, worker)

    def start(self) -> None:
        """Start every registered worker that is not running yet."""
        with self._lock:
            self._started = True
            waiting = [(n, w) for n, w in self._workers.items() if n not in self._threads]
        for name, worker in waiting:
            self._spawn(name, worker)

    def stop(self, timeout: float) -> bool:
        """Signal every worker and wait up to `timeout` s in total; True if all ended."""
        self._stop.set()
        deadline = time.monotonic() + timeout
        for name, thread in list(self._threads.items()):
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                log.warning("worker %s did not stop within %.1f s", name, timeout)
        return not any(thread.is_alive() for thread in self._threads.values())

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """`{name: {state: pending|running|stopped|crashed, error}}`."""
        with self._lock:
            return {name: dict(state) for name, state in self._states.items()}

    def _spawn(self, name: str, worker: Worker) -> None:
        thread = threading.Thread(
            target=self._run, args=(name, worker), name=f"worker-{name}", daemon=True
        )
        with self._lock:
            if name in self._threads:
                return
            self._threads[name] = thread
        thread.start()

    def _run(self, name: str, worker: Worker) -> None:
        log.info("worker %s started", name)
        self._set(name, "running", None)
        try:
            worker.run_forever(self._stop)
        except Exception as exc:  # a crashed worker is reported; the daemon keeps serving
            log.exception("worker %s crashed", name)
            self._set(name, "crashed", f"{type(exc).__name__}: {exc}")
        else:
            log.info("worker %s stopped", name)
            self._set(name, "stopped", None)

    def _set(self, name: str, state: str, error: str | None) -> None:
        with self._lock:
            self._states[name] = {"state": state, "error": error}
            self._publish_locked()

    def _publish_locked(self) -> None:
        # Under the lock, so concurrent updates reach the board in the order they happened.
        self._board.set(STATUS_KEY, {name: dict(state) for name, state in self._states.items()})
