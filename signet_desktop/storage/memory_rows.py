"""The memory row as the readers select it: its column list and its mapping to a Memory."""

from __future__ import annotations

import json
from typing import Any

from signet_desktop.domain.memory import Memory

MEMORY_COLUMNS = (
    "id, agent_id, type, content, content_hash, importance, pinned, tags, who, project, scope, "
    "visibility, memory_kind, source_type, source_id, idempotency_key, session_id, metadata, "
    "created_at, updated_at, updated_by, version, is_deleted, deleted_at, access_count, "
    "last_accessed, embedding_model, confidence, extraction_status"
)


def row_to_memory(row: Any) -> Memory:
    """Map a row selected with MEMORY_COLUMNS to a Memory."""
    return Memory(
        id=row["id"],
        agent_id=row["agent_id"],
        type=row["type"],
        content=row["content"],
        content_hash=row["content_hash"],
        importance=float(row["importance"]),
        pinned=bool(row["pinned"]),
        tags=tuple(json.loads(row["tags"] or "[]")),
        who=row["who"],
        project=row["project"],
        scope=row["scope"],
        visibility=row["visibility"],
        memory_kind=row["memory_kind"],
        source_type=row["source_type"],
        source_id=row["source_id"],
        idempotency_key=row["idempotency_key"],
        session_id=row["session_id"],
        metadata=json.loads(row["metadata"] or "{}"),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        updated_by=row["updated_by"],
        version=int(row["version"]),
        is_deleted=bool(row["is_deleted"]),
        deleted_at=row["deleted_at"],
        access_count=int(row["access_count"]),
        last_accessed=row["last_accessed"],
        embedding_model=row["embedding_model"],
        confidence=float(row["confidence"]),
        extraction_status=row["extraction_status"],
    )
