"""The pipeline capability: the registry of declared workers and the queue, paused or running.

Backs `GET /api/pipeline/status`, `POST /api/pipeline/pause` and `/resume`; `queue` (a
`QueueOps`) backs the queue diagnostics and repair routes and the Queue pane. The workers are
hosted by the daemon, which attaches its `WorkerHost` here at start-up (`service` never
imports `daemon`); without a host (an in-process service in tests or tools) the declared
workers show as `pending` and a pause is remembered, applied when a host attaches.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from signet_desktop.config.pipeline import RepairConfig
from signet_desktop.domain import scope
from signet_desktop.domain.errors import NotFound
from signet_desktop.domain.events import EventSink
from signet_desktop.queue import jobs
from signet_desktop.service.pipeline.queue_ops import QueueOps
from signet_desktop.service.workers import WorkerDeclaration, WorkerHost, WorkerSnapshot
from signet_desktop.storage.handle import DatabaseHandle

Mode = Literal["controlled-write", "paused"]
QUEUE_STATES = ("pending", "leased", "completed", "failed", "dead")
MEMORY_QUEUE = "memory"  # Signet's name for `memory_jobs`


@dataclass(frozen=True, slots=True)
class PipelineStatus:
    """The workers, the queue counts per state (all jobs and per job type) and the mode."""

    mode: Mode
    workers: tuple[WorkerSnapshot, ...]
    queues: Mapping[str, Mapping[str, int]]
    job_types: Mapping[str, Mapping[str, int]]
    hosted: bool


class PipelineService:
    """Declared workers (the registry the daemon hosts) and pause/resume over its host."""

    def __init__(
        self,
        db: DatabaseHandle,
        workers: Sequence[WorkerDeclaration],
        *,
        paused: bool = False,
        repair: RepairConfig | None = None,
        events: EventSink | None = None,
    ) -> None:
        names = [w.name for w in workers]
        if len(set(names)) != len(names):
            raise ValueError(f"worker names must be unique: {names}")
        self._db = db
        self.workers: tuple[WorkerDeclaration, ...] = tuple(workers)
        self._host: WorkerHost | None = None
        self._paused = paused
        self._lock = threading.Lock()
        self.queue = QueueOps(db, config=repair, events=events)

    @property
    def paused(self) -> bool:
        return self._paused

    def attach(self, host: WorkerHost) -> None:
        """The daemon's host for these workers; a pause requested earlier applies to it."""
        with self._lock:
            self._host = host
            paused = self._paused
        if paused:
            host.pause()

    def detach(self) -> None:
        """Forget the host (the daemon stopped it)."""
        with self._lock:
            self._host = None

    def pause(self) -> PipelineStatus:
        """Stop taking jobs: running ones finish, leased unstarted ones go back to pending."""
        return self._set_paused(True)

    def resume(self) -> PipelineStatus:
        """Take jobs again."""
        return self._set_paused(False)

    def _set_paused(self, paused: bool) -> PipelineStatus:
        with self._lock:
            self._paused = paused
            host = self._host
        if host is not None:
            (host.pause if paused else host.resume)()
        return self.status()

    def job(self, agent_id: str, job_id: str) -> jobs.Job:
        """One queue job of this agent (Signet's GET /api/memory/jobs/{id}); else NotFound."""
        scope.check_agent_id(agent_id)
        job = jobs.get_job(self._db.reader(), job_id)
        if job is None or job.agent_id != agent_id:
            raise NotFound(f"job {job_id} not found")
        return job

    def status(self) -> PipelineStatus:
        """Workers as hosted now, and queue counts per state."""
        with self._lock:
            host, paused = self._host, self._paused
        by_type = jobs.counts_by_type(self._db.reader())
        total = {state: sum(c[state] for c in by_type.values()) for state in QUEUE_STATES}
        types = {kind: {s: counts[s] for s in QUEUE_STATES} for kind, counts in by_type.items()}
        return PipelineStatus(
            mode="paused" if paused else "controlled-write",
            workers=self._worker_snapshots(host, paused),
            queues={MEMORY_QUEUE: total},
            job_types=types,
            hosted=host is not None,
        )

    def _worker_snapshots(
        self, host: WorkerHost | None, paused: bool
    ) -> tuple[WorkerSnapshot, ...]:
        if host is not None:
            return tuple(host.snapshot().values())
        return tuple(
            WorkerSnapshot(w.name, "pending", w.job_types, w.concurrency, paused=paused)
            for w in self.workers
        )
