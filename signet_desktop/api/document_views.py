"""Wire shapes of /api/documents: Signet's snake_case document rows, chunks and outcomes."""

from __future__ import annotations

from typing import Any

from signet_desktop.domain.documents import (
    DeleteOutcome,
    Document,
    DocumentChunk,
    DocumentTicket,
    JobState,
)


def ticket_json(ticket: DocumentTicket) -> dict[str, Any]:
    """POST /api/documents: 201 `{id, status}`, or 200 with `deduplicated: true`."""
    body: dict[str, Any] = {"id": ticket.id, "status": ticket.status}
    if ticket.deduplicated:
        body["deduplicated"] = True
    return body


def job_json(job: JobState | None) -> dict[str, Any] | None:
    if job is None:
        return None
    return {
        "id": job.id,
        "status": job.status,
        "attempts": job.attempts,
        "max_attempts": job.max_attempts,
        "retry_at": job.run_after if job.status == "pending" else None,
        "error": job.error,
    }


def document_json(document: Document, *, with_job: bool = False) -> dict[str, Any]:
    """One document (without its raw content); `job` (its latest ingest job) on the detail."""
    body: dict[str, Any] = {
        "id": document.id,
        "agent_id": document.agent_id,
        "project": document.project,
        "source_type": document.source_type,
        "source_url": document.source_url,
        "content_type": document.content_type,
        "content_hash": document.content_hash,
        "title": document.title,
        "status": document.status,
        "error": document.error,
        "connector_id": document.connector_id,
        "chunk_count": document.chunk_count,
        "memory_count": document.memory_count,
        "metadata": dict(document.metadata),
        "created_at": document.created_at,
        "updated_at": document.updated_at,
        "completed_at": document.completed_at,
        "deleted_at": document.deleted_at,
    }
    if with_job:
        body["job"] = job_json(document.job)
    return body


def chunk_json(chunk: DocumentChunk) -> dict[str, Any]:
    return {
        "id": chunk.memory_id,
        "memory_id": chunk.memory_id,
        "chunk_index": chunk.chunk_index,
        "content": chunk.content,
        "content_hash": chunk.content_hash,
        "created_at": chunk.created_at,
        "is_deleted": chunk.is_deleted,
    }


def delete_json(outcome: DeleteOutcome) -> dict[str, Any]:
    return {
        "id": outcome.id,
        "deleted": True,
        "previous_status": outcome.previous_status,
        "memories_deleted": outcome.memories_deleted,
    }
