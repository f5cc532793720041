"""The hints worker: `prospective_hints` jobs through the generic queue worker.

Enqueueing. A bus handler notes each `memory.created` (after its commit; document chunks are
left out by type) in a bounded in-memory set and wakes the worker, whose idle step enqueues
them in one short transaction (deduped per memory), so a remember pays nothing for hints.
The same idle step scans the store at process start, `SCAN_WINDOW` rows of seq at a time,
for live memories with neither hints nor a hint job of any state, and enqueues those: a crash
between a remember's commit and its enqueue loses nothing, and memories written while hints
were off or the LLM was missing get their hints once it is on. Every `RESCAN_S` it scans again
from two windows before where it ended (rows committed out of seq order included): memories
another daemon acknowledged on a shared PostgreSQL database and died before enqueueing (the
bus relays its events to subscriptions, not to this handler), or more than `MAX_NOTICED` at
once, are queued without waiting for a restart. Memories shorter than
`hints.minContentChars` and document chunks (their text is indexed as itself) are skipped.

Idle. With `hints.enabled: false` or no LLM for workload `memory_extraction`, the worker takes
no job and enqueues nothing; its entry in `/api/status` `workers` carries `detail` saying why
(re-checked every `RECHECK_S`). Junk answers and timeouts fail the job (retried with backoff,
dead after `worker.maxRetries` attempts); a provider that is down or rate-limited backs the
whole worker off as well.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from signet_desktop.config.pipeline import PipelineV2Config
from signet_desktop.domain.documents import CHUNK_MEMORY_TYPE
from signet_desktop.domain.events import Event, EventSink, MemoryCreated, MemoryUpdated
from signet_desktop.inference.errors import (
    ProviderNotConfigured,
    ProviderRateLimited,
    ProviderUnavailable,
)
from signet_desktop.queue import jobs
from signet_desktop.queue.worker import IdleStep, QueueWorker, WorkerSettings
from signet_desktop.service.hints.service import JOB_TYPE, HintService
from signet_desktop.service.workers import WorkerDeclaration
from signet_desktop.storage.handle import DatabaseHandle

log = logging.getLogger(__name__)

NAME = "hints"
SCAN_WINDOW = 2000  # memories (by seq) one backfill step looks at
RESCAN_S = 300.0  # a finished backfill scan starts again this long after
MAX_NOTICED = 10_000  # noticed but not yet enqueued; beyond this the backfill scan catches up
RECHECK_S = 60.0
WAKE_POLL_S = 0.25
READY = "ready"

StatusNote = Callable[[str, str | None], None]  # (worker name, detail)


class BadHintJob(ValueError):
    """A `prospective_hints` job without a memory id: no retry can fix it."""


class HintsWorker:
    """Runs `prospective_hints` jobs (a hosted `Worker`; see the module docstring)."""

    def __init__(
        self,
        db: DatabaseHandle,
        service: HintService,
        *,
        settings: WorkerSettings | None = None,
        events: EventSink | None = None,
        status: StatusNote | None = None,
        recheck_s: float = RECHECK_S,
        scan_window: int = SCAN_WINDOW,
        rescan_s: float = RESCAN_S,
    ) -> None:
        self.service = service
        self._status = status
        self._recheck_s = recheck_s
        self._scan_window = scan_window
        self._rescan_s = rescan_s
        self._rescan_at = 0.0
        self._lock = threading.Lock()
        self._noticed: dict[tuple[str, str], bool] = {}  # (agent, memory): edited
        self._wake = threading.Event()
        self._scan_seq = 0
        self._scan_done = False
        self._reason: str | None = None
        self._checked = False
        self.queue = QueueWorker(
            db,
            name=NAME,
            job_types=(JOB_TYPE,),
            handler=self._handle,
            events=events,
            settings=settings,
            idle=self._idle,
            unavailable=(ProviderUnavailable, ProviderRateLimited, ProviderNotConfigured),
            permanent=(BadHintJob,),
        )

    # -- the bus --------------------------------------------------------------------------

    def notice(self, event: Event) -> None:
        """Bus handler: remember a new memory, or one whose content was edited (its old hints
        were dropped with the edit), for hints (cheap; on the publisher's thread)."""
        if isinstance(event, MemoryCreated):
            if event.memory_type == CHUNK_MEMORY_TYPE:
                return
            memory_id, edited = event.memory_id, False
        elif isinstance(event, MemoryUpdated) and "content" in event.changed:
            memory_id, edited = event.memory_id, True  # an edited chunk: eligibility skips it
        else:
            return
        if event.agent_id is None or not self.service.config.enabled:
            return
        if self._checked and self._reason is not None:
            return  # idle (no LLM): the next start's backfill scan finds it
        with self._lock:
            key = (event.agent_id, memory_id)
            if len(self._noticed) < MAX_NOTICED:
                self._noticed[key] = self._noticed.get(key, False) or edited
            # else: the next backfill scan finds it (within RESCAN_S)
        self._wake.set()

    # -- readiness ------------------------------------------------------------------------

    def idle_reason(self, *, refresh: bool = False) -> str | None:
        """Why the worker takes no job now (None: it runs); published as its status detail."""
        if refresh or not self._checked:
            reason = self.service.idle_reason()
            if not self._checked or reason != self._reason:
                self._note(reason or READY)
            self._checked, self._reason = True, reason
        return self._reason

    def _note(self, detail: str) -> None:
        if self._status is not None:
            self._status(NAME, detail)

    # -- steps ----------------------------------------------------------------------------

    def run_once(self) -> bool:
        """One step: a job, else enqueue noticed memories and one backfill window."""
        if self.idle_reason() is not None:
            return False
        return self.queue.run_once()

    def run_forever(self, stop: threading.Event) -> None:
        """Idle (re-checking every `recheck_s`) while not ready, else the queue loop."""
        while not stop.is_set():
            if self.idle_reason(refresh=True) is None:
                self._run_queue(stop)
                return
            stop.wait(self._recheck_s)

    def _run_queue(self, stop: threading.Event) -> None:
        settings = self.queue.settings
        backoff = 0.0
        while not stop.is_set():
            try:
                outcome = self.queue.step(stop)
            except Exception:  # a worker must outlive one bad step
                log.exception("hints worker step failed")
                stop.wait(settings.poll_s)
                continue
            if outcome.unavailable:  # the provider is down: back off, doubling
                backoff = min(settings.max_backoff_s, max(settings.poll_s, backoff * 2))
                stop.wait(backoff)
                continue
            backoff = 0.0
            if not outcome.did_work:
                self._pause(stop, settings.poll_s)

    def _pause(self, stop: threading.Event, seconds: float) -> None:
        """Sleep up to `seconds`; a stop or a noticed memory ends it early."""
        self._wake.clear()
        deadline = time.monotonic() + seconds
        while not stop.is_set() and not self._wake.is_set() and time.monotonic() < deadline:
            stop.wait(WAKE_POLL_S)

    def release_leases(self) -> int:
        return self.queue.release_leases()

    # -- internals ------------------------------------------------------------------------

    def _handle(self, job: jobs.Job) -> dict[str, object]:
        memory_id = job.memory_id or str(job.payload.get("memoryId") or "")
        if not memory_id:
            raise BadHintJob(f"job {job.id} names no memory")
        return self.service.run(job.agent_id, memory_id).as_result()

    def _idle(self) -> IdleStep:
        """Enqueue what the bus noticed, then one window of the backfill scan."""
        with self._lock:
            noticed = dict(self._noticed)
            self._noticed.clear()
        created = self.service.enqueue([key for key, edited in noticed.items() if edited])
        created += self.service.enqueue(
            [key for key, edited in noticed.items() if not edited], first=True
        )
        if self._scan_done and time.monotonic() >= self._rescan_at:
            self._scan_seq = max(0, self._scan_seq - 2 * self._scan_window)
            self._scan_done = False
        if not self._scan_done:
            scan = self.service.scan(self._scan_seq, self._scan_window)
            self._scan_seq, self._scan_done = scan.next_seq, scan.done
            created += self.service.enqueue(list(scan.found), first=True)
            if not scan.done:
                return IdleStep(did_work=True)  # more windows to look at: no poll pause
            self._rescan_at = time.monotonic() + self._rescan_s
        return IdleStep(did_work=created > 0)


def declaration(
    db: DatabaseHandle,
    service: HintService,
    config: PipelineV2Config,
    *,
    events: EventSink,
    status: StatusNote | None = None,
) -> tuple[WorkerDeclaration, HintsWorker]:
    """The hints worker as the daemon hosts it (one instance), and that instance.

    The caller connects `worker.notice` to the bus. Leases last `worker.leaseTimeoutMs`; the
    idle poll is `hints.poll`.
    """
    settings = WorkerSettings(
        lease_ms=config.worker.lease_timeout_ms, poll_s=config.hints.poll_ms / 1000
    )
    worker = HintsWorker(db, service, settings=settings, events=events, status=status)
    return WorkerDeclaration(name=NAME, job_types=(JOB_TYPE,), factory=lambda: worker), worker
