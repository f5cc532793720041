"""The content-safety capability's worker: record decisions for new memories, rescan the rest.

Memory events queue ids on `ContentSafetyService` and set its `wake` event, so a new memory
has its decision within moments of the write, in batches (a `remember_many` of 10k memories
costs 50 write transactions, not 10k). Every `interval_s`, and at once after the policy
changed, it sweeps what has no decision of the current policy version — after an upgrade
that bumps `POLICY_VERSION`, every row — in bounded batches until nothing is left. A version
bump during a sweep is harmless: each batch records the version it scanned with, and the
sweep continues until no row of another version remains. No job queue: the ledger itself
says what is pending.
"""

from __future__ import annotations

import logging
import threading
import time

from signet_desktop.domain.errors import Unavailable
from signet_desktop.service.safety.service import RECORD_BATCH, ContentSafetyService
from signet_desktop.service.workers import WorkerDeclaration

log = logging.getLogger(__name__)

NAME = "content-safety"
DEFAULT_INTERVAL_S = 300.0
IDLE_WAIT_S = 0.5  # how often an idle worker looks at its stop event


class ContentSafetyWorker:
    """Drains queued memories and sweeps pending decisions (a hosted `Worker`)."""

    def __init__(
        self,
        safety: ContentSafetyService,
        *,
        interval_s: float = DEFAULT_INTERVAL_S,
        batch: int = RECORD_BATCH,
    ) -> None:
        self._safety = safety
        self.interval_s = interval_s
        self.batch = batch
        self._next_sweep = 0.0  # the first step sweeps
        self._version = safety.policy.version

    def run_once(self) -> bool:
        """One step: queued memories first, then a sweep batch when one is due."""
        recorded = self._safety.record_queued(self.batch)
        if recorded or self._safety.queued():
            return True
        if self._safety.policy.version != self._version:
            self._version = self._safety.policy.version
            self._next_sweep = 0.0
        if time.monotonic() < self._next_sweep:
            return False
        swept = self._safety.scan_pending(None, self.batch)
        if swept:
            log.debug("content safety: %d decisions recorded", swept)
            return True
        self._next_sweep = time.monotonic() + self.interval_s
        return False

    def run_forever(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                busy = self.run_once()
            except Exception as exc:  # a failed step is retried after a pause
                if isinstance(exc, Unavailable):  # the database is down: no traceback to show
                    log.warning("content-safety step failed: %s", exc.message)
                else:
                    log.exception("content-safety step failed")
                busy = False
                stop.wait(IDLE_WAIT_S * 10)
            if not busy:
                self._safety.wake.wait(IDLE_WAIT_S)
                self._safety.wake.clear()

    def release_leases(self) -> int:
        return 0  # holds no job leases


def declaration(worker: ContentSafetyWorker) -> WorkerDeclaration:
    return WorkerDeclaration(name=NAME, job_types=(), factory=lambda: worker)
