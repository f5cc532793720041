"""Wire shapes: domain values rendered with Signet's JSON field names, for HTTP and MCP alike.

This is the one place that knows field names on the wire (snake_case where Signet uses it,
camelCase where Signet does). Surfaces render through these functions and never build their
own dicts from domain values, so HTTP, MCP and the SSE stream cannot drift apart.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from signet_desktop.domain.events import Event
from signet_desktop.domain.memory import HistoryEvent, Memory
from signet_desktop.domain.recall import ChannelEvidence, ContextEvidence, RecallHit, RecallResult
from signet_desktop.embedding.generations import Generation
from signet_desktop.embedding.tracker import Coverage
from signet_desktop.embedding.vectors import ResyncReport
from signet_desktop.service.embeddings import (
    BackfillOutcome,
    EmbeddingAudit,
    EmbeddingStatus,
    MirrorHealth,
)
from signet_desktop.service.events import Delivery
from signet_desktop.service.facade import ServiceStatus
from signet_desktop.service.memories import MemoryPage, RememberOutcome
from signet_desktop.service.pipeline import PipelineStatus
from signet_desktop.service.workers import WorkerSnapshot

RATIO_DIGITS = 4
RECALL_TRUNCATE_CHARS = 500  # Signet's guardrails.recallTruncateChars
SCORE_DIGITS = 4

# -- memories ------------------------------------------------------------------------------


def memory_json(memory: Memory) -> dict[str, Any]:
    """Signet's field names for a memory."""
    return {
        "id": memory.id,
        "agent_id": memory.agent_id,
        "type": memory.type,
        "content": memory.content,
        "content_hash": memory.content_hash,
        "importance": memory.importance,
        "pinned": memory.pinned,
        "tags": list(memory.tags),
        "who": memory.who,
        "project": memory.project,
        "scope": memory.scope,
        "visibility": memory.visibility,
        "memory_kind": memory.memory_kind,
        "source_type": memory.source_type,
        "source_id": memory.source_id,
        "idempotency_key": memory.idempotency_key,
        "session_id": memory.session_id,
        "metadata": dict(memory.metadata),
        "created_at": memory.created_at,
        "updated_at": memory.updated_at,
        "updated_by": memory.updated_by,
        "version": memory.version,
        "is_deleted": memory.is_deleted,
        "deleted_at": memory.deleted_at,
        "access_count": memory.access_count,
        "last_accessed": memory.last_accessed,
        "embedding_model": memory.embedding_model,
    }


def history_event_json(event: HistoryEvent) -> dict[str, Any]:
    """Signet's field names for a history row."""
    return {
        "id": event.id,
        "memory_id": event.memory_id,
        "event": event.event,
        "old_content": event.old_content,
        "new_content": event.new_content,
        "changed_by": event.changed_by,
        "actor_type": event.actor_type,
        "reason": event.reason,
        "metadata": dict(event.metadata),
        "session_id": event.session_id,
        "request_id": event.request_id,
        "created_at": event.created_at,
    }


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


def page_json(page: MemoryPage) -> dict[str, Any]:
    """GET /api/memories: one page plus the scope's counts."""
    return {
        "memories": [memory_json(memory) for memory in page.memories],
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
        "history": [history_event_json(event) for event in events],
        "count": len(events),
    }


def change_json(status: str, memory: Memory) -> dict[str, Any]:
    """PATCH / DELETE / recover: what happened, and the memory as it is now."""
    return {
        "status": status,
        "id": memory.id,
        "version": memory.version,
        "memory": memory_json(memory),
    }


# -- recall -------------------------------------------------------------------------------


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


# -- embeddings ----------------------------------------------------------------------------


def coverage_json(coverage: Coverage) -> dict[str, Any]:
    """How many live memories have a current vector in a generation."""
    return {
        "generation": coverage.generation_id,
        "status": coverage.status,
        "total": coverage.total,
        "embedded": coverage.embedded,
        "missing": coverage.missing,
        "ratio": round(coverage.ratio, RATIO_DIGITS),
    }


def generation_json(generation: Generation) -> dict[str, Any]:
    """A generation as status and audit report it."""
    return {
        "id": generation.id,
        "provider": generation.provider,
        "model": generation.model,
        "dimensions": generation.dimensions,
        "vecTable": generation.vec_table,
        "status": generation.status,
        "createdAt": generation.created_at,
        "activatedAt": generation.activated_at,
        "retiredAt": generation.retired_at,
    }


def embedding_status_json(status: EmbeddingStatus) -> dict[str, Any]:
    """`/api/status` → `embedding: {provider, model, dimensions, generation, coverage}`."""
    coverage = status.coverage
    return {
        "provider": status.provider,
        "model": status.model,
        "dimensions": status.dimensions,
        "generation": None
        if coverage is None
        else {"id": coverage.generation_id, "status": coverage.status},
        "coverage": None if coverage is None else coverage_json(coverage),
        "vectorSearch": status.vector_search,
    }


def _mirror_json(mirror: MirrorHealth) -> dict[str, Any]:
    body: dict[str, Any] = {"enabled": mirror.enabled, "error": mirror.error}
    if mirror.missing is not None:
        body.update(missing=mirror.missing, orphans=mirror.orphans)
    return body


def embedding_audit_json(audit: EmbeddingAudit) -> dict[str, Any]:
    """GET /api/embeddings/status (`signet embed audit`)."""
    worker = audit.worker
    return {
        **embedding_status_json(audit.status),
        "generations": [
            {**generation_json(item.generation), "vectors": item.vectors}
            for item in audit.generations
        ],
        "mirror": _mirror_json(audit.mirror),
        "fallbackWindow": audit.fallback_window,
        "jobs": dict(audit.jobs),
        "worker": None
        if worker is None
        else {"lastError": worker.last_error, "lastStep": worker.last_step},
    }


def backfill_json(outcome: BackfillOutcome) -> dict[str, Any]:
    """POST /api/embeddings/backfill: a dry run's count, or what was embedded."""
    if outcome.dry_run:
        return {"dryRun": True, "generation": outcome.generation, "missing": outcome.missing_before}
    return {
        "dryRun": False,
        "generation": outcome.generation,
        "missingBefore": outcome.missing_before,
        "embedded": outcome.embedded,
        "skipped": outcome.skipped,
        "failed": outcome.failed,
        "error": outcome.error,
        "coverage": None if outcome.coverage is None else coverage_json(outcome.coverage),
    }


def resync_json(report: ResyncReport) -> dict[str, Any]:
    """POST /api/repair/resync-vec."""
    return {
        "generation": report.generation_id,
        "canonical": report.canonical,
        "mirroredBefore": report.mirrored_before,
        "added": report.added,
        "removed": report.removed,
        "rebuilt": report.rebuilt,
        "dryRun": report.dry_run,
    }


# -- pipeline -----------------------------------------------------------------------------


def worker_json(worker: WorkerSnapshot) -> dict[str, Any]:
    """One hosted worker in `GET /api/pipeline/status`."""
    return {
        "state": worker.state,
        "running": worker.state == "running",
        "paused": worker.paused,
        "jobTypes": list(worker.job_types),
        "concurrency": worker.concurrency,
        "error": worker.error,
    }


def pipeline_status_json(status: PipelineStatus) -> dict[str, Any]:
    """The wire shape of `GET /api/pipeline/status`."""
    return {
        "mode": status.mode,
        "paused": status.mode == "paused",
        "hosted": status.hosted,
        "workers": {w.name: worker_json(w) for w in status.workers},
        "queues": {name: dict(counts) for name, counts in status.queues.items()},
        "jobTypes": {name: dict(counts) for name, counts in status.job_types.items()},
    }


# -- status and events ---------------------------------------------------------------------


def service_status_json(status: ServiceStatus) -> dict[str, Any]:
    """The service's part of /api/status: database, vector, embedding and the daemon's facts."""
    return {
        "database": {
            "path": str(status.database.path),
            "sqliteVersion": status.database.sqlite_version,
            "migrations": status.database.migrations,
        },
        "vector": {
            "available": status.vector.available,
            "version": status.vector.version,
            "error": status.vector.error,
        },
        "embedding": embedding_status_json(status.embedding),
        **status.process,
    }


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def event_json(event: Event, seq: int | None = None) -> dict[str, Any]:
    """An event as the SSE stream sends it: `type`, `seq`, `at`, `agentId` and its fields."""
    body: dict[str, Any] = {"type": event.kind}
    if seq is not None:
        body["seq"] = seq
    for item in dataclasses.fields(event):
        value = getattr(event, item.name)
        body[_camel(item.name)] = list(value) if isinstance(value, tuple) else value
    return body


def delivery_json(delivery: Delivery) -> dict[str, Any]:
    """One delivered event with its bus sequence number."""
    return event_json(delivery.event, delivery.seq)
