"""The embedding capability's worker: the tracker's backfill jobs through the generic queue worker.

`embedding_backfill` jobs run one at a time through `QueueWorker` (lease, embed outside any
transaction, settle by lease token, stale-lease recovery); when none is queued the idle step
is the tracker's scan for memories without a vector and generation activation. The vec0
mirror is healed once, on the first step. When the embedder is down the worker backs off
exponentially up to `max_backoff_s`, so a dead provider costs nothing. `declaration()` is how
the capability hands it to the daemon's worker host.
"""

from __future__ import annotations

import logging
import threading
import time

from signet_desktop.domain.events import DiscardEvents, EmbeddingProgress, EventSink
from signet_desktop.embedding.index import VectorIndex
from signet_desktop.embedding.native import NativeMiniLM
from signet_desktop.embedding.tracker import BACKFILL_JOB, EmbeddingTracker, StepResult
from signet_desktop.queue.worker import IdleStep, QueueWorker, WorkerSettings
from signet_desktop.service.workers import WarmUp, WorkerDeclaration

log = logging.getLogger(__name__)

NAME = "embedding"
WARM_UP = "embedding-model"
DEFAULT_POLL_S = 5.0
DEFAULT_MAX_BACKOFF_S = 300.0
STALE_LEASE_CHECK_S = 60.0
PROGRESS_EVERY_S = 2.0  # a coverage count per progress event: bounded, not per batch


class EmbeddingWorker:
    """Drives an `EmbeddingTracker`: queued jobs first, then its scan."""

    def __init__(
        self,
        tracker: EmbeddingTracker,
        index: VectorIndex,
        *,
        poll_s: float = DEFAULT_POLL_S,
        max_backoff_s: float = DEFAULT_MAX_BACKOFF_S,
        events: EventSink | None = None,
    ) -> None:
        self.tracker = tracker
        self._index = index
        self._events: EventSink = events or DiscardEvents()
        self._healed = False
        self._last_progress = 0.0
        self._last_idle: StepResult | None = None
        settings = WorkerSettings(
            poll_s=poll_s, max_backoff_s=max_backoff_s, stale_check_s=STALE_LEASE_CHECK_S
        )
        self.queue: QueueWorker = tracker.job_worker(
            name=NAME, settings=settings, events=events, idle=self._idle
        )

    @property
    def last_error(self) -> str | None:
        """The last step's error (None when it went well)."""
        return self.queue.last_error

    @property
    def last_step(self) -> StepResult | None:
        """The last step in the tracker's terms (`jobs`, `scan`, `activate` or `idle`)."""
        outcome = self.queue.last_outcome
        if outcome is None or outcome.job is None:
            return self._last_idle
        if outcome.status == "completed":
            done = int(bool(outcome.result and outcome.result.get("embedded")))
            return StepResult("jobs", embedded=done, skipped=1 - done)
        return StepResult("jobs", failed=1, error=outcome.error, unavailable=outcome.unavailable)

    def run_once(self) -> bool:
        """One step; True when it did work (so the loop should not sleep)."""
        self._heal_once()
        return self.queue.run_once()

    def run_forever(self, stop: threading.Event) -> None:
        """Loop until `stop` is set: busy while there is work, sleeping when idle or failing."""
        try:
            self._heal_once()
        except Exception:  # the mirror is derived; recall falls back while it is out of step
            log.exception("healing the vec0 mirror failed")
        self.queue.run_forever(stop)

    def release_leases(self) -> int:
        """Give back the lease of a job still running when a stop timed out."""
        return self.queue.release_leases()

    def _idle(self) -> IdleStep:
        step = self.tracker.idle_step()
        self._last_idle = step
        if step.embedded:
            self._maybe_publish_progress()
        return IdleStep(did_work=step.did_work, unavailable=step.unavailable, error=step.error)

    def _maybe_publish_progress(self) -> None:
        now = time.monotonic()
        if now - self._last_progress < PROGRESS_EVERY_S:
            return
        self._last_progress = now
        coverage = self.tracker.coverage(fresh=True)
        self._events.publish(
            EmbeddingProgress(
                generation=coverage.generation_id, embedded=coverage.embedded, total=coverage.total
            )
        )

    def _heal_once(self) -> None:
        if not self._healed:
            self._healed = True
            self._heal_mirror()

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


def declaration(worker: EmbeddingWorker) -> WorkerDeclaration:
    """The embedding worker as the daemon hosts it: one instance (the tracker scans in order).

    An in-process model (native MiniLM) is loaded in the background as `embedding-model`.
    """
    embedder = worker.tracker.embedder
    warm_up = WarmUp(WARM_UP, embedder.load) if isinstance(embedder, NativeMiniLM) else None
    return WorkerDeclaration(
        name=NAME, job_types=(BACKFILL_JOB,), factory=lambda: worker, warm_up=warm_up
    )
