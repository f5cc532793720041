"""Recall: run the channels, fuse their evidence, hydrate and time every stage."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from signet_desktop.domain.errors import InvalidInput
from signet_desktop.domain.recall import (
    MAX_RECALL_LIMIT,
    RecallHit,
    RecallQuery,
    RecallResult,
    StageTiming,
)
from signet_desktop.recall.lexical import LEXICAL_TOP_K, lexical_search
from signet_desktop.storage import memories
from signet_desktop.storage.database import Database

MAX_QUERY_CHARS = 4000


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
            self.stages.append(StageTiming(name, (time.perf_counter() - started) * 1000))

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


class RecallEngine:
    """The one recall implementation behind HTTP, CLI, hooks and MCP."""

    def __init__(self, db: Database, *, min_score: float = 0.1) -> None:
        self._db = db
        self._min_score = min_score

    def recall(self, query: RecallQuery) -> RecallResult:
        """Rank the agent's live memories for `query`."""
        check_query(query)
        clock = StageClock()
        conn = self._db.reader()
        with clock.stage("lexical"):
            lexical = lexical_search(
                conn,
                query.keyword_query or query.query,
                query.agent_id,
                query.filters,
                k=max(LEXICAL_TOP_K, query.limit),
            )
        threshold = self._min_score if query.min_score is None else query.min_score
        ranked = [h for h in lexical if h.evidence.score >= threshold][: query.limit]
        with clock.stage("hydrate"):
            rows = memories.get_memories(conn, query.agent_id, [h.memory_id for h in ranked])
        hits = tuple(
            RecallHit(rows[h.memory_id], h.evidence.score, "keyword", lexical=h.evidence)
            for h in ranked
            if h.memory_id in rows
        )
        return RecallResult(
            query=query.query,
            method="keyword",
            hits=hits,
            timings=tuple(clock.stages),
            total_ms=clock.total_ms,
        )
