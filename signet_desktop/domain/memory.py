"""Memory rows, their history events, and the actor behind a change."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

DEFAULT_AGENT_ID = "default"
RECOVERY_WINDOW_DAYS = 30

MEMORY_TYPES = frozenset(
    {
        "fact", "preference", "decision", "rule", "learning", "issue", "episodic",
        "procedural", "semantic", "rationale", "constraint", "daily-log", "system",
        "document_chunk",
    }
)  # fmt: skip


def utc_now() -> str:
    """Current UTC time as ISO-8601 with milliseconds and a Z suffix."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_utc(stamp: str | None) -> datetime | None:
    """An ISO timestamp (`Z` or an offset; naive read as UTC); None when absent or unreadable."""
    if not stamp:
        return None
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Actor:
    """Who asked for a change, and the request it came in."""

    changed_by: str = "user"
    actor_type: str = "user"
    request_id: str | None = None
    session_id: str | None = None


@dataclass(frozen=True, slots=True)
class Memory:
    """One stored memory row, as the core sees it."""

    id: str
    agent_id: str
    type: str
    content: str
    content_hash: str
    importance: float
    pinned: bool
    tags: tuple[str, ...]
    who: str | None
    project: str | None
    scope: str | None
    visibility: str
    memory_kind: str
    source_type: str | None
    source_id: str | None
    idempotency_key: str | None
    session_id: str | None
    metadata: Mapping[str, Any]
    created_at: str
    updated_at: str
    updated_by: str
    version: int
    is_deleted: bool
    deleted_at: str | None
    access_count: int
    last_accessed: str | None
    embedding_model: str | None
    # Signet's columns, shown as stored: `confidence` (1.0 unless an import brought another
    # value) and `extraction_status` (`none` unless an import brought another; a content
    # edit resets it to `none`, as Signet's modify does).
    confidence: float = 1.0
    extraction_status: str = "none"


@dataclass(frozen=True, slots=True)
class NewMemory:
    """A validated memory about to be written."""

    agent_id: str
    content: str
    type: str = "fact"
    importance: float = 0.5
    pinned: bool = False
    tags: tuple[str, ...] = ()
    who: str | None = None
    project: str | None = None
    scope: str | None = None
    visibility: str = "global"
    source_type: str | None = None
    source_id: str | None = None
    idempotency_key: str | None = None
    session_id: str | None = None
    created_at: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class MemoryPatch:
    """Fields a modify request may change; None means unchanged."""

    content: str | None = None
    type: str | None = None
    tags: tuple[str, ...] | None = None
    importance: float | None = None
    pinned: bool | None = None


@dataclass(frozen=True, slots=True)
class HistoryEvent:
    """One immutable lifecycle event of a memory."""

    id: str
    memory_id: str
    agent_id: str
    event: str
    old_content: str | None
    new_content: str | None
    changed_by: str
    actor_type: str
    reason: str | None
    metadata: Mapping[str, Any]
    session_id: str | None
    request_id: str | None
    created_at: str


@dataclass(frozen=True, slots=True)
class MemoryChange:
    """A lifecycle change: the memory as it is now, its version before, and what changed.

    `changed` names the fields a modify changed (empty: nothing changed, the version stays).
    A content change also says what became of the vector (`vector`: stored, pending, queued
    or none, as remember's `vectorStatus`) and which derived rows it flagged for review.
    """

    memory: Memory
    previous_version: int
    changed: tuple[str, ...] = ()
    vector: str | None = None
    flagged: tuple[str, ...] = ()

    @property
    def new_version(self) -> int:
        """The version after the change (equal to `previous_version` when nothing changed)."""
        return self.memory.version


@dataclass(frozen=True, slots=True)
class MemorySelector:
    """Which live memories a batch forget targets; every given criterion must match.

    `ids` None means "any id" (then at least one filter is needed); `order` ranks the result
    (e.g. recall's ranking of a query) and `scores` carries that ranking's scores.
    """

    ids: tuple[str, ...] | None = None
    type: str | None = None
    tags: tuple[str, ...] = ()
    who: str | None = None
    source_type: str | None = None
    since: str | None = None
    until: str | None = None
    limit: int = 20
    scores: Mapping[str, float] = field(default_factory=dict)

    @property
    def has_filters(self) -> bool:
        """Whether any column filter is set (beyond ids)."""
        values = (self.type, self.who, self.source_type, self.since, self.until)
        return bool(self.tags) or any(value is not None for value in values)


@dataclass(frozen=True, slots=True)
class ForgetCandidate:
    """One live memory a batch forget would delete."""

    id: str
    score: float
    pinned: bool
    version: int


@dataclass(frozen=True, slots=True)
class ForgetPreview:
    """What a batch forget would delete, and the token an execute of it must present."""

    candidates: tuple[ForgetCandidate, ...]
    requires_confirm: bool
    confirm_token: str


@dataclass(frozen=True, slots=True)
class ItemOutcome:
    """What a batch did to one memory: a status (Signet's names) and the versions around it."""

    id: str
    status: str
    current_version: int | None = None
    new_version: int | None = None
    changed: tuple[str, ...] = ()
    error: str | None = None
    vector: str | None = None  # a content change: what became of the vector
    duplicate_of: str | None = None  # duplicate_content_hash: the live memory holding it


@dataclass(frozen=True, slots=True)
class ForgetBatchOutcome:
    """An executed batch forget: how many matched, were deleted, were skipped as pinned."""

    candidates: int
    deleted: int
    pinned: int
    results: tuple[ItemOutcome, ...]


@dataclass(frozen=True, slots=True)
class BatchPatch:
    """One entry of a batch modify: the memory, its patch, and its own reason/version."""

    id: str
    patch: MemoryPatch
    reason: str | None = None
    if_version: int | None = None
