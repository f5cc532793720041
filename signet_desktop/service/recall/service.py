"""The recall capability: one ranked search behind HTTP, MCP, hooks, the CLI and the inspector.

Results leave through the content-safety gate: each hit's content as it may enter a prompt
(secrets redacted; an unsafe memory's text replaced by the withheld marker — its id, scores
and evidence stay). Callers that gate themselves (hook injection, which leaves a withheld
memory out instead of showing the marker) ask for `gated=False`.

`expand: true` joins bounded transcript excerpts to the result: the session keys of the hits
are looked up in `session_transcripts` in one batch (agent-scoped), the turns around each
memory's match are cut to a budget (`recall/expand.py`), and every excerpt passes the
content-safety gate before it leaves, like any other prompt-facing text.

The `transcript` channel (`service/transcripts/recall.py`) runs after the memories: retained
conversation turns fill the slots the memories left within `limit`, scoped to the agent (and
the project filter), gated and deduplicated against the memories returned. It is selected like
any channel (`RecallQuery.channels`; None runs it) and skipped when a memory-only filter (type,
tags, who, scope, pinned, importance) is set, since no turn has those. It runs only when the
memories left a slot (then on the caller's thread, timed as stage `transcript`): started
beside the memory channels on its own thread instead, it overlapped the query embedding but
cost every recall CPU on a busy 2-core machine (docs/RECALL.md, "The transcript channel").
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

from signet_desktop.domain import scope
from signet_desktop.domain.memory import Memory
from signet_desktop.domain.recall import (
    RecallHit,
    RecallQuery,
    RecallResult,
    StageTiming,
    TranscriptExcerpt,
    TurnHit,
)
from signet_desktop.recall import expand
from signet_desktop.recall.ann import AnnIndexes, AnnStatus
from signet_desktop.recall.engine import RecallEngine, check_query
from signet_desktop.recall.transcript_channel import NAME as TRANSCRIPT
from signet_desktop.recall.transcript_channel import TurnScope
from signet_desktop.service.recall.telemetry import SearchTelemetry
from signet_desktop.service.safety.service import policy_gate
from signet_desktop.service.transcripts.recall import TranscriptRecall
from signet_desktop.storage.handle import DatabaseHandle
from signet_desktop.storage.transcript_reads import transcripts_for_sessions


class PromptGate(Protocol):
    """The content-safety gate (service/safety/service.py): texts as they may enter a prompt."""

    def prompt_texts(
        self, agent_id: str, source_kind: str, items: Sequence[tuple[str, str]]
    ) -> list[str]: ...


class RecallService:
    """Scope-checked access to the recall engine, plus transcript expansion."""

    def __init__(
        self,
        engine: RecallEngine,
        db: DatabaseHandle | None = None,
        gate: PromptGate | None = None,
        telemetry: SearchTelemetry | None = None,
        ann: AnnIndexes | None = None,
    ) -> None:
        self._engine = engine
        self._ann = ann  # the semantic channel's approximate index, for status
        self._db = db
        if telemetry is None and db is not None:
            telemetry = SearchTelemetry(db)  # disabled: records nothing, reads still answer
        self.telemetry = telemetry
        # Without the service's ledger-backed gate, the policy alone (same verdicts, no cache).
        self._prompt_texts = policy_gate if gate is None else gate.prompt_texts
        self._turns = None if db is None else TranscriptRecall(db, self._prompt_texts)

    @property
    def channel_names(self) -> tuple[str, ...]:
        """Every channel a query may select: the engine's, then `transcript` (with a db)."""
        extra = (TRANSCRIPT,) if self._turns is not None else ()
        return (*self._engine.channel_names, *extra)

    def search(
        self,
        query: RecallQuery,
        *,
        gated: bool = True,
        turn_scope: TurnScope | None = None,
        recorded: bool = True,
    ) -> RecallResult:
        """Rank the agent's live memories for `query`, then fill the slots left with turns
        (InvalidInput on a bad query or agent). `turn_scope` replaces the turns' scope taken
        from the filters (a hook's: its project or none, never its own session). `recorded`
        False keeps the search out of the opt-in telemetry (a palette's as-you-type look)."""
        scope.check_agent_id(query.agent_id)
        check_query(query, self.channel_names)
        result = self._memories(query)
        if self.telemetry is not None and recorded:
            self.telemetry.observe(query, result)  # ids and scores only; off by default
        if gated:
            result = self._gate_hits(query.agent_id, result)
        result = self._with_turns(query, result, turn_scope)
        if not query.expand or self._db is None or not result.hits:
            return result
        started = time.perf_counter()
        excerpts = self._excerpts(query.agent_id, result.hits)
        took = (time.perf_counter() - started) * 1000
        return replace(
            result,
            excerpts=excerpts,
            timings=(*result.timings, StageTiming("expand", took)),
            total_ms=result.total_ms + took,
        )

    def _memories(self, query: RecallQuery) -> RecallResult:
        """The engine's answer, without the transcript channel (it runs after)."""
        if query.channels is None or TRANSCRIPT not in query.channels:
            return self._engine.recall(query)
        rest = tuple(name for name in query.channels if name != TRANSCRIPT)
        if rest:
            return self._engine.recall(replace(query, channels=rest))
        return RecallResult(query=query.query, method=TRANSCRIPT, hits=(), timings=(), total_ms=0)

    def _turn_scope(self, query: RecallQuery) -> TurnScope:
        filters = query.filters
        return TurnScope(
            query.agent_id,
            filters.project,
            "any" if filters.project is None else "exact",
            since=filters.since,
            until=filters.until,
        )

    def _with_turns(
        self, query: RecallQuery, result: RecallResult, turn_scope: TurnScope | None = None
    ) -> RecallResult:
        """The transcript channel's hits in the slots the memories left."""
        room = query.limit - len(result.hits)
        if self._turns is None or not self._runs_turns(query) or room <= 0:
            return result
        started = time.perf_counter()
        turns = self._turns.hits(
            query.keyword_query or query.query,
            turn_scope if turn_scope is not None else self._turn_scope(query),
            room,
            min_score=self._engine.min_score if query.min_score is None else query.min_score,
            memories=[hit.memory for hit in result.hits],
            expand=query.expand,
        )
        took = (time.perf_counter() - started) * 1000
        return replace(
            result,
            turns=turns,
            timings=(*result.timings, StageTiming(TRANSCRIPT, took)),
            total_ms=result.total_ms + took,
        )

    def _runs_turns(self, query: RecallQuery) -> bool:
        if self._turns is None or (query.channels is not None and TRANSCRIPT not in query.channels):
            return False
        f = query.filters
        memory_only = (f.type, f.who, f.scope, f.pinned, f.importance_min)
        return not f.tags and all(value is None for value in memory_only)

    def transcript_hits(
        self,
        text: str,
        turn_scope: TurnScope,
        room: int,
        *,
        min_score: float,
        memories: Sequence[Memory] = (),
        expand: bool = False,
    ) -> tuple[TurnHit, ...]:
        """The transcript channel alone (the hooks call it with their own scope and room)."""
        if self._turns is None:
            return ()
        scope.check_agent_id(turn_scope.agent_id)
        return self._turns.hits(
            text, turn_scope, room, min_score=min_score, memories=memories, expand=expand
        )

    def _gate_hits(self, agent_id: str, result: RecallResult) -> RecallResult:
        if not result.hits:
            return result
        items = [(hit.memory.id, hit.memory.content) for hit in result.hits]
        texts = self._prompt_texts(agent_id, "memory", items)
        hits = tuple(
            replace(hit, memory=replace(hit.memory, content=text))
            for hit, text in zip(result.hits, texts, strict=True)
        )
        return replace(result, hits=hits)

    def _excerpts(self, agent_id: str, hits: Sequence[RecallHit]) -> tuple[TranscriptExcerpt, ...]:
        keys = list(dict.fromkeys(h.memory.session_id for h in hits if h.memory.session_id))
        keys = keys[: expand.EXPAND_MAX_SESSIONS]
        if not keys or self._db is None:
            return ()
        rows = transcripts_for_sessions(self._db.reader(), agent_id, keys)
        drafts: list[TranscriptExcerpt] = []
        seen: set[tuple[str, int]] = set()
        budget = expand.EXPAND_MAX_CHARS
        for hit in hits:
            row = rows.get(hit.memory.session_id or "")
            if row is None or row.agent_id != agent_id or budget <= 0:
                continue
            cut = expand.excerpt(
                row.content, hit.memory.content, min(budget, expand.EXCERPT_MAX_CHARS)
            )
            if cut is None or (row.session_key, cut.turn_index) in seen:
                continue
            seen.add((row.session_key, cut.turn_index))
            budget -= len(cut.text)
            drafts.append(
                TranscriptExcerpt(
                    memory_id=hit.memory.id,
                    session_key=row.session_key,
                    harness=row.harness,
                    project=row.project,
                    updated_at=row.updated_at,
                    turn_index=cut.turn_index,
                    turn_count=cut.turn_count,
                    text=cut.text,
                )
            )
        return self._gated(agent_id, drafts)

    def _gated(
        self, agent_id: str, drafts: list[TranscriptExcerpt]
    ) -> tuple[TranscriptExcerpt, ...]:
        if not drafts:
            return ()
        texts = self._prompt_texts(
            agent_id, "transcript", [(d.session_key, d.text) for d in drafts]
        )
        return tuple(replace(draft, text=text) for draft, text in zip(drafts, texts, strict=True))

    def approximate_indexes(self) -> tuple[AnnStatus, ...] | None:
        """The approximate index's partitions opened since start (None: not configured)."""
        return None if self._ann is None else tuple(self._ann.statuses())

    def close(self) -> None:
        """Stop the query-embedding threads and store queued telemetry."""
        self._engine.close()
        if self.telemetry is not None:
            self.telemetry.close()
