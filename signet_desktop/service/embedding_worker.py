"""The embedding tracker's worker loop: plain `run_once()` / `run_forever(stop)`.

The UI hosts it in a QThread, headless mode in a thread, tests call `run_once()`. While
there is work it loops without sleeping; when idle it sleeps `poll_s`; when the embedder is
down it backs off exponentially up to `max_backoff_s`, so a dead provider costs nothing.
"""

from __future__ import annotations

import logging
import threading
import time

from signet_desktop.embedding.index import VectorIndex
from signet_desktop.embedding.tracker import EmbeddingTracker, StepResult

log = logging.getLogger(__name__)

DEFAULT_POLL_S = 5.0
DEFAULT_MAX_BACKOFF_S = 300.0
STALE_LEASE_CHECK_S = 60.0


class EmbeddingWorker:
    """Drives an `EmbeddingTracker`; heals the vec0 mirror once on its first step."""

    def __init__(
        self,
        tracker: EmbeddingTracker,
        index: VectorIndex,
        *,
        poll_s: float = DEFAULT_POLL_S,
        max_backoff_s: float = DEFAULT_MAX_BACKOFF_S,
    ) -> None:
        self.tracker = tracker
        self._index = index
        self._poll_s = poll_s
        self._max_backoff_s = max_backoff_s
        self._healed = False
        self._last_release = 0.0
        self._backoff_s = 0.0
        self.last_step: StepResult | None = None
        self.last_error: str | None = None

    def run_once(self) -> bool:
        """One step; True when it did work (so the loop should not sleep)."""
        if not self._healed:
            self._healed = True
            self._heal_mirror()
        now = time.monotonic()
        if now - self._last_release >= STALE_LEASE_CHECK_S:
            self._last_release = now
            report = self.tracker.release_stale_leases()
            if report.released or report.dead:
                log.info(
                    "released %d stale embedding leases (%d dead)", report.released, report.dead
                )
        step = self.tracker.run_once()
        self.last_step = step
        self.last_error = step.error
        return step.did_work

    def run_forever(self, stop: threading.Event) -> None:
        """Loop until `stop` is set: busy while there is work, sleeping when idle or failing."""
        while not stop.is_set():
            try:
                did_work = self.run_once()
            except Exception:  # a worker must outlive one bad step; the next one retries
                log.exception("embedding worker step failed")
                did_work = False
                self.last_step = None
                self.last_error = "unexpected error; see the log"
            delay = self._next_delay(did_work)
            if delay:
                stop.wait(delay)

    def _next_delay(self, did_work: bool) -> float:
        step = self.last_step
        if step is not None and step.unavailable:
            self._backoff_s = min(self._max_backoff_s, max(self._poll_s, self._backoff_s * 2))
            return self._backoff_s
        self._backoff_s = 0.0
        return 0.0 if did_work else self._poll_s

    def _heal_mirror(self) -> None:
        """Bring the vec0 mirror back in step if rows went missing (e.g. a run without vec)."""
        if not self._index.mirror_enabled:
            return
        generation = self.tracker.start()
        missing, orphans = self._index.mirror_gap(generation)
        if missing or orphans:
            log.warning(
                "vec0 mirror of generation %s is out of step (%d missing, %d orphaned); resyncing",
                generation.id,
                missing,
                orphans,
            )
            self._index.resync(generation.id)
