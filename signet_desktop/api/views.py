"""Wire shapes: domain values rendered with Signet's JSON field names, for HTTP and MCP alike.

This is the one place that knows field names on the wire (snake_case where Signet uses it,
camelCase where Signet does). Surfaces render through these functions and never build their
own dicts from domain values, so HTTP, MCP and the SSE stream cannot drift apart. Recall's
shapes are in `api/recall_views.py`, the graph's in `api/knowledge_views.py`, hooks' in
`api/hook_views.py`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from signet_desktop.api.knowledge_views import structured_json
from signet_desktop.domain.events import Event
from signet_desktop.domain.memory import (
    RECOVERY_WINDOW_DAYS,
    ForgetBatchOutcome,
    ForgetPreview,
    HistoryEvent,
    ItemOutcome,
    Memory,
    MemoryChange,
)
from signet_desktop.embedding.generations import Generation
from signet_desktop.embedding.tracker import Coverage
from signet_desktop.embedding.vectors import ResyncReport
from signet_desktop.projection.source import MapPoint
from signet_desktop.queue.jobs import Job
from signet_desktop.recall.ann import ANN_INDEX_KIND, AnnStatus
from signet_desktop.service.embeddings.service import (
    BackfillOutcome,
    EmbeddingAudit,
    EmbeddingStatus,
    MirrorHealth,
)
from signet_desktop.service.events import Delivery
from signet_desktop.service.facade import ServiceStatus
from signet_desktop.service.health import Health
from signet_desktop.service.memories.service import MemoryPage, RememberOutcome
from signet_desktop.service.pipeline.service import PipelineStatus
from signet_desktop.service.projection import JobStatus, ProjectionAnswer
from signet_desktop.service.workers import WorkerSnapshot

RATIO_DIGITS = 4

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
        "confidence": memory.confidence,
        "extraction_status": memory.extraction_status,
    }


def history_event_json(event: HistoryEvent) -> dict[str, Any]:
    """A history row under both of Signet's spellings: the SDK's snake_case names and the
    daemon docs' camelCase ones (`memoryId`, `oldContent`, ...) carry the same values."""
    body: dict[str, Any] = {
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
    body.update({camel(name): body[name] for name in HISTORY_CAMEL_FIELDS})
    return body


HISTORY_CAMEL_FIELDS = (
    "memory_id", "old_content", "new_content", "changed_by", "actor_type", "session_id",
    "request_id", "created_at",
)  # fmt: skip


def remember_json(outcome: RememberOutcome) -> dict[str, Any]:
    """The remember response; `structured_applied` when its `structured` block was written
    (with `entities_linked` entities linked and `hints_written` hints; `structured` says
    what: entity ids and claims written).

    `vectorStatus` says what `embedded: false` means: `pending` (committed, the vector follows
    from the batcher within moments; lexical recall finds it already), `queued` (a backfill
    job will make it), `none` (no embedder), `existing` (deduped), or `stored`.
    """
    memory, applied = outcome.memory, outcome.structured
    return {
        "id": memory.id,
        "type": memory.type,
        "tags": list(memory.tags),
        "pinned": memory.pinned,
        "importance": memory.importance,
        "content": memory.content,
        "embedded": outcome.embedded,
        "vectorStatus": outcome.vector,
        "entities_linked": applied.entities_linked if applied else 0,
        "hints_written": applied.hints_written if applied else 0,
        "structured": structured_json(applied),
        "structured_applied": applied is not None,
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


def change_json(status: str, change: MemoryChange) -> dict[str, Any]:
    """DELETE / recover: Signet's `{id, status, currentVersion, newVersion}`, plus the memory
    as it is now (`version` is `newVersion`, kept for older clients)."""
    memory = change.memory
    return {
        "id": memory.id,
        "status": status,
        "currentVersion": change.previous_version,
        "newVersion": change.new_version,
        "version": memory.version,
        "memory": memory_json(memory),
    }


def modify_json(change: MemoryChange) -> dict[str, Any]:
    """PATCH /api/memory/{id}: `updated`, or `no_changes` when every value was already so.

    `contentChanged` as Signet's; `embedded` is true when the new content's vector was
    stored with the change; `vectorStatus` (a content change only; else null) says what
    became of it, as remember's does (`pending`: it follows the write). `flaggedForReview`
    counts derived rows that cited the old text and are now up for Dreaming's review.
    """
    status = "updated" if change.changed else "no_changes"
    return {
        **change_json(status, change),
        "contentChanged": "content" in change.changed,
        "embedded": change.vector == "stored",
        "vectorStatus": change.vector,
        "flaggedForReview": len(change.flagged),
    }


def recover_json(change: MemoryChange) -> dict[str, Any]:
    """POST /api/memory/{id}/recover: the change plus the recovery window in days."""
    return {**change_json("recovered", change), "retentionDays": RECOVERY_WINDOW_DAYS}


def item_json(item: ItemOutcome) -> dict[str, Any]:
    """One memory's line in a batch reply (Signet's status names)."""
    body: dict[str, Any] = {"id": item.id, "status": item.status}
    if item.current_version is not None:
        body["currentVersion"] = item.current_version
    if item.new_version is not None:
        body["newVersion"] = item.new_version
    if item.status in {"updated", "no_changes"}:
        body.update(
            contentChanged="content" in item.changed,
            embedded=item.vector == "stored",
            vectorStatus=item.vector,
        )
    if item.duplicate_of is not None:
        body["duplicateMemoryId"] = item.duplicate_of
    if item.error is not None:
        body["error"] = item.error
    return body


def modify_batch_json(items: tuple[ItemOutcome, ...]) -> dict[str, Any]:
    """POST /api/memory/modify."""
    return {
        "total": len(items),
        "updated": sum(1 for item in items if item.status == "updated"),
        "results": [item_json(item) for item in items],
    }


def forget_preview_json(preview: ForgetPreview) -> dict[str, Any]:
    """POST /api/memory/forget with mode preview."""
    return {
        "mode": "preview",
        "count": len(preview.candidates),
        "requiresConfirm": preview.requires_confirm,
        "confirmToken": preview.confirm_token,
        "candidates": [
            {"id": c.id, "score": c.score, "pinned": c.pinned, "version": c.version}
            for c in preview.candidates
        ],
    }


def forget_batch_json(outcome: ForgetBatchOutcome) -> dict[str, Any]:
    """POST /api/memory/forget with mode execute (the SDK's and the docs' fields both)."""
    return {
        "mode": "execute",
        "count": outcome.candidates,
        "requested": outcome.candidates,
        "deleted": outcome.deleted,
        "pinned": outcome.pinned,
        "results": [item_json(item) for item in outcome.results],
    }


def job_json(job: Job) -> dict[str, Any]:
    """GET /api/memory/jobs/{id}: a queue row in the SDK's JobStatus shape (no lease token).

    A pending job that already failed an attempt is Signet's `retry_scheduled`.
    """
    status = job.status
    if status == "pending" and job.attempts > 0:
        status = "retry_scheduled"
    return {
        "id": job.id,
        "agent_id": job.agent_id,
        "memory_id": job.memory_id,
        "document_id": job.document_id,
        "job_type": job.job_type,
        "status": status,
        "attempts": job.attempts,
        "max_attempts": job.max_attempts,
        "next_attempt_at": job.run_after,
        "leased_at": job.leased_at,
        "completed_at": job.completed_at,
        "failed_at": job.failed_at,
        "error": job.error,
        "result": job.result,
        "created_at": job.created_at,
        "updated_at": job.updated_at,
    }


def error_details_json(code: str, details: Mapping[str, Any]) -> dict[str, Any]:
    """A core error's details as extra fields of its error body, camelCase (`currentVersion`).

    Signet names a refused lifecycle change by `status` (e.g. `version_conflict` with the
    `currentVersion`); errors that carry details get it beside our `code`, with the same value.
    """
    if not details:
        return {}
    extra = {camel(name): value for name, value in details.items()}
    return {**{k: v for k, v in extra.items() if k not in {"error", "code"}}, "status": code}


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


def embedding_gaps_json(audit: EmbeddingAudit) -> dict[str, Any]:
    """GET /api/repair/embedding-gaps: Signet's `{unembedded, total, coverage: "96.5%"}`.

    Without an embedder there is no generation to cover: the counts are null.
    """
    coverage = audit.status.coverage
    if coverage is None:
        return {"unembedded": None, "total": None, "coverage": None, "generation": None}
    return {
        "unembedded": coverage.missing,
        "total": coverage.total,
        "coverage": f"{coverage.ratio * 100:.1f}%",
        "generation": coverage.generation_id,
    }


def re_embed_json(outcome: BackfillOutcome, batch_size: int) -> dict[str, Any]:
    """POST /api/repair/re-embed: Signet's RepairResult `{action, success, affected, message}`,
    plus the backfill's own figures."""
    if outcome.dry_run:
        affected = min(outcome.missing_before, batch_size)
        message = f"would re-embed {affected} of {outcome.missing_before} missing memories"
    else:
        affected = outcome.embedded
        message = f"re-embedded {affected} memories"
        if outcome.failed:
            message += f"; {outcome.failed} failed"
    return {
        "action": "reEmbedMissingVectors",
        "success": outcome.dry_run or outcome.error is None,
        "affected": affected,
        "message": message,
        **backfill_json(outcome),
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
        "database": status.database.to_json(),
        "vector": {
            "available": status.vector.available,
            "version": status.vector.version,
            "error": status.vector.error,
            "approximateIndex": approximate_index_json(status.approximate),
        },
        "embedding": embedding_status_json(status.embedding),
        **status.process,
    }


def approximate_index_json(partitions: Sequence[AnnStatus] | None) -> dict[str, Any] | None:
    """/api/status `vector.approximateIndex`: the HNSW index's partitions a recall opened since
    start (a partition is only searched through it beyond `search.vectorExactMaxRows`)."""
    if partitions is None:
        return None
    return {
        "kind": ANN_INDEX_KIND,
        "partitions": [
            {
                "generationId": p.generation_id,
                "agentId": p.agent_id,
                "ready": p.ready,
                "building": p.building,
                "indexed": p.indexed,
                "delta": p.delta,
                "scalar": p.scalar,
                "fileBytes": p.file_bytes,
                "reason": p.reason or None,
            }
            for p in partitions
        ],
    }


def health_json(health: Health) -> dict[str, Any]:
    """Signet's composite `health: {score, status}` (computed by `service/health.py`)."""
    return {"score": health.score, "status": health.status}


def pipeline_flags_json(status: PipelineStatus) -> dict[str, Any]:
    """/api/status `pipelineV2`: Signet's flags, as this daemon has them (no extraction,
    graph or autonomous writer yet: those are off)."""
    return {
        "enabled": True,
        "paused": status.mode == "paused",
        "shadowMode": False,
        "mutationsFrozen": False,
        "graphEnabled": False,
        "autonomousEnabled": False,
        "extractionModel": None,
    }


def camel(name: str) -> str:
    """A snake_case field name as its camelCase wire key (`files_seen` -> `filesSeen`)."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def event_json(event: Event, seq: int | None = None) -> dict[str, Any]:
    """An event as the SSE stream sends it: `type`, `seq`, `at`, `agentId` and its fields."""
    body: dict[str, Any] = {"type": event.kind}
    if seq is not None:
        body["seq"] = seq
    for item in dataclasses.fields(event):
        value = getattr(event, item.name)
        body[camel(item.name)] = list(value) if isinstance(value, tuple) else value
    return body


def delivery_json(delivery: Delivery) -> dict[str, Any]:
    """One delivered event with its bus sequence number."""
    return event_json(delivery.event, delivery.seq)


# -- projection (the embedding map) ------------------------------------------------------------


def projection_node_json(point: MapPoint, coords: Sequence[float]) -> dict[str, Any]:
    """One node of Signet's projection: a memory's facts and its place (x, y[, z])."""
    node: dict[str, Any] = {"id": point.id, "x": float(coords[0]), "y": float(coords[1])}
    if len(coords) == 3:
        node["z"] = float(coords[2])
    node.update(
        content=point.preview,
        who=point.who or "unknown",
        importance=point.importance,
        type=point.type,
        tags=list(point.tags),
        pinned=point.pinned,
        sourceType=point.source_type or "memory",
        sourceId=point.source_id or point.id,
        createdAt=point.created_at,
    )
    return node


def _projection_job_json(job: JobStatus) -> dict[str, Any]:
    return {
        "state": job.state,
        "phase": job.phase,
        "fraction": round(job.fraction, RATIO_DIGITS),
        "points": job.points,
        "startedAt": job.started_at,
        "finishedAt": job.finished_at,
        "error": job.error,
    }


def projection_json(answer: ProjectionAnswer) -> dict[str, Any]:
    """GET /api/embeddings/projection: `ready` with nodes and edges, or `computing`."""
    total = len(answer.points)
    body: dict[str, Any] = {"status": answer.status, "dimensions": answer.dimensions}
    if answer.layout is None:
        body.update(
            total=total,
            message=f"UMAP projection of {total} vectors is computing; ask again shortly",
            progress=_projection_job_json(answer.job),
        )
        return body
    coords = answer.layout.coords.tolist()
    body.update(
        count=total,
        total=total,
        limit=total,
        offset=0,
        hasMore=False,
        method=answer.layout.method,
        cachedAt=answer.layout.cached_at,
        nodes=[projection_node_json(p, c) for p, c in zip(answer.points, coords, strict=True)],
        edges=[[a, b] for a, b in answer.layout.edges],
    )
    return body
