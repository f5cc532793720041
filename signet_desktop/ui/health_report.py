"""What the Health pane shows, gathered off the GUI thread from the facade (no Qt here).

The checks are `signet doctor`'s (`service/diagnostics.py`) over the same facts: the local
ones read the workspace's files, the status ones judge `service.status()`'s values, which the
CLI reads back from `/api/status`, so the pane and the CLI never disagree.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
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
from signet_desktop.embedding.tracker import COVERAGE_TTL_S
from signet_desktop.service import diagnostics
from signet_desktop.service.diagnostics import Check, Level
from signet_desktop.service.embeddings.service import EmbeddingStatus
from signet_desktop.service.facade import ServiceStatus, SignetService
from signet_desktop.service.pipeline.service import MEMORY_QUEUE, QUEUE_STATES


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
class HealthReport:
    """One consistent reading of everything the pane shows."""

    checks: tuple[Check, ...]
    embedding: EmbeddingFacts
    workers: tuple[WorkerRow, ...]
    paused: bool
    hosted: bool
    queue: Mapping[str, int]
    read_at: float = field(default_factory=time.time)

    @property
    def problems(self) -> int:
        return sum(1 for check in self.checks if check.level is not Level.OK)

    @property
    def failures(self) -> int:
        return sum(1 for check in self.checks if check.level is Level.FAIL)


def read_health(service: SignetService, workspace: Path) -> HealthReport:
    """Run the doctor's checks and read the pipeline (blocks: call it in a worker thread)."""
    status = service.status()
    pipeline = service.pipeline.status()
    return HealthReport(
        checks=tuple(health_checks(workspace, status)),
        embedding=embedding_facts(status.embedding),
        workers=tuple(
            WorkerRow(w.name, w.state, w.paused, w.job_types, w.error) for w in pipeline.workers
        ),
        paused=pipeline.mode == "paused",
        hosted=pipeline.hosted,
        queue={s: pipeline.queues.get(MEMORY_QUEUE, {}).get(s, 0) for s in QUEUE_STATES},
    )


def health_checks(workspace: Path, status: ServiceStatus) -> list[Check]:
    """`signet doctor`'s checklist for an in-process service (no daemon round trip)."""
    checks = [diagnostics.workspace_check(workspace)]
    if workspace.is_dir():
        checks.extend(diagnostics.config_checks(workspace))
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


@dataclass(frozen=True, slots=True)
class LastRun:
    """The last job a worker finished, as the pane heard it on the bus."""

    at: float
    outcome: str  # completed | failed | dead
    job_type: str
    error: str | None = None


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
