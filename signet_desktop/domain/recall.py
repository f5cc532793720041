"""Recall queries, their per-channel evidence, and results."""

from __future__ import annotations

from dataclasses import dataclass, field

from signet_desktop.domain.memory import DEFAULT_AGENT_ID, Memory

MAX_RECALL_LIMIT = 100


@dataclass(frozen=True, slots=True)
class RecallFilters:
    """Row filters every channel applies identically."""

    type: str | None = None
    tags: tuple[str, ...] = ()
    who: str | None = None
    project: str | None = None
    scope: str | None = None
    since: str | None = None
    until: str | None = None
    pinned: bool | None = None
    importance_min: float | None = None


@dataclass(frozen=True, slots=True)
class RecallQuery:
    """One recall request. `channels` picks rankers (benchmarks compare them)."""

    query: str
    agent_id: str = DEFAULT_AGENT_ID
    limit: int = 10
    filters: RecallFilters = field(default_factory=RecallFilters)
    keyword_query: str | None = None
    min_score: float | None = None
    expand: bool = False
    channels: tuple[str, ...] = ("lexical", "semantic")
    context: bool = True  # apply the context signals after fusion (benchmarks switch it off)


@dataclass(frozen=True, slots=True)
class ChannelEvidence:
    """How one channel saw a memory: normalised score in [0, 1], raw score and 1-based rank."""

    score: float
    rank: int
    raw: float


@dataclass(frozen=True, slots=True)
class ContextEvidence:
    """What the context signals added to a fused score (score = fused + who + session).

    `who`: the query names this memory's `who`. `session`: lent by the adjacent memory of the
    same session that scored best, `neighbour_id`.
    """

    who: float = 0.0
    session: float = 0.0
    neighbour_id: str | None = None


@dataclass(frozen=True, slots=True)
class RecallHit:
    """A ranked memory with the evidence behind its score."""

    memory: Memory
    score: float
    source: str  # hybrid | keyword | vector
    lexical: ChannelEvidence | None = None
    semantic: ChannelEvidence | None = None
    context: ContextEvidence | None = None


@dataclass(frozen=True, slots=True)
class StageTiming:
    """Wall time of one recall stage."""

    name: str
    duration_ms: float


@dataclass(frozen=True, slots=True)
class RecallResult:
    """Ranked hits plus what a person needs to trust them."""

    query: str
    method: str  # hybrid | keyword | vector
    hits: tuple[RecallHit, ...]
    timings: tuple[StageTiming, ...]
    total_ms: float
    vector_completeness: str | None = None  # complete | recent-window | unavailable
    searched_window: int | None = None
    notes: tuple[str, ...] = ()  # why a channel was skipped or partial, for meta.notes
