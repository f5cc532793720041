"""Recall's wire shapes: a search's hits with their channels, traversal and context evidence,
and the transcript turns that answered (Signet's field names; shared by HTTP and MCP)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from signet_desktop.domain.recall import (
    ChannelEvidence,
    ContextEvidence,
    RecallHit,
    RecallResult,
    TranscriptExcerpt,
    TurnHit,
)
from signet_desktop.domain.traversal import TraversalSummary

RECALL_TRUNCATE_CHARS = 500  # Signet's guardrails.recallTruncateChars
SCORE_DIGITS = 4


def _channel(evidence: ChannelEvidence | None) -> dict[str, Any] | None:
    if evidence is None:
        return None
    body: dict[str, Any] = {"score": round(evidence.score, SCORE_DIGITS), "rank": evidence.rank}
    if evidence.path:  # the traversal channel: the graph path that reached the memory
        body["path"] = [{"kind": s.kind, "id": s.id, "name": s.name} for s in evidence.path]
    return body


def traversal_json(summary: TraversalSummary) -> dict[str, Any]:
    """`meta.traversal`: whether the walk was partial (and why), its focal entities, paths."""
    return {
        "partial": summary.partial,
        "reasons": list(summary.reasons),
        "focalEntities": [
            {"id": e.id, "name": e.name, "mentions": e.mentions} for e in summary.focal_entities
        ],
        "paths": summary.paths,
    }


def _context(evidence: ContextEvidence | None) -> dict[str, Any] | None:
    if evidence is None:
        return None
    return {
        "who": round(evidence.who, SCORE_DIGITS),
        "session": round(evidence.session, SCORE_DIGITS),
        "neighbourId": evidence.neighbour_id,
    }


def hit_json(hit: RecallHit) -> dict[str, Any]:
    """One recall result, its content cut to RECALL_TRUNCATE_CHARS.

    `channels` holds every channel's evidence by name; `lexical` and `semantic` repeat those
    two (null when that channel did not return the memory) for clients of the older shape.
    `weak`: the hit failed the relevance test (docs/RECALL.md, "Relevance: weak hits"): among
    the best `limit`, but no evidence that it answers the query; the hooks never inject one.
    A document chunk's hit adds `document: {id, title, chunkIndex}`.
    """
    memory = hit.memory
    truncated = len(memory.content) > RECALL_TRUNCATE_CHARS
    body = {
        "id": memory.id,
        "content": memory.content[:RECALL_TRUNCATE_CHARS] if truncated else memory.content,
        "content_length": len(memory.content),
        "truncated": truncated,
        "score": round(hit.score, SCORE_DIGITS),
        "weak": hit.weak,
        "source": hit.source,
        "source_id": memory.source_id,
        "session_id": memory.session_id,
        "type": memory.type,
        "tags": list(memory.tags),
        "pinned": memory.pinned,
        "importance": memory.importance,
        "who": memory.who,
        "project": memory.project,
        "created_at": memory.created_at,
        "channels": {name: _channel(evidence) for name, evidence in hit.channels.items()},
        "lexical": _channel(hit.channels.get("lexical")),
        "semantic": _channel(hit.channels.get("semantic")),
        "context": _context(hit.context),
        "adjustments": [
            {"stage": a.stage, "factor": round(a.factor, SCORE_DIGITS), "reason": a.reason}
            for a in hit.adjustments
        ],
    }
    document = memory.metadata.get("document") if memory.type == "document_chunk" else None
    if isinstance(document, Mapping):  # which document and chunk a chunk hit came from
        body["document"] = {k: document.get(k) for k in ("id", "title", "chunkIndex")}
    return body


def excerpt_json(excerpt: TranscriptExcerpt) -> dict[str, Any]:
    """One `expand` excerpt: the conversation around where a recalled memory was said."""
    return {
        "source": "transcript",
        "memoryId": excerpt.memory_id,
        "sessionKey": excerpt.session_key,
        "harness": excerpt.harness,
        "project": excerpt.project,
        "updatedAt": excerpt.updated_at,
        "turnIndex": excerpt.turn_index,
        "turnCount": excerpt.turn_count,
        "excerpt": excerpt.text,
    }


def turn_hit_json(hit: TurnHit) -> dict[str, Any]:
    """One `transcript` channel hit, in the shape of a memory result (`kind: "transcript"`).

    `id` names the turn (`transcript:<sessionKey>#<turnIndex>`), `content` is the gated
    excerpt, `session_id` the session, `created_at` the turn's time; `transcript` holds the
    turn's facts, a question's `reply` (the next turn) and, for `expand`, its neighbouring
    turns (`context`).
    """
    evidence = {"score": round(hit.evidence.score, SCORE_DIGITS), "rank": hit.evidence.rank}
    return {
        "kind": "transcript",
        "id": hit.hit_id,
        "content": hit.excerpt,
        "content_length": len(hit.excerpt),
        "truncated": False,
        "score": round(hit.score, SCORE_DIGITS),
        "source": "transcript",
        "source_id": hit.source_id,
        "session_id": hit.session_key,
        "type": "transcript",
        "tags": [],
        "pinned": False,
        "importance": None,
        "who": hit.role,
        "project": hit.project,
        "created_at": hit.timestamp,
        "channels": {"transcript": evidence},
        "lexical": None,
        "semantic": None,
        "context": None,
        "adjustments": [],
        "transcript": {
            "sessionKey": hit.session_key,
            "turnIndex": hit.turn_index,
            "turnCount": hit.turn_count,
            "role": hit.role,
            "timestamp": hit.timestamp,
            "harness": hit.harness,
            "project": hit.project,
            "sourceId": hit.source_id,
            "reply": None
            if hit.reply is None
            else {
                "turnIndex": hit.reply.turn_index,
                "role": hit.reply.role,
                "text": hit.reply.text,
                "timestamp": hit.reply.timestamp,
            },
            "context": [
                {
                    "turnIndex": t.turn_index,
                    "role": t.role,
                    "text": t.text,
                    "timestamp": t.timestamp,
                }
                for t in hit.context
            ],
        },
    }


def recall_json(result: RecallResult) -> dict[str, Any]:
    """The recall / search response with per-channel evidence and stage timings.

    `results` holds the memories first (`kind: "memory"`), then the transcript channel's
    turns (`kind: "transcript"`) in the slots the memories left within `limit`.
    `supplementary` holds the transcript excerpts of `expand: true` (empty otherwise).
    """
    results = [{"kind": "memory", **hit_json(hit)} for hit in result.hits]
    results += [turn_hit_json(turn) for turn in result.turns]
    return {
        "results": results,
        "supplementary": [excerpt_json(excerpt) for excerpt in result.excerpts],
        "query": result.query,
        "method": result.method,
        "vectorCompleteness": result.vector_completeness,
        "searchedWindow": result.searched_window,
        "vectorIndex": result.vector_index,
        "meta": {
            "totalReturned": len(results),
            "memoryCount": len(result.hits),
            "transcriptCount": len(result.turns),
            "hasSupplementary": bool(result.excerpts),
            "noHits": not results,
            "notes": list(result.notes),
            "timings": {
                "totalMs": round(result.total_ms, 2),
                "stages": [
                    {"name": stage.name, "durationMs": round(stage.duration_ms, 2)}
                    for stage in result.timings
                ],
            },
            **({"traversal": traversal_json(result.traversal)} if result.traversal else {}),
        },
    }
