"""Worker hosting: started together, stopped by one event, crashes reported not fatal."""

from __future__ import annotations

import threading

from signet_desktop.daemon.workers import WorkerThreads
from signet_desktop.service.status import StatusBoard


class CountingWorker:
    """A real `run_forever(stop)` loop that counts its steps."""

    def __init__(self) -> None:
        self.steps = 0
        self.started = threading.Event()

    def run_forever(self, stop: threading.Event) -> None:
        self.started.set()
        while not stop.is_set():
            self.steps += 1
            stop.wait(0.01)


class CrashingWorker:
    def run_forever(self, stop: threading.Event) -> None:
        raise RuntimeError("bad step")


def test_workers_run_until_stopped_and_report_state() -> None:
    board = StatusBoard()
    host = WorkerThreads(board)
    counting = CountingWorker()
    host.add("count", counting)
    host.add("crash", CrashingWorker())
    assert board.snapshot()["workers"]["count"] == {"state": "pending", "error": None}
    assert not counting.started.wait(0.05)  # nothing runs before start()
    host.start()
    assert counting.started.wait(10)
    assert host.stop(10)
    steps = counting.steps
    assert steps >= 1
    workers = board.snapshot()["workers"]
    assert workers["count"] == {"state": "stopped", "error": None}
    assert workers["crash"] == {"state": "crashed", "error": "RuntimeError: bad step"}


def test_worker_added_after_start_runs_at_once() -> None:
    host = WorkerThreads(StatusBoard())
    host.start()
    late = CountingWorker()
    host.add("late", late)
    assert late.started.wait(10)
    assert host.stop(10)
