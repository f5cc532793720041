"""Recall queries, their per-channel evidence, and results."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from signet_desktop.domain.memory import DEFAULT_AGENT_ID, Memory
from signet_desktop.domain.traversal import PathStep, TraversalSummary

MAX_RECALL_LIMIT = 100
# What a person calls a channel (`source`, `method`, the UI); any other channel is its own name.
CHANNEL_LABELS = {"lexical": "keyword", "semantic": "vector"}
# What `RecallQuery.as_of` takes, in every surface's help and error message.
AS_OF_FORMAT = "an ISO-8601 date or timestamp, e.g. 2025-01-31 or 2025-01-31T12:00:00Z"
AS_OF_HELP = (
    "when the question is asked, " + AS_OF_FORMAT + " (default: now): relative times in the "
    "query ('last week', 'two days ago', 'in May') are resolved from this day"
)


def channel_label(name: str) -> str:
    """`keyword` for lexical, `vector` for semantic, any other channel its own name."""
    return CHANNEL_LABELS.get(name, name)


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
    """One recall request. `channels` picks rankers (None: every channel the engine has)."""

    query: str
    agent_id: str = DEFAULT_AGENT_ID
    limit: int = 10
    filters: RecallFilters = field(default_factory=RecallFilters)
    keyword_query: str | None = None
    min_score: float | None = None
    expand: bool = False
    channels: tuple[str, ...] | None = None
    context: bool = True  # apply the context signals after fusion (benchmarks switch it off)
    stages: tuple[str, ...] | None = None  # post-fusion stages to run (None: every enabled one)
    relevant_only: bool = False  # drop weak hits (the hooks' relevance test, recall.calibration)
    # When the question is asked (ISO-8601; None: now): "last week" in it is resolved from here.
    as_of: str | None = None


@dataclass(frozen=True, slots=True)
class ChannelEvidence:
    """How one channel saw a memory: normalised score in [0, 1], raw score and 1-based rank.

    `path`: for the `traversal` channel, the graph path that reached the memory (its focal
    entity first); empty for every other channel.
    """

    score: float
    rank: int
    raw: float
    path: tuple[PathStep, ...] = ()


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
class HitAdjustment:
    """One post-fusion stage's change to a hit's score: new = old * factor (+ reason)."""

    stage: str  # the stage's name, e.g. "dampening.gravity" or "rerank"
    factor: float
    reason: str


def evidence_map(
    channels: Mapping[str, ChannelEvidence] | None = None,
) -> Mapping[str, ChannelEvidence]:
    """A read-only, ordered copy of per-channel evidence (channel name -> evidence).

    A mapping that is already read-only is kept as it is (hits are built from fused ones).
    """
    if isinstance(channels, MappingProxyType):
        return channels
    return MappingProxyType(dict(channels or {}))


@dataclass(frozen=True, slots=True)
class RecallHit:
    """A ranked memory with the evidence behind its score.

    `channels` maps each channel that returned the memory to its evidence, in the engine's
    channel order; a channel that did not return it is absent (stand-ins are never evidence).
    """

    memory: Memory
    score: float
    source: str  # hybrid (2+ channels) | keyword | vector | another channel's name
    channels: Mapping[str, ChannelEvidence] = field(default_factory=evidence_map, hash=False)
    context: ContextEvidence | None = None
    adjustments: tuple[HitAdjustment, ...] = ()  # post-fusion stages that changed the score
    weak: bool = False  # failed the relevance test (recall.calibration): ranked, not confident

    def __post_init__(self) -> None:
        object.__setattr__(self, "channels", evidence_map(self.channels))

    @property
    def lexical(self) -> ChannelEvidence | None:
        """`channels["lexical"]`, or None (kept for callers of the two-channel shape)."""
        return self.channels.get("lexical")

    @property
    def semantic(self) -> ChannelEvidence | None:
        """`channels["semantic"]`, or None (kept for callers of the two-channel shape)."""
        return self.channels.get("semantic")


@dataclass(frozen=True, slots=True)
class TranscriptExcerpt:
    """For `expand: true`: the retained conversation around where a recalled memory was said.

    `text` has passed the content-safety gate (redacted, or the withheld marker).
    """

    memory_id: str
    session_key: str
    harness: str | None
    project: str | None
    updated_at: str
    turn_index: int  # 0-based index of the matching turn in the session
    turn_count: int
    text: str


@dataclass(frozen=True, slots=True)
class TurnText:
    """One conversation turn as it may leave (gated): its index, speaker, text and time."""

    turn_index: int  # 0-based position in its session
    role: str
    text: str
    timestamp: str | None = None


@dataclass(frozen=True, slots=True)
class TurnHit:
    """A retained conversation turn the `transcript` channel found: evidence, not a memory.

    `excerpt` is the turn around the match, bounded and through the content-safety gate (a
    turn the gate withholds is never a hit). `reply`: when the turn asks something, the other
    speaker's next turn (the answer), gated. `context` (expand only) holds the neighbouring
    turns with the hit's own, gated the same way.
    """

    session_key: str
    turn_index: int
    turn_count: int
    role: str
    excerpt: str
    timestamp: str | None
    harness: str | None
    project: str | None
    source_id: str | None  # the import source that brought the session (None: captured)
    score: float
    evidence: ChannelEvidence
    context: tuple[TurnText, ...] = ()
    reply: TurnText | None = None  # a question's answer: the other speaker's next turn

    @property
    def hit_id(self) -> str:
        """A stable name for the hit (`transcript:<session key>#<turn index>`)."""
        return f"transcript:{self.session_key}#{self.turn_index}"


@dataclass(frozen=True, slots=True)
class StageTiming:
    """Wall time of one recall stage."""

    name: str
    duration_ms: float


@dataclass(frozen=True, slots=True)
class RecallResult:
    """Ranked hits plus what a person needs to trust them."""

    query: str
    method: str  # hybrid | keyword | vector | another channel's name
    hits: tuple[RecallHit, ...]
    timings: tuple[StageTiming, ...]
    total_ms: float
    # complete | partial | approximate | recent-window | unavailable
    vector_completeness: str | None = None
    searched_window: int | None = None
    # exact-in-memory | exact-vec0 | binary-prefilter | recent-window | hnsw-usearch |
    # hnsw-pgvector (None: no vector search)
    vector_index: str | None = None
    notes: tuple[str, ...] = ()  # why a channel was skipped or partial, for meta.notes
    excerpts: tuple[TranscriptExcerpt, ...] = ()  # expand: true only
    traversal: TraversalSummary | None = None  # what the traversal channel did (meta.traversal)
    turns: tuple[TurnHit, ...] = ()  # the transcript channel's hits, after the memories
