"""What the Health pane shows, gathered off the GUI thread from the facade (no Qt here).

The checks are `signet doctor`'s (`service/diagnostics.py`) over the same facts: the local
ones read the workspace's files, the status ones judge `service.status()`'s values, which the
CLI reads back from `/api/status`, so the pane and the CLI never disagree.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from signet_desktop.domain.events import (
    EmbeddingProgress,
    Event,
    JobCompleted,
    JobDead,
    JobFailed,
    MemoriesEmbedded,
    MemoryCreated,
)
from signet_desktop.domain.memory import DEFAULT_AGENT_ID
from signet_desktop.embedding.tracker import COVERAGE_TTL_S
from signet_desktop.queue.jobs import Job
from signet_desktop.service import diagnostics
from signet_desktop.service.diagnostics import Check, Level
from signet_desktop.service.embeddings.service import EmbeddingStatus
from signet_desktop.service.facade import ServiceStatus, SignetService
from signet_desktop.service.pipeline.service import MEMORY_QUEUE, QUEUE_STATES
from signet_desktop.service.verdict import Verdict, judge, read_facts

LAST_JOB_SCAN = 20  # a job type's most recently changed jobs searched for its last finished one


@dataclass(frozen=True, slots=True)
class EmbeddingFacts:
    """The embedder and how far its generation covers the live memories."""

    provider: str
    model: str | None
    dimensions: int | None
    generation: int | None
    generation_status: str | None
    embedded: int
    total: int
    vector_search: str

    @property
    def configured(self) -> bool:
        return self.provider != "none"


@dataclass(frozen=True, slots=True)
class WorkerRow:
    """One hosted worker as the pipeline reports it."""

    name: str
    state: str
    paused: bool
    job_types: tuple[str, ...]
    error: str | None


@dataclass(frozen=True, slots=True)
class LastRun:
    """The last job a worker finished: heard on the bus, or read from the queue."""

    at: float
    outcome: str  # completed | failed | dead
    job_type: str
    error: str | None = None


@dataclass(frozen=True, slots=True)
class HealthReport:
    """One consistent reading of everything the pane shows."""

    checks: tuple[Check, ...]
    embedding: EmbeddingFacts
    workers: tuple[WorkerRow, ...]
    paused: bool
    hosted: bool
    queue: Mapping[str, int]
    verdict: Verdict  # the one the tray, the status bar and Queue show (service/verdict.py)
    # Each queue worker's last finished job as the queue records it (what ran before the pane
    # was opened: the bus only tells it what runs from then on).
    last_runs: Mapping[str, LastRun] = field(default_factory=dict)
    read_at: float = field(default_factory=time.time)

    @property
    def problems(self) -> int:
        return sum(1 for check in self.checks if check.level is not Level.OK)

    @property
    def failures(self) -> int:
        return sum(1 for check in self.checks if check.level is Level.FAIL)


def read_health(
    service: SignetService, workspace: Path, agent_id: str = DEFAULT_AGENT_ID
) -> HealthReport:
    """Run the doctor's checks and read the pipeline (blocks: call it in a worker thread)."""
    status = service.status()
    pipeline = service.pipeline.status()
    workers = tuple(
        WorkerRow(w.name, w.state, w.paused, w.job_types, w.error) for w in pipeline.workers
    )
    return HealthReport(
        checks=tuple(health_checks(workspace, status)),
        embedding=embedding_facts(status.embedding),
        workers=workers,
        paused=pipeline.mode == "paused",
        hosted=pipeline.hosted,
        queue={s: pipeline.queues.get(MEMORY_QUEUE, {}).get(s, 0) for s in QUEUE_STATES},
        verdict=judge(read_facts(service, agent_id)),
        last_runs=recorded_runs(service, agent_id, workers),
    )


def recorded_runs(
    service: SignetService, agent_id: str, workers: Sequence[WorkerRow]
) -> dict[str, LastRun]:
    """Each worker's last finished job of its types, read from the agent's queue."""
    runs: dict[str, LastRun] = {}
    for worker in workers:
        found = [
            run
            for job_type in worker.job_types
            if (run := _last_finished(service, agent_id, job_type)) is not None
        ]
        if found:
            runs[worker.name] = max(found, key=lambda run: run.at)
    return runs


def _last_finished(service: SignetService, agent_id: str, job_type: str) -> LastRun | None:
    recent = service.pipeline.queue.jobs(agent_id, job_type=job_type, limit=LAST_JOB_SCAN)
    return next((run for job in recent if (run := finished_run(job)) is not None), None)


def finished_run(job: Job) -> LastRun | None:
    """The job's last finished attempt (completed, dead, or failed and waiting), else None."""
    if job.status == "completed" and job.completed_at:
        return LastRun(_epoch(job.completed_at), "completed", job.job_type)
    if job.status == "dead":
        return LastRun(_epoch(job.failed_at or job.updated_at), "dead", job.job_type, job.error)
    if job.failed_at and job.error:
        return LastRun(_epoch(job.failed_at), "failed", job.job_type, job.error)
    return None


def _epoch(stamp: str) -> float:
    return datetime.fromisoformat(stamp).timestamp()


def health_checks(workspace: Path, status: ServiceStatus) -> list[Check]:
    """`signet doctor`'s checklist for an in-process service (no daemon round trip)."""
    checks = [diagnostics.workspace_check(workspace)]
    if workspace.is_dir():
        checks.extend(diagnostics.config_checks(workspace))
    if status.database.path is not None:  # a SQLite file (PostgreSQL has none to check)
        checks.append(diagnostics.database_check(status.database.path))
    checks.extend(diagnostics.status_checks(status))
    return checks


def embedding_facts(status: EmbeddingStatus) -> EmbeddingFacts:
    """The embedder and its coverage as the pane shows them."""
    coverage = status.coverage
    return EmbeddingFacts(
        provider=status.provider,
        model=status.model,
        dimensions=status.dimensions,
        generation=None if coverage is None else coverage.generation_id,
        generation_status=None if coverage is None else coverage.status,
        embedded=0 if coverage is None else coverage.embedded,
        total=0 if coverage is None else coverage.total,
        vector_search=status.vector_search,
    )


def coverage_text(embedded: int, total: int) -> str:
    """`312 / 400 (78%)`; an empty store is fully covered."""
    ratio = 1.0 if total == 0 else embedded / total
    return f"{embedded:,} / {total:,} ({ratio:.0%})"


class CoverageCount:
    """The coverage bar's numbers: from readings, moved on by events between them.

    `service.status()` caches coverage for COVERAGE_TTL_S, so a reading taken just after a
    remember can be older than what the bus already said (`memory.created` adds one to the
    total, `memory.embedded` its vectors, `embedding.progress` is a fresh count). For that
    long after an event the event-derived numbers win; a reading after the window (the pane
    asks for one) is the truth again, deletes and re-embeds included.
    """

    def __init__(self, window_s: float = COVERAGE_TTL_S) -> None:
        self.window_s = window_s
        self.generation: int | None = None
        self.embedded = 0
        self.total = 0
        self._events_until = 0.0

    def reading(self, facts: EmbeddingFacts, now: float) -> bool:
        """Take a reading's numbers unless events moved them on meanwhile; True if taken."""
        if now < self._events_until:
            return False
        self.generation, self.embedded, self.total = facts.generation, facts.embedded, facts.total
        return True

    def event(self, event: Event, now: float) -> bool:
        """Fold one event in; True when the numbers changed."""
        if isinstance(event, EmbeddingProgress):
            self.generation, self.embedded, self.total = (
                event.generation,
                event.embedded,
                event.total,
            )
        elif isinstance(event, MemoriesEmbedded) and event.generation == self.generation:
            self.embedded = min(self.total, self.embedded + len(event.memory_ids))
        elif isinstance(event, MemoryCreated) and self.generation is not None:
            self.total += 1
        else:
            return False
        self._events_until = now + self.window_s
        return True


def last_run_of(event: Event) -> tuple[str, LastRun] | None:
    """(worker, last run) for a finished-job event, else None."""
    if isinstance(event, JobCompleted | JobFailed | JobDead) and event.worker:
        error = getattr(event, "error", None)
        outcome = event.kind.removeprefix("job.")
        return event.worker, LastRun(time.time(), outcome, event.job_type, error)
    return None


def ago_text(then: float, now: float) -> str:
    """`just now`, `42 s ago`, `5 min ago`, `3 h ago`."""
    seconds = max(0.0, now - then)
    if seconds < 2:
        return "just now"
    if seconds < 60:
        return f"{seconds:.0f} s ago"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min ago"
    return f"{seconds / 3600:.0f} h ago"


LOG_LEVELS: tuple[tuple[str, int], ...] = (
    ("Debug", logging.DEBUG),
    ("Info", logging.INFO),
    ("Warning", logging.WARNING),
    ("Error", logging.ERROR),
)
