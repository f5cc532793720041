"""Recall: run the channels, fuse their evidence, hydrate and time every stage.

The query embedding runs in a worker thread while BM25 runs on the caller's thread; both are
reads, never inside a write transaction. After fusion the context signals (`recall.context`:
who is named, session neighbours) adjust the fused scores. `RecallQuery.channels` and
`RecallQuery.context` pick the rankers, so benchmarks compare lexical-only, vector-only,
fusion-only and hybrid through this one implementation.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from signet_desktop.domain.errors import InvalidInput
from signet_desktop.domain.recall import (
    MAX_RECALL_LIMIT,
    RecallHit,
    RecallQuery,
    RecallResult,
    StageTiming,
)
from signet_desktop.embedding.generations import Generation
from signet_desktop.embedding.provider import EmbeddingError
from signet_desktop.recall.context import ContextWeights, apply_context
from signet_desktop.recall.fusion import (
    DEFAULT_ALPHA,
    DEFAULT_SINGLE,
    FusedHit,
    SingleChannelRule,
    fuse,
)
from signet_desktop.recall.lexical import LEXICAL_TOP_K, lexical_search
from signet_desktop.recall.sanitize import query_tokens
from signet_desktop.recall.term_counts import TermCounts
from signet_desktop.recall.vector import (
    SEMANTIC_TOP_K,
    SemanticChannel,
    SemanticOutcome,
    unavailable,
)
from signet_desktop.storage import memories
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.database import Database
from signet_desktop.storage.guard import assert_provider_call_allowed
from signet_desktop.storage.recall_context import candidate_context

log = logging.getLogger(__name__)

MAX_QUERY_CHARS = 4000
CHANNELS = frozenset({"lexical", "semantic"})
DEFAULT_EMBED_TIMEOUT_S = 5.0
DEFAULT_CANDIDATE_DEPTH = max(LEXICAL_TOP_K, SEMANTIC_TOP_K)  # each channel's top k (search.top_k)
NO_TERMS_NOTE = "the query has no searchable terms (only stop words or punctuation)"


class StageClock:
    """Collects named stage durations for `meta.timings`."""

    def __init__(self) -> None:
        self.stages: list[StageTiming] = []
        self._started = time.perf_counter()

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, (time.perf_counter() - started) * 1000)

    def add(self, name: str, duration_ms: float) -> None:
        self.stages.append(StageTiming(name, duration_ms))

    @property
    def total_ms(self) -> float:
        return (time.perf_counter() - self._started) * 1000


def check_query(query: RecallQuery) -> None:
    """Reject malformed recall requests before any work."""
    if not 1 <= query.limit <= MAX_RECALL_LIMIT:
        raise InvalidInput(f"limit must be between 1 and {MAX_RECALL_LIMIT}", code="bad_limit")
    if not query.query.strip():
        raise InvalidInput("query is empty", code="query_empty")
    if len(query.query) > MAX_QUERY_CHARS or "\x00" in query.query:
        raise InvalidInput(
            f"query must be at most {MAX_QUERY_CHARS} characters without NUL bytes",
            code="query_invalid",
        )
    unknown = set(query.channels) - CHANNELS
    if not query.channels or unknown:
        raise InvalidInput(
            "channels must be a non-empty subset of: lexical, semantic", code="bad_channels"
        )


@dataclass(frozen=True, slots=True)
class _Embedded:
    vector: npt.NDArray[np.float32] | None
    duration_ms: float
    error: str | None


class RecallEngine:
    """The one recall implementation behind HTTP, CLI, hooks and MCP."""

    def __init__(
        self,
        db: Database,
        *,
        min_score: float = 0.1,
        semantic: SemanticChannel | None = None,
        alpha: float = DEFAULT_ALPHA,
        single: SingleChannelRule = DEFAULT_SINGLE,
        context: ContextWeights | None = None,
        depth: int = DEFAULT_CANDIDATE_DEPTH,
        embed_timeout_s: float = DEFAULT_EMBED_TIMEOUT_S,
    ) -> None:
        self._db = db
        self._min_score = min_score
        self._semantic = semantic
        self._alpha = alpha
        self._single: SingleChannelRule = single
        self._context = context or ContextWeights()
        self._depth = depth
        self._term_counts = TermCounts()
        self._embed_timeout_s = embed_timeout_s
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="recall-embed")

    def close(self) -> None:
        """Stop the query-embedding threads (pending embeddings are abandoned)."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    def recall(self, query: RecallQuery) -> RecallResult:
        """Rank the agent's live memories for `query`."""
        check_query(query)
        clock = StageClock()
        if not query_tokens(query.keyword_query or query.query) and not query_tokens(query.query):
            return self._result(query, clock, [], _method(query, None), None, (NO_TERMS_NOTE,))
        conn = self._db.reader()
        k = max(self._depth, query.limit)
        semantic_wanted = "semantic" in query.channels
        target = self._target(conn) if semantic_wanted else None
        pending = self._start_embedding(query.query, target)
        lexical = []
        if "lexical" in query.channels:
            with clock.stage("lexical"):
                lexical = lexical_search(
                    conn,
                    query.keyword_query or query.query,
                    query.agent_id,
                    query.filters,
                    k=k,
                    term_counts=self._term_counts,
                )
        outcome = self._semantic_outcome(conn, query, target, pending, clock, k)
        with clock.stage("fusion"):
            fused = fuse(
                lexical,
                outcome.hits if outcome else [],
                alpha=self._alpha,
                single=self._single,
                depth=k,
            )
        if query.context and self._context.enabled and fused:
            with clock.stage("context"):
                facts = candidate_context(conn, query.agent_id, [h.memory_id for h in fused])
                fused = apply_context(fused, facts, query.query, self._context)
        method = _method(query, outcome)
        notes = (outcome.note,) if outcome and outcome.note else ()
        return self._result(query, clock, fused, method, outcome, notes, conn)

    def _target(self, conn: Connection) -> Generation | str:
        if self._semantic is None:
            return "semantic recall is not configured"
        return self._semantic.generation(conn)

    def _start_embedding(
        self, text: str, target: Generation | str | None
    ) -> Future[_Embedded] | None:
        if not isinstance(target, Generation) or self._semantic is None:
            return None
        # The embedding runs on a pool thread, so the caller's thread is checked here.
        assert_provider_call_allowed("recall query embedding")
        channel = self._semantic

        def run() -> _Embedded:
            started = time.perf_counter()
            try:
                vector = channel.embed_query(text)
                return _Embedded(vector, (time.perf_counter() - started) * 1000, None)
            except EmbeddingError as exc:
                log.warning("query embedding failed: %s", exc)
                return _Embedded(None, (time.perf_counter() - started) * 1000, str(exc))

        return self._pool.submit(run)

    def _semantic_outcome(
        self,
        conn: Connection,
        query: RecallQuery,
        target: Generation | str | None,
        pending: Future[_Embedded] | None,
        clock: StageClock,
        k: int,
    ) -> SemanticOutcome | None:
        if target is None:
            return None
        if isinstance(target, str) or pending is None or self._semantic is None:
            return unavailable(str(target))
        waited = time.perf_counter()
        try:
            embedded = pending.result(timeout=self._embed_timeout_s)
        except FutureTimeout:
            clock.add("embed_query", (time.perf_counter() - waited) * 1000)
            return unavailable(
                f"the embedder did not answer within {self._embed_timeout_s:g} s; "
                "results are lexical only"
            )
        clock.add("embed_query", embedded.duration_ms)
        if embedded.vector is None:
            return unavailable(f"the embedder failed ({embedded.error}); results are lexical only")
        with clock.stage("semantic"):
            return self._semantic.search(
                conn, target, embedded.vector, query.agent_id, query.filters, k=k
            )

    def _result(
        self,
        query: RecallQuery,
        clock: StageClock,
        fused: list[FusedHit],
        method: str,
        outcome: SemanticOutcome | None,
        notes: tuple[str, ...],
        conn: Connection | None = None,
    ) -> RecallResult:
        threshold = self._min_score if query.min_score is None else query.min_score
        ranked = [h for h in fused if h.score >= threshold][: query.limit]
        hits: tuple[RecallHit, ...] = ()
        if ranked and conn is not None:
            with clock.stage("hydrate"):
                rows = memories.get_memories(conn, query.agent_id, [h.memory_id for h in ranked])
            hits = tuple(
                RecallHit(rows[h.memory_id], h.score, h.source, h.lexical, h.semantic, h.context)
                for h in ranked
                if h.memory_id in rows
            )
        return RecallResult(
            query=query.query,
            method=method,
            hits=hits,
            timings=tuple(clock.stages),
            total_ms=clock.total_ms,
            vector_completeness=outcome.completeness if outcome else None,
            searched_window=outcome.searched_window if outcome else None,
            notes=notes,
        )


def _method(query: RecallQuery, outcome: SemanticOutcome | None) -> str:
    """hybrid when both channels ran, else the one that did."""
    semantic_ran = outcome is not None and outcome.completeness != "unavailable"
    if "lexical" in query.channels:
        return "hybrid" if semantic_ran else "keyword"
    return "vector"
