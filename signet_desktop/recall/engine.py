"""Recall: run the channels, fuse their evidence, hydrate and time every stage.

The engine knows its channels only through `recall.channels.RecallChannel`: it starts every
selected channel, then finishes each in order on the caller's thread, so the semantic channel's
query embedding runs on a pool thread while BM25 runs here; all of it reads, never inside a
write transaction. Fusion (`recall.fusion`) blends the channels' evidence by their weights;
then the context signals (`recall.context`: who is named, session neighbours) adjust the fused
scores. `RecallQuery.channels` and `RecallQuery.context` pick the rankers, so benchmarks
compare lexical-only, vector-only, fusion-only and hybrid through this one implementation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from signet_desktop.domain.errors import InvalidInput
from signet_desktop.domain.recall import (
    AS_OF_FORMAT,
    MAX_RECALL_LIMIT,
    RecallHit,
    RecallQuery,
    RecallResult,
)
from signet_desktop.domain.time_expressions import anchor_date
from signet_desktop.embedding.priority import request_pool
from signet_desktop.recall.calibration import Calibration, is_relevant
from signet_desktop.recall.channels import (
    ChannelOutcome,
    ChannelRequest,
    RecallChannel,
    StageClock,
)
from signet_desktop.recall.context import ContextWeights, apply_context
from signet_desktop.recall.flat_share import DEFAULT_FLAT_SHARE, final_order
from signet_desktop.recall.fusion import (
    DEFAULT_ALPHA,
    DEFAULT_SINGLE,
    FusedHit,
    SingleChannelRule,
    channel_weights,
    check_weights,
    fuse,
    source_of,
)
from signet_desktop.recall.knn import SEMANTIC_TOP_K
from signet_desktop.recall.lexical import LEXICAL_TOP_K, LexicalChannel
from signet_desktop.recall.sanitize import query_tokens
from signet_desktop.recall.stages import PostFusionStage
from signet_desktop.recall.traversal import TraversalOutcome
from signet_desktop.recall.vector import SemanticChannel, UnconfiguredSemantic
from signet_desktop.storage import memories
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.handle import DatabaseHandle
from signet_desktop.storage.recall_context import candidate_context

MAX_QUERY_CHARS = 4000
DEFAULT_CANDIDATE_DEPTH = max(LEXICAL_TOP_K, SEMANTIC_TOP_K)  # each channel's top k (search.top_k)
# The default cut: only candidates with no evidence above the noise (weak hits stay, marked).
DEFAULT_MIN_SCORE = 0.01
NO_TERMS_NOTE = "the query has no searchable terms (only stop words or punctuation)"


def check_query(
    query: RecallQuery, channels: Sequence[str], stages: Sequence[str] | None = None
) -> None:
    """Reject malformed recall requests before any work (`channels`: the registered names)."""
    if not 1 <= query.limit <= MAX_RECALL_LIMIT:
        raise InvalidInput(f"limit must be between 1 and {MAX_RECALL_LIMIT}", code="bad_limit")
    if not query.query.strip():
        raise InvalidInput("query is empty", code="query_empty")
    if len(query.query) > MAX_QUERY_CHARS or "\x00" in query.query:
        raise InvalidInput(
            f"query must be at most {MAX_QUERY_CHARS} characters without NUL bytes",
            code="query_invalid",
        )
    if query.channels is not None and (not query.channels or set(query.channels) - {*channels}):
        raise InvalidInput(
            f"channels must be a non-empty subset of: {', '.join(channels)}", code="bad_channels"
        )
    if query.as_of is not None and anchor_date(query.as_of) is None:
        raise InvalidInput(f"as_of must be {AS_OF_FORMAT}", code="bad_as_of")
    if stages is not None and query.stages is not None and set(query.stages) - {*stages}:
        raise InvalidInput(
            f"stages must be a subset of: {', '.join(stages) or '(none registered)'}",
            code="bad_stages",
        )


def default_channels(semantic: SemanticChannel | None) -> tuple[RecallChannel, ...]:
    """Lexical, then semantic (a stand-in that says so when semantic recall is not set up)."""
    return (LexicalChannel(), semantic if semantic is not None else UnconfiguredSemantic())


class RecallEngine:
    """The one recall implementation behind HTTP, CLI, hooks and MCP.

    `channels` are the rankers in evidence order (default: `default_channels(semantic)`; a new
    channel joins as `channels=(*default_channels(semantic), new)`), `weights` their fusion
    weights (default: `channel_weights(alpha)`, search.alpha being the semantic share).
    """

    def __init__(
        self,
        db: DatabaseHandle,
        *,
        min_score: float = DEFAULT_MIN_SCORE,
        semantic: SemanticChannel | None = None,
        channels: Sequence[RecallChannel] | None = None,
        alpha: float = DEFAULT_ALPHA,
        weights: Mapping[str, float] | None = None,
        single: SingleChannelRule = DEFAULT_SINGLE,
        context: ContextWeights | None = None,
        depth: int = DEFAULT_CANDIDATE_DEPTH,
        stages: Sequence[PostFusionStage] = (),
        flat_share: float = DEFAULT_FLAT_SHARE,
    ) -> None:
        if channels is not None and semantic is not None:
            raise ValueError("pass `semantic` or `channels`, not both")
        self._channels = tuple(channels) if channels is not None else default_channels(semantic)
        names = [channel.name for channel in self._channels]
        if not names or len(set(names)) != len(names):
            raise ValueError("recall needs at least one channel, each with its own name")
        self._weights = dict(weights) if weights is not None else channel_weights(alpha)
        check_weights(names, self._weights)
        self._db = db
        self._min_score = min_score
        self._single: SingleChannelRule = single
        self._context = context or ContextWeights()
        self._depth = depth
        self._stages = tuple(stages)
        if not 0.0 <= flat_share <= 1.0:
            raise ValueError("flat_share must be within [0, 1]")
        self._flat_share = flat_share
        stage_names = [stage.name for stage in self._stages]
        if len(set(stage_names)) != len(stage_names):
            raise ValueError("every post-fusion stage needs its own name")
        self._pool = request_pool(2, "recall-embed")

    @property
    def channel_names(self) -> tuple[str, ...]:
        """The registered channels' names, in evidence order."""
        return tuple(channel.name for channel in self._channels)

    @property
    def min_score(self) -> float:
        """The threshold a query without its own `min_score` is cut at."""
        return self._min_score

    @property
    def stage_names(self) -> tuple[str, ...]:
        """The registered post-fusion stages' names, in the order they run."""
        return tuple(stage.name for stage in self._stages)

    def close(self) -> None:
        """Stop the channels' pool threads (pending query embeddings are abandoned) and the
        background work of each channel and stage that has any (the semantic channel's index
        builds, the rerank stage's embedding thread)."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        for part in (*self._channels, *self._stages):
            close = getattr(part, "close", None)
            if callable(close):
                close()

    def recall(self, query: RecallQuery) -> RecallResult:
        """Rank the agent's live memories for `query`."""
        check_query(query, self.channel_names, self.stage_names)
        clock = StageClock()
        selected = [c for c in self._channels if query.channels is None or c.name in query.channels]
        requested = [channel.name for channel in selected]
        keyword_text = query.keyword_query or query.query
        if not query_tokens(keyword_text) and not query_tokens(query.query):
            method = _method([], requested)
            return self._result(query, clock, [], method, {}, (NO_TERMS_NOTE,))
        conn = self._db.reader()
        k = max(self._depth, query.limit)
        request = ChannelRequest(
            query.query, keyword_text, query.agent_id, query.filters, k, query.as_of
        )
        # Start all before finishing any: slow work (the query embedding) overlaps the rest.
        finishes = [
            (channel.name, channel.start(conn, request, self._pool)) for channel in selected
        ]
        outcomes = _filled({name: finish(clock) for name, finish in finishes}, clock)
        with clock.stage("fusion"):
            hits = {name: outcome.hits for name, outcome in outcomes.items()}
            ran = [name for name, outcome in outcomes.items() if outcome.available]
            fused = fuse(hits, self._weights, single=self._single, depth=k, ran=ran)
        calibration = _calibration(outcomes.values())
        if query.context and self._context.enabled and fused:
            with clock.stage("context"):
                facts = candidate_context(conn, query.agent_id, [h.memory_id for h in fused])
                fused = apply_context(fused, facts, query.query, self._context)
        for stage in self._stages:
            if fused and (query.stages is None or stage.name in query.stages):
                with clock.stage(stage.name):
                    fused = stage.apply(conn, request, fused, clock)
        threshold = self._min_score if query.min_score is None else query.min_score
        if query.relevant_only:
            fused = [h for h in fused if relevant(h, calibration)]
        fused = final_order(
            [h for h in fused if h.score >= threshold],
            limit=query.limit,
            top_k=self._depth,
            share=self._flat_share,
        )
        method = _method([name for name, o in outcomes.items() if o.available], requested)
        notes = tuple(o.note for o in outcomes.values() if o.note)
        return self._result(query, clock, fused, method, outcomes, notes, conn, calibration)

    def _result(
        self,
        query: RecallQuery,
        clock: StageClock,
        fused: list[FusedHit],
        method: str,
        outcomes: Mapping[str, ChannelOutcome],
        notes: tuple[str, ...],
        conn: Connection | None = None,
        calibration: Calibration | None = None,
    ) -> RecallResult:
        threshold = self._min_score if query.min_score is None else query.min_score
        ranked = [h for h in fused if h.score >= threshold][: query.limit]
        hits: tuple[RecallHit, ...] = ()
        if ranked and conn is not None:
            with clock.stage("hydrate"):
                rows = memories.get_memories(conn, query.agent_id, [h.memory_id for h in ranked])
            hits = tuple(
                RecallHit(
                    rows[h.memory_id],
                    h.score,
                    h.source,
                    h.channels,
                    h.context,
                    h.adjustments,
                    weak=not relevant(h, calibration),
                )
                for h in ranked
                if h.memory_id in rows
            )
        coverage = _coverage(outcomes.values())
        return RecallResult(
            query=query.query,
            method=method,
            hits=hits,
            timings=tuple(clock.stages),
            total_ms=clock.total_ms,
            vector_completeness=coverage.completeness if coverage else None,
            searched_window=coverage.searched_window if coverage else None,
            vector_index=coverage.index if coverage else None,
            notes=notes,
            traversal=next(
                (o.summary for o in outcomes.values() if isinstance(o, TraversalOutcome)), None
            ),
        )


def relevant(hit: FusedHit, calibration: Calibration | None) -> bool:
    """The relevance test (`recall.calibration.is_relevant`) on a hit's own evidence.

    Only lexical and semantic evidence is judged: a hit only other channels returned
    (traversal, hint) is weak, so the hooks never inject it. A new channel whose hits the
    hooks should inject says here how its evidence passes (e.g. its own cosine)."""
    semantic, lexical = hit.channels.get("semantic"), hit.channels.get("lexical")
    return is_relevant(
        semantic.raw if semantic is not None else None,
        lexical.score if lexical is not None else 0.0,
        calibration,
    )


def _calibration(outcomes: Iterable[ChannelOutcome]) -> Calibration | None:
    """The semantic channel's calibration, when it ran on a measured model."""
    return next((o.calibration for o in outcomes if o.available and o.calibration), None)


def _method(ran: Sequence[str], requested: Sequence[str]) -> str:
    """`hybrid` when two or more channels ran, else the one that did (or was asked first)."""
    return source_of(ran or requested[:1])


def _filled(outcomes: dict[str, ChannelOutcome], clock: StageClock) -> dict[str, ChannelOutcome]:
    """Each outcome with a `fill` gets the other channels' candidates, best rank first (the
    semantic channel scores those without a vector yet); the rest stand as they are."""
    if not any(o.fill for o in outcomes.values()):
        return outcomes
    filled = dict(outcomes)
    for name, outcome in outcomes.items():
        if outcome.fill is None:
            continue
        others = [
            (h.evidence.rank, h.memory_id) for n, o in outcomes.items() if n != name for h in o.hits
        ]
        candidates = list(dict.fromkeys(mid for _, mid in sorted(others, key=lambda p: p[0])))
        filled[name] = outcome.fill(candidates, clock)
    return filled


def _coverage(outcomes: Iterable[ChannelOutcome]) -> ChannelOutcome | None:
    """The outcome that reports vector completeness (the semantic channel's), if any ran."""
    return next((o for o in outcomes if o.completeness is not None), None)
