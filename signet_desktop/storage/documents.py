"""`documents` and `document_memories`: the owner of document rows and their chunk links.

Every state change is guarded: nothing here moves a `deleted` document anywhere, so a worker
that lost a race with a delete finds zero rows changed and stops instead of bringing the
document back. Reads are scoped by agent; a row of another agent is simply not found.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from signet_desktop.domain.documents import Document, DocumentChunk, JobState
from signet_desktop.domain.memory import utc_now
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import insertion_tie
from signet_desktop.storage.rows import from_row

DOCUMENT_COLUMNS = (
    "id, agent_id, project, source_type, source_url, content_type, content_hash, title, status, "
    "error, connector_id, chunk_count, memory_count, metadata_json, created_at, updated_at, "
    "completed_at, deleted_at"
)

INSERT_DOCUMENT = """
INSERT INTO documents (id, agent_id, project, source_type, source_url, content_type,
                       content_hash, title, raw_content, status, connector_id, metadata_json,
                       created_at, updated_at)
VALUES (:id, :agent_id, :project, :source_type, :source_url, :content_type, :content_hash,
        :title, :raw_content, 'queued', :connector_id, :metadata_json, :now, :now)
"""

FIND_LIVE_BY_HASH = f"""
SELECT {DOCUMENT_COLUMNS} FROM documents
WHERE agent_id = :agent_id AND content_hash = :hash AND status <> 'deleted'
ORDER BY created_at LIMIT 1
"""

FIND_LIVE_BY_URL = f"""
SELECT {DOCUMENT_COLUMNS} FROM documents
WHERE agent_id = :agent_id AND source_url = :url AND status <> 'deleted'
ORDER BY created_at LIMIT 1
"""

GET_DOCUMENT = f"SELECT {DOCUMENT_COLUMNS} FROM documents WHERE id = :id AND agent_id = :agent_id"

GET_ANY = f"SELECT {DOCUMENT_COLUMNS} FROM documents WHERE id = :id"

RAW_CONTENT = "SELECT raw_content FROM documents WHERE id = :id"

LIST_DOCUMENTS = f"""
SELECT {DOCUMENT_COLUMNS} FROM documents
WHERE agent_id = :agent_id
  AND ((:status IS NULL AND status <> 'deleted') OR status = :status)
ORDER BY created_at DESC, id DESC
LIMIT :limit
"""

SET_STATUS = """
UPDATE documents SET status = :status, updated_at = :now
WHERE id = :id AND status <> 'deleted'
"""

SET_CONTENT = """
UPDATE documents
SET raw_content = :raw_content, content_hash = :content_hash,
    content_type = COALESCE(:content_type, content_type),
    title = CASE WHEN title IS NULL OR title = '' THEN :title ELSE title END,
    status = 'chunking', updated_at = :now
WHERE id = :id AND status <> 'deleted'
"""

SET_FAILED = """
UPDATE documents SET status = :status, error = :error, updated_at = :now
WHERE id = :id AND status <> 'deleted'
"""

SET_DONE = """
UPDATE documents
SET status = 'done', error = NULL, chunk_count = :chunk_count, memory_count = :memory_count,
    completed_at = :now, updated_at = :now
WHERE id = :id AND status <> 'deleted'
"""

SET_DELETED = """
UPDATE documents
SET status = 'deleted', deleted_at = :now, updated_at = :now,
    error = CASE WHEN :reason IS NULL THEN error ELSE :reason END
WHERE id = :id AND agent_id = :agent_id AND status <> 'deleted'
"""

LINK_CHUNK = """
INSERT INTO document_memories (document_id, memory_id, chunk_index)
VALUES (:document_id, :memory_id, :chunk_index)
ON CONFLICT DO NOTHING
"""

LINKED_CHUNKS = """
SELECT dm.chunk_index, dm.memory_id, m.content_hash FROM document_memories dm
JOIN memories m ON m.id = dm.memory_id
WHERE dm.document_id = :id
ORDER BY dm.chunk_index
"""

CHUNKS_PAGE = """
SELECT dm.chunk_index, dm.memory_id, m.content, m.content_hash, m.created_at, m.is_deleted
FROM document_memories dm JOIN memories m ON m.id = dm.memory_id
WHERE dm.document_id = :id
ORDER BY dm.chunk_index
LIMIT :limit OFFSET :offset
"""

# Chunk memories of this document that no other live document links: the ones its delete
# may soft-delete (an identical chunk shared with another document stays for that one, and a
# memory someone remembered by hand that a chunk deduplicated onto is never a chunk's).
OWNED_MEMORIES = """
SELECT dm.memory_id FROM document_memories dm
JOIN memories m ON m.id = dm.memory_id AND m.is_deleted = 0 AND m.type = 'document_chunk'
WHERE dm.document_id = :id
  AND NOT EXISTS (
    SELECT 1 FROM document_memories other
    JOIN documents d ON d.id = other.document_id AND d.status <> 'deleted'
    WHERE other.memory_id = dm.memory_id AND other.document_id <> dm.document_id)
ORDER BY dm.chunk_index
"""

CONNECTOR_OF_AGENT = "SELECT 1 FROM connectors WHERE id = :id AND agent_id = :agent_id"

LATEST_JOB = """
SELECT id, status, attempts, max_attempts, run_after, error FROM memory_jobs
WHERE document_id = :id
ORDER BY created_at DESC, {tie} DESC LIMIT 1
"""


def _document(row: Any) -> Document:
    return from_row(
        Document,
        row,
        chunk_count=int(row["chunk_count"]),
        memory_count=int(row["memory_count"]),
        metadata=json.loads(row["metadata_json"] or "{}"),
        job=None,  # not a column: callers that want the latest job attach it
    )


def insert_document(
    conn: Connection,
    document_id: str,
    *,
    agent_id: str,
    project: str | None,
    source_type: str,
    source_url: str | None,
    content_type: str | None,
    content_hash: str | None,
    title: str | None,
    raw_content: str | None,
    connector_id: str | None,
    metadata: Mapping[str, Any],
) -> None:
    """Insert a `queued` document (its ingest job is enqueued in the same transaction)."""
    conn.execute(
        INSERT_DOCUMENT,
        {
            "id": document_id,
            "agent_id": agent_id,
            "project": project,
            "source_type": source_type,
            "source_url": source_url,
            "content_type": content_type,
            "content_hash": content_hash,
            "title": title,
            "raw_content": raw_content,
            "connector_id": connector_id,
            "metadata_json": json.dumps(dict(metadata), ensure_ascii=False),
            "now": utc_now(),
        },
    )


def find_live(
    conn: Connection, agent_id: str, *, content_hash: str | None, url: str | None
) -> Document | None:
    """The agent's live (not deleted) document with this URL, else with this content hash."""
    if url is not None:
        row = conn.execute(FIND_LIVE_BY_URL, {"agent_id": agent_id, "url": url}).fetchone()
        if row is not None:
            return _document(row)
    if content_hash is not None:
        row = conn.execute(
            FIND_LIVE_BY_HASH, {"agent_id": agent_id, "hash": content_hash}
        ).fetchone()
        if row is not None:
            return _document(row)
    return None


def get_document(conn: Connection, agent_id: str, document_id: str) -> Document | None:
    """One document of this agent (deleted ones too), or None."""
    row = conn.execute(GET_DOCUMENT, {"id": document_id, "agent_id": agent_id}).fetchone()
    return _document(row) if row else None


def get_any(conn: Connection, document_id: str) -> Document | None:
    """A document by id whatever its agent (the worker holds only the job's id)."""
    row = conn.execute(GET_ANY, {"id": document_id}).fetchone()
    return _document(row) if row else None


def raw_content(conn: Connection, document_id: str) -> str | None:
    """The document's stored text (given, fetched or read), or None before extraction."""
    row = conn.execute(RAW_CONTENT, {"id": document_id}).fetchone()
    return None if row is None else row["raw_content"]


def list_documents(
    conn: Connection, agent_id: str, *, status: str | None, limit: int
) -> list[Document]:
    """The agent's documents newest first: live ones, or only those in `status`."""
    rows = conn.execute(LIST_DOCUMENTS, {"agent_id": agent_id, "status": status, "limit": limit})
    return [_document(r) for r in rows]


def latest_job(conn: Connection, document_id: str) -> JobState | None:
    """The document's newest ingest job (a read of the queue's table)."""
    row = conn.execute(LATEST_JOB.format(tie=insertion_tie(conn)), {"id": document_id}).fetchone()
    if row is None:
        return None
    return JobState(
        id=str(row["id"]),
        status=str(row["status"]),
        attempts=int(row["attempts"]),
        max_attempts=int(row["max_attempts"]),
        run_after=row["run_after"],
        error=row["error"],
    )


REQUEUE = """
UPDATE documents SET status = 'queued', updated_at = :now
WHERE id = :id AND status IN ('extracting', 'chunking', 'embedding', 'indexing')
"""


def requeue(conn: Connection, document_id: str) -> bool:
    """A document whose ingest stopped part-way is `queued` again (its job went back to
    pending); False when it was not mid-ingest (done, failed, deleted meanwhile)."""
    cursor = conn.execute(REQUEUE, {"id": document_id, "now": utc_now()})
    return int(cursor.rowcount) == 1


def set_status(conn: Connection, document_id: str, status: str) -> bool:
    """Move a live document to `status`; False when it was deleted meanwhile."""
    cursor = conn.execute(SET_STATUS, {"id": document_id, "status": status, "now": utc_now()})
    return int(cursor.rowcount) == 1


def set_content(
    conn: Connection,
    document_id: str,
    *,
    text: str,
    content_hash: str,
    content_type: str | None,
    title: str | None,
) -> bool:
    """Store the extracted text (title only where none was given); the document is `chunking`."""
    cursor = conn.execute(
        SET_CONTENT,
        {
            "id": document_id,
            "raw_content": text,
            "content_hash": content_hash,
            "content_type": content_type,
            "title": title,
            "now": utc_now(),
        },
    )
    return int(cursor.rowcount) == 1


def set_failed(conn: Connection, document_id: str, error: str) -> bool:
    """Record a failed attempt: `failed` with its error (a retry moves it on again)."""
    cursor = conn.execute(
        SET_FAILED, {"id": document_id, "status": "failed", "error": error, "now": utc_now()}
    )
    return int(cursor.rowcount) == 1


def set_done(conn: Connection, document_id: str, *, chunk_count: int, memory_count: int) -> bool:
    """Mark the document `done` with its counts (clears the error of an earlier attempt)."""
    cursor = conn.execute(
        SET_DONE,
        {
            "id": document_id,
            "chunk_count": chunk_count,
            "memory_count": memory_count,
            "now": utc_now(),
        },
    )
    return int(cursor.rowcount) == 1


def set_deleted(conn: Connection, agent_id: str, document_id: str, reason: str | None) -> bool:
    """Mark the document deleted (terminal); False when it already was or is not this agent's."""
    cursor = conn.execute(
        SET_DELETED, {"id": document_id, "agent_id": agent_id, "reason": reason, "now": utc_now()}
    )
    return int(cursor.rowcount) == 1


def link_chunks(conn: Connection, document_id: str, links: Iterable[tuple[int, str]]) -> int:
    """Link (chunk_index, memory_id) pairs to the document; existing links stay. Returns new."""
    added = 0
    for chunk_index, memory_id in links:
        cursor = conn.execute(
            LINK_CHUNK,
            {"document_id": document_id, "memory_id": memory_id, "chunk_index": chunk_index},
        )
        added += int(cursor.rowcount)
    return added


def linked_chunks(conn: Connection, document_id: str) -> list[tuple[int, str, str]]:
    """(chunk_index, memory_id, content_hash) of every chunk linked so far, in order."""
    rows = conn.execute(LINKED_CHUNKS, {"id": document_id})
    return [(int(r["chunk_index"]), str(r["memory_id"]), str(r["content_hash"])) for r in rows]


def chunks_page(
    conn: Connection, document_id: str, *, limit: int, offset: int
) -> list[DocumentChunk]:
    """One page of the document's chunks in order, with their memories' text."""
    rows = conn.execute(CHUNKS_PAGE, {"id": document_id, "limit": limit, "offset": offset})
    return [
        DocumentChunk(
            memory_id=str(r["memory_id"]),
            chunk_index=int(r["chunk_index"]),
            content=str(r["content"]),
            content_hash=str(r["content_hash"]),
            created_at=str(r["created_at"]),
            is_deleted=bool(r["is_deleted"]),
        )
        for r in rows
    ]


def connector_exists(conn: Connection, agent_id: str, connector_id: str) -> bool:
    """Is `connector_id` one of this agent's connectors? (a read of `connectors`)"""
    params = {"id": connector_id, "agent_id": agent_id}
    return conn.execute(CONNECTOR_OF_AGENT, params).fetchone() is not None


def owned_memory_ids(conn: Connection, document_id: str) -> list[str]:
    """Live chunk memories only this document links (what deleting it soft-deletes)."""
    return [str(r["memory_id"]) for r in conn.execute(OWNED_MEMORIES, {"id": document_id})]
