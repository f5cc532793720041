"""Transcript hits for recall: the `transcript` channel's turns, gated, deduplicated, bounded.

Memories stay first. The recall service asks for turns only to fill the slots the memories
left within `limit`, and this module drops a turn a returned memory already says (same session
and the memory's words within the turn, or the same text anywhere), so one fact never takes
two slots. Every turn passes the content-safety gate as a whole before any of it leaves: a
turn the policy withholds (prompt-injection text) is never a hit, in any surface; secrets are
redacted. The excerpt is the turn around the first matched word, at most EXCERPT_CHARS.
A turn that asks something (holds a `?`) matches a later question best — it repeats its words
— while the answer is the turn after it: such a hit carries that next turn as its `reply`
(the other speaker's, gated, at most REPLY_CHARS). `expand` adds the neighbouring turns,
gated the same way, within CONTEXT_CHARS.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from signet_desktop.domain.memory import Memory
from signet_desktop.domain.recall import TurnHit, TurnText
from signet_desktop.recall.sanitize import query_tokens, words
from signet_desktop.recall.term_counts import TermCounts
from signet_desktop.recall.transcript_channel import (
    TURN_FTS,
    TurnMatch,
    TurnScope,
    search_turns,
)
from signet_desktop.safety.policy import WITHHELD_MARKER
from signet_desktop.storage import transcript_turns as turn_rows
from signet_desktop.storage.handle import DatabaseHandle

Gate = Callable[[str, str, Sequence[tuple[str, str]]], list[str]]

EXCERPT_CHARS = 400  # one hit's excerpt
REPLY_CHARS = 400  # the reply a question's hit carries
CONTEXT_CHARS = 1_500  # one hit's expanded neighbourhood, every turn together
CONTEXT_TURNS = 1  # neighbours on each side for `expand`
LEAD_CHARS = 120  # text kept before the first matched word
OVERFETCH = 3  # candidates per free slot (some are deduplicated or withheld)
SAME_FACT = 0.8  # share of a memory's words a turn of its session must hold to be that memory
_ELLIPSIS = "…"
_SPACE = re.compile(r"\s+")


class TranscriptRecall:
    """Turn hits for one agent's recall (reads only; the gate scans in memory or trusts the
    ledger's current decisions, never writing)."""

    def __init__(self, db: DatabaseHandle, gate: Gate) -> None:
        self._db = db
        self._gate = gate
        self._counts = TermCounts(table=TURN_FTS)

    def hits(
        self,
        text: str,
        scope: TurnScope,
        room: int,
        *,
        min_score: float,
        memories: Sequence[Memory] = (),
        expand: bool = False,
    ) -> tuple[TurnHit, ...]:
        """Up to `room` turns in `scope` scoring at least `min_score`, best first: the
        channel's candidates, thresholded, deduplicated against `memories`, gated, cut."""
        if room <= 0:
            return ()
        conn = self._db.reader()
        found = search_turns(conn, text, scope, k=room * OVERFETCH, term_counts=self._counts)
        kept = [m for m in found if m.evidence.score >= min_score]
        kept = [m for m in kept if not said_by_memory(m, memories)]
        if not kept:
            return ()
        texts = self._gate(scope.agent_id, "transcript", [(_source(m), m.text) for m in kept])
        safe = [(m, t) for m, t in zip(kept, texts, strict=True) if t != WITHHELD_MARKER]
        tokens = query_tokens(text)
        hits: list[TurnHit] = []
        shown: set[tuple[str, int]] = set()  # turns already shown, replies included
        for match, said in safe:
            if len(hits) == room:
                break
            if (match.session_key, match.ordinal) in shown:
                continue
            context = self._context(scope.agent_id, match) if expand else ()
            hit = _hit(match, excerpt(said, tokens), len(hits) + 1, context)
            if "?" in said:
                hit = replace(hit, reply=self._reply(scope.agent_id, match))
            shown.add((match.session_key, match.ordinal))
            if hit.reply is not None:
                shown.add((match.session_key, hit.reply.turn_index))
            hits.append(hit)
        return tuple(hits)

    def _reply(self, agent_id: str, match: TurnMatch) -> TurnText | None:
        """The other speaker's next turn, gated and bounded (None: none, or withheld)."""
        rows = turn_rows.neighbours(
            self._db.reader(), agent_id, match.session_key, match.ordinal + 1, 0
        )
        if not rows or rows[0].role == match.role:
            return None
        row = rows[0]
        (text,) = self._gate(
            agent_id, "transcript", [(f"{match.session_key}#{row.ordinal}", row.text)]
        )
        if text == WITHHELD_MARKER:
            return None
        return TurnText(row.ordinal, row.role, excerpt(text, (), REPLY_CHARS), row.timestamp)

    def _context(self, agent_id: str, match: TurnMatch) -> tuple[TurnText, ...]:
        rows = turn_rows.neighbours(
            self._db.reader(), agent_id, match.session_key, match.ordinal, CONTEXT_TURNS
        )
        items = [(f"{match.session_key}#{r.ordinal}", r.text) for r in rows]
        texts = self._gate(agent_id, "transcript", items) if items else []
        turns = [
            TurnText(r.ordinal, r.role, t, r.timestamp)
            for r, t in zip(rows, texts, strict=True)
            if t != WITHHELD_MARKER
        ]
        return _fit_context(turns, match.ordinal)


def said_by_memory(match: TurnMatch, memories: Sequence[Memory]) -> bool:
    """Does a returned memory already carry this turn (it was made from it)?"""
    turn_words = words(match.text)
    flat = _flat(match.text)
    for memory in memories:
        if _flat(memory.content) == flat:
            return True
        if memory.session_id != match.session_key:
            continue
        wanted = words(memory.content)
        if wanted and len(wanted & turn_words) >= SAME_FACT * len(wanted):
            return True
    return False


def excerpt(text: str, tokens: Sequence[str], max_chars: int = EXCERPT_CHARS) -> str:
    """The turn (whitespace folded) from a little before its first matched word, bounded."""
    flat = _SPACE.sub(" ", text).strip()
    if len(flat) <= max_chars:
        return flat
    lowered = flat.lower()
    found = [i for i in (lowered.find(token[:5]) for token in tokens) if i >= 0]
    start = max(0, min(found) - LEAD_CHARS) if found else 0
    start = min(start, len(flat) - max_chars + 1)
    body = flat[start : start + max_chars - 2 * len(_ELLIPSIS)]
    return (_ELLIPSIS if start else "") + body.strip() + _ELLIPSIS


def _fit_context(turns: list[TurnText], focus: int) -> tuple[TurnText, ...]:
    """The neighbourhood within CONTEXT_CHARS: half for the hit's turn, the rest shared."""
    own = CONTEXT_CHARS // 2
    share = (CONTEXT_CHARS - own) // max(1, len(turns) - 1)
    out = []
    for turn in turns:
        room = own if turn.turn_index == focus else share
        text = turn.text if len(turn.text) <= room else turn.text[: room - 1] + _ELLIPSIS
        out.append(TurnText(turn.turn_index, turn.role, text, turn.timestamp))
    return tuple(out)


def _hit(match: TurnMatch, text: str, rank: int, context: tuple[TurnText, ...]) -> TurnHit:
    evidence = match.evidence
    return TurnHit(
        session_key=match.session_key,
        turn_index=match.ordinal,
        turn_count=match.turn_count,
        role=match.role,
        excerpt=text,
        timestamp=match.timestamp,
        harness=match.harness,
        project=match.project,
        source_id=match.source_id,
        score=evidence.score,
        evidence=type(evidence)(evidence.score, rank, evidence.raw),
        context=context,
    )


def _source(match: TurnMatch) -> str:
    return f"{match.session_key}#{match.ordinal}"


def _flat(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower()
