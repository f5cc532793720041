"""The Dreaming worker: every `checkInterval`, the scheduled sweep over every agent scope.

Hosted like every other worker (`service/workers.py`): `run_once` runs one sweep
(`DreamingService.check_once`, passes one after another, all off the event loop). Its first
step recovers passes a killed daemon left running. Stopping (or pausing) sets the host's stop event,
passed to the sweep, so a running scheduled pass ends `cancelled` at its next turn.
"""

from __future__ import annotations

import functools
import logging
import threading

from signet_desktop.service.dreaming.service import DreamingService
from signet_desktop.service.workers import WorkerDeclaration, repeat

log = logging.getLogger(__name__)

NAME = "dreaming"


class DreamingWorker:
    """Periodic Dreaming checks (a hosted `Worker`)."""

    def __init__(self, dreaming: DreamingService, *, interval_s: float | None = None) -> None:
        self._dreaming = dreaming
        self.interval_s = (
            dreaming.config.check_interval_ms / 1000 if interval_s is None else interval_s
        )
        self.sweeps = 0

    def run_once(self, stop: threading.Event | None = None) -> bool:
        """One sweep; True when a pass ran."""
        self.sweeps += 1
        return bool(self._dreaming.check_once(stop))

    def run_forever(self, stop: threading.Event) -> None:
        self._dreaming.recover()
        step = functools.partial(self.run_once, stop)
        repeat(stop, self.interval_s, step, log=log, failed="Dreaming sweep failed")

    def release_leases(self) -> int:
        return 0  # holds no job leases


def declaration(worker: DreamingWorker) -> WorkerDeclaration:
    return WorkerDeclaration(name=NAME, job_types=(), factory=lambda: worker)
