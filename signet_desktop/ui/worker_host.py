"""The Qt app's worker host: the daemon's `HostedWorkers` with each instance in a QThread.

The state machine (pause, resume, stop with lease release, `worker.state` events) is the
headless host's (`daemon/workers.py`); only the threads differ, so Qt tools see and name them.
Qt aborts a process that destroys a running QThread. A job that outlives the stop timeout
has its lease released like the headless host's; `stop` then waits up to `LINGER_S` more for
its thread, and a thread still running after that (one long native call) is kept referenced
here until the process ends, so it is never destroyed while it runs: the quit stays within
its budget and the process exits with `os._exit` (`daemon/hardexit.py`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

from PySide6.QtCore import QThread

from signet_desktop.daemon.workers import HostedWorkers, Runner
from signet_desktop.domain.events import EventSink
from signet_desktop.service.workers import WorkerDeclaration

log = logging.getLogger(__name__)

LINGER_S = 1.0
_LEFT_RUNNING: list[QThread] = []  # never destroyed while running (see the module docstring)


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


class QtWorkerHost(HostedWorkers):
    """One QThread per worker instance; give it to `RuntimeOptions(worker_host=...)`."""

    def __init__(self, declarations: Sequence[WorkerDeclaration], events: EventSink) -> None:
        self._threads: list[_LoopThread] = []
        super().__init__(declarations, events, self._spawn_kept)

    def _spawn_kept(self, name: str, target: Callable[[], None]) -> Runner:
        thread = _LoopThread(name, target)
        self._threads.append(thread)
        thread.start()
        return thread

    def stop(self, timeout: float) -> bool:
        """The headless host's stop, then up to `LINGER_S` for threads still in a job."""
        stopped = super().stop(timeout)
        deadline = time.monotonic() + LINGER_S
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.isRunning():
                log.warning("%s is still in its job; it ends with the process", thread.objectName())
                _LEFT_RUNNING.append(thread)
        return stopped
