"""Events: frozen values a capability publishes when something happened (`noun.past_tense`).

Events carry ids and small facts, never whole rows: a subscriber that needs the memory reads it
through the facade. `agent_id` is the agent whose data changed; None marks process facts
(workers, status) that every subscriber may see. Later capabilities add their own subclasses
(`transcript.captured`, `pass.completed`, ...) next to the code that publishes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Protocol

from signet_desktop.domain.memory import utc_now


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """Something that happened; `kind` names it on the wire (`memory.created`).

    Field names `type` and `seq` are taken by the wire envelope; subclasses must not use them.
    """

    kind: ClassVar[str] = "event"
    agent_id: str | None = None
    at: str = field(default_factory=utc_now)


class EventSink(Protocol):
    """Where publishers send events; the bus implements it. Publishing never blocks."""

    def publish(self, event: Event) -> None: ...


class DiscardEvents:
    """A sink that drops everything (for code run without a bus: tools, some tests)."""

    def publish(self, event: Event) -> None:
        return None


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryCreated(Event):
    """A memory was stored (not a dedupe hit)."""

    kind: ClassVar[str] = "memory.created"
    memory_id: str
    memory_type: str
    embedded: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryUpdated(Event):
    """Fields of a memory changed; `changed` names them."""

    kind: ClassVar[str] = "memory.updated"
    memory_id: str
    version: int
    changed: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryDeleted(Event):
    """A memory was soft-deleted (recoverable)."""

    kind: ClassVar[str] = "memory.deleted"
    memory_id: str
    version: int


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryRecovered(Event):
    """A soft-deleted memory was brought back."""

    kind: ClassVar[str] = "memory.recovered"
    memory_id: str
    version: int


@dataclass(frozen=True, slots=True, kw_only=True)
class JobLeased(Event):
    """A worker took a job; `attempt` counts from 1."""

    kind: ClassVar[str] = "job.leased"
    job_id: str
    job_type: str
    worker: str
    attempt: int


@dataclass(frozen=True, slots=True, kw_only=True)
class JobCompleted(Event):
    """A job finished successfully."""

    kind: ClassVar[str] = "job.completed"
    job_id: str
    job_type: str
    worker: str
    duration_ms: float


@dataclass(frozen=True, slots=True, kw_only=True)
class JobFailed(Event):
    """An attempt failed; the job goes back to pending and runs again after `retry_at`."""

    kind: ClassVar[str] = "job.failed"
    job_id: str
    job_type: str
    worker: str
    attempt: int
    error: str
    retry_at: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class JobDead(Event):
    """A job spent its attempts (or its lease expired on the last one) and will not run again."""

    kind: ClassVar[str] = "job.dead"
    job_id: str
    job_type: str
    worker: str | None
    error: str


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkerStateChanged(Event):
    """A hosted worker changed state: pending, running, paused, stopped or crashed."""

    kind: ClassVar[str] = "worker.state"
    worker: str
    state: str
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class EmbeddingProgress(Event):
    """The embedding tracker wrote vectors: coverage of its generation so far."""

    kind: ClassVar[str] = "embedding.progress"
    generation: int
    embedded: int
    total: int


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoriesEmbedded(Event):
    """Vectors of just-remembered memories were written (one event per batch and agent)."""

    kind: ClassVar[str] = "memory.embedded"
    memory_ids: tuple[str, ...]
    generation: int


@dataclass(frozen=True, slots=True, kw_only=True)
class TranscriptCaptured(Event):
    """A session's turns were retained (`appended` new ones; `completed` once it ended)."""

    kind: ClassVar[str] = "transcript.captured"
    session_key: str
    harness: str
    turns: int
    appended: int
    completed: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class ImportProgress(Event):
    """An import run moved on (throttled): counts so far and seconds since it started."""

    kind: ClassVar[str] = "import.progress"
    source_id: str
    run_id: str
    source_kind: str
    files_seen: int
    records_seen: int
    records_imported: int
    turns_imported: int
    lines_skipped: int
    elapsed_s: float
    files_total: int | None = None  # once the importer has listed its files


@dataclass(frozen=True, slots=True, kw_only=True)
class ImportFinished(Event):
    """An import run ended (`status` completed, failed or cancelled)."""

    kind: ClassVar[str] = "import.finished"
    source_id: str
    run_id: str
    status: str
    records_imported: int
    records_duplicate: int
    records_failed: int
    turns_imported: int
    lines_skipped: int
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DocumentProgress(Event):
    """A document moved to a visible state (queued, extracting, chunking, embedding, indexing).

    `chunks_done` / `chunks_total` are set while its chunks are embedded and indexed.
    """

    kind: ClassVar[str] = "document.progress"
    document_id: str
    status: str
    chunks_done: int = 0
    chunks_total: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DocumentFinished(Event):
    """A document reached `done`, `failed` (with `error`; `retrying` when its job will retry)
    or `deleted`."""

    kind: ClassVar[str] = "document.finished"
    document_id: str
    status: str
    chunk_count: int = 0
    error: str | None = None
    retrying: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class MaintenanceFinished(Event):
    """A retention/maintenance run ended (`status` completed or failed; `more` when a step
    hit its batch cap and the next run comes sooner)."""

    kind: ClassVar[str] = "maintenance.finished"
    run_id: str
    trigger: str
    status: str
    purged_memories: int = 0
    pruned_history: int = 0
    pruned_jobs: int = 0
    more: bool = False
    elapsed_s: float = 0.0
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StatusChanged(Event):
    """A fact on the status board changed (`key` is its top-level name in /api/status)."""

    kind: ClassVar[str] = "status.changed"
    key: str


def known_kinds() -> frozenset[str]:
    """Every event kind defined so far (subclasses anywhere in the package count)."""
    found: set[str] = set()
    stack: list[type[Event]] = [Event]
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if cls is not Event:
            found.add(cls.kind)
    return frozenset(found)
