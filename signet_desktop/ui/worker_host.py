"""The Qt app's worker host: the daemon's `HostedWorkers` with each instance in a QThread.

The state machine (pause, resume, stop with lease release, `worker.state` events) is the
headless host's (`daemon/workers.py`); only the threads differ, so Qt tools see and name them
and the app never destroys a thread that is still running (`stop` waits for each).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import QThread

from signet_desktop.daemon.workers import HostedWorkers, Runner
from signet_desktop.domain.events import EventSink
from signet_desktop.service.workers import WorkerDeclaration


class _LoopThread(QThread):
    """A QThread that runs one worker loop (plain Python; no Qt event loop needed)."""

    def __init__(self, name: str, target: Callable[[], None]) -> None:
        super().__init__()
        self.setObjectName(name)
        self._target = target

    def run(self) -> None:
        self._target()

    def join(self, timeout: float) -> None:
        self.wait(max(0, int(timeout * 1000)))

    def is_alive(self) -> bool:
        return self.isRunning()


def spawn_qthread(
    name: str,
    target: Callable[[], None],
    priority: QThread.Priority = QThread.Priority.InheritPriority,
) -> Runner:
    """Start `target` in a named QThread (a `Runner` for `HostedWorkers`)."""
    thread = _LoopThread(name, target)
    thread.start(priority)
    return thread


class QtWorkerHost(HostedWorkers):
    """One QThread per worker instance; give it to `RuntimeOptions(worker_host=...)`."""

    def __init__(self, declarations: Sequence[WorkerDeclaration], events: EventSink) -> None:
        super().__init__(declarations, events, spawn_qthread)
