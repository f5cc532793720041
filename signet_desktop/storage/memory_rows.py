"""The memory row as the readers select it: its column list and its mapping to a Memory."""

from __future__ import annotations

import json
from typing import Any

from signet_desktop.domain.memory import Memory
from signet_desktop.storage.rows import from_row

MEMORY_COLUMNS = (
    "id, agent_id, type, content, content_hash, importance, pinned, tags, who, project, scope, "
    "visibility, memory_kind, source_type, source_id, idempotency_key, session_id, metadata, "
    "created_at, updated_at, updated_by, version, is_deleted, deleted_at, access_count, "
    "last_accessed, embedding_model, confidence, extraction_status"
)


def row_to_memory(row: Any) -> Memory:
    """Map a row selected with MEMORY_COLUMNS to a Memory."""
    return from_row(
        Memory,
        row,
        importance=float(row["importance"]),
        pinned=bool(row["pinned"]),
        tags=tuple(json.loads(row["tags"] or "[]")),
        metadata=json.loads(row["metadata"] or "{}"),
        version=int(row["version"]),
        is_deleted=bool(row["is_deleted"]),
        access_count=int(row["access_count"]),
        confidence=float(row["confidence"]),
    )
