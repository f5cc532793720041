"""The recall capability: one ranked search behind HTTP, MCP, hooks, the CLI and the inspector.

Results leave through the content-safety gate: each hit's content as it may enter a prompt
(secrets redacted; an unsafe memory's text replaced by the withheld marker — its id, scores
and evidence stay). Callers that gate themselves (hook injection, which leaves a withheld
memory out instead of showing the marker) ask for `gated=False`.

`expand: true` joins bounded transcript excerpts to the result: the session keys of the hits
are looked up in `session_transcripts` in one batch (agent-scoped), the turns around each
memory's match are cut to a budget (`recall/expand.py`), and every excerpt passes the
content-safety gate before it leaves, like any other prompt-facing text.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

from signet_desktop.domain import scope
from signet_desktop.domain.recall import (
    RecallHit,
    RecallQuery,
    RecallResult,
    StageTiming,
    TranscriptExcerpt,
)
from signet_desktop.recall import expand
from signet_desktop.recall.engine import RecallEngine
from signet_desktop.service.safety import policy_gate
from signet_desktop.service.search_telemetry import SearchTelemetry
from signet_desktop.storage.database import Database
from signet_desktop.storage.transcript_reads import transcripts_for_sessions


class PromptGate(Protocol):
    """The content-safety gate (service/safety.py): texts as they may enter a prompt."""

    def prompt_texts(
        self, agent_id: str, source_kind: str, items: Sequence[tuple[str, str]]
    ) -> list[str]: ...


class RecallService:
    """Scope-checked access to the recall engine, plus transcript expansion."""

    def __init__(
        self,
        engine: RecallEngine,
        db: Database | None = None,
        gate: PromptGate | None = None,
        telemetry: SearchTelemetry | None = None,
    ) -> None:
        self._engine = engine
        self._db = db
        if telemetry is None and db is not None:
            telemetry = SearchTelemetry(db)  # disabled: records nothing, reads still answer
        self.telemetry = telemetry
        # Without the service's ledger-backed gate, the policy alone (same verdicts, no cache).
        self._prompt_texts = policy_gate if gate is None else gate.prompt_texts

    def search(self, query: RecallQuery, *, gated: bool = True) -> RecallResult:
        """Rank the agent's live memories for `query` (InvalidInput on a bad query or agent)."""
        scope.check_agent_id(query.agent_id)
        result = self._engine.recall(query)
        if self.telemetry is not None:
            self.telemetry.observe(query, result)  # ids and scores only; off by default
        if gated:
            result = self._gate_hits(query.agent_id, result)
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

    def close(self) -> None:
        """Stop the query-embedding threads and store queued telemetry."""
        self._engine.close()
        if self.telemetry is not None:
            self.telemetry.close()
