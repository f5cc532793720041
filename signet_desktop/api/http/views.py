"""Response bodies: core results rendered with Signet's JSON field names."""

from __future__ import annotations

from typing import Any

from signet_desktop.domain.memory import HistoryEvent, Memory
from signet_desktop.domain.recall import (
    ChannelEvidence,
    ContextEvidence,
    RecallHit,
    RecallResult,
)
from signet_desktop.service.memories import MemoryPage, RememberOutcome

RECALL_TRUNCATE_CHARS = 500  # Signet's guardrails.recallTruncateChars
SCORE_DIGITS = 4


def remember_json(outcome: RememberOutcome) -> dict[str, Any]:
    """The remember response (`structured` is accepted but not applied yet)."""
    memory = outcome.memory
    return {
        "id": memory.id,
        "type": memory.type,
        "tags": list(memory.tags),
        "pinned": memory.pinned,
        "importance": memory.importance,
        "content": memory.content,
        "embedded": outcome.embedded,
        "entities_linked": 0,
        "hints_written": 0,
        "structured": None,
        "structured_applied": False,
        "deduped": outcome.deduped,
    }


def _channel(evidence: ChannelEvidence | None) -> dict[str, Any] | None:
    if evidence is None:
        return None
    return {"score": round(evidence.score, SCORE_DIGITS), "rank": evidence.rank}


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
    """
    memory = hit.memory
    truncated = len(memory.content) > RECALL_TRUNCATE_CHARS
    return {
        "id": memory.id,
        "content": memory.content[:RECALL_TRUNCATE_CHARS] if truncated else memory.content,
        "content_length": len(memory.content),
        "truncated": truncated,
        "score": round(hit.score, SCORE_DIGITS),
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
    }


def recall_json(result: RecallResult) -> dict[str, Any]:
    """The recall / search response with per-channel evidence and stage timings."""
    return {
        "results": [hit_json(hit) for hit in result.hits],
        "query": result.query,
        "method": result.method,
        "vectorCompleteness": result.vector_completeness,
        "searchedWindow": result.searched_window,
        "meta": {
            "totalReturned": len(result.hits),
            "hasSupplementary": False,
            "noHits": not result.hits,
            "notes": list(result.notes),
            "timings": {
                "totalMs": round(result.total_ms, 2),
                "stages": [
                    {"name": stage.name, "durationMs": round(stage.duration_ms, 2)}
                    for stage in result.timings
                ],
            },
        },
    }


def page_json(page: MemoryPage) -> dict[str, Any]:
    """GET /api/memories: one page plus the scope's counts."""
    return {
        "memories": [memory.to_json() for memory in page.memories],
        "stats": {
            "total": page.stats.total,
            "withEmbeddings": page.stats.with_embeddings,
            "critical": page.stats.critical,
        },
    }


def history_json(memory_id: str, events: list[HistoryEvent]) -> dict[str, Any]:
    """GET /api/memory/{id}/history."""
    return {
        "memoryId": memory_id,
        "history": [event.to_json() for event in events],
        "count": len(events),
    }


def change_json(status: str, memory: Memory) -> dict[str, Any]:
    """PATCH / DELETE / recover: what happened, and the memory as it is now."""
    return {
        "status": status,
        "id": memory.id,
        "version": memory.version,
        "memory": memory.to_json(),
    }
