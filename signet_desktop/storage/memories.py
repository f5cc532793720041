"""The memories table: inserts, dedupe lookups, scoped reads and lifecycle updates. The
inspector's browse reads live in memory_browse.py and are re-exported here for callers."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from signet_desktop.domain.content import content_hash, normalize_content
from signet_desktop.domain.memory import Memory, MemorySelector, NewMemory, utc_now
from signet_desktop.storage import counters
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres
from signet_desktop.storage.memory_browse import BROWSE_SORTS as BROWSE_SORTS
from signet_desktop.storage.memory_browse import browse_count as browse_count
from signet_desktop.storage.memory_browse import browse_memories as browse_memories
from signet_desktop.storage.memory_browse import browse_position as browse_position
from signet_desktop.storage.memory_cues import write_cues
from signet_desktop.storage.memory_rows import MEMORY_COLUMNS, row_to_memory
from signet_desktop.storage.rows import rows_changed, texts

INSERT_MEMORY = """
INSERT INTO memories (
    id, agent_id, type, content, normalized_content, content_hash, importance, pinned, tags,
    who, project, scope, visibility, memory_kind, source_type, source_id, idempotency_key,
    session_id, metadata, created_at, updated_at, updated_by, embedding_model
) VALUES (
    :id, :agent_id, :type, :content, :normalized_content, :content_hash, :importance, :pinned,
    :tags, :who, :project, :scope, :visibility, 'episodic', :source_type, :source_id,
    :idempotency_key, :session_id, :metadata, :created_at, :updated_at, :updated_by,
    :embedding_model
)
"""

FIND_BY_SOURCE = f"""
SELECT {MEMORY_COLUMNS} FROM memories
WHERE agent_id = :agent_id AND source_id = :source_id AND is_deleted = 0
  AND (:source_type IS NULL OR source_type = :source_type)
ORDER BY created_at LIMIT 1
"""

FIND_BY_IDEMPOTENCY = f"""
SELECT {MEMORY_COLUMNS} FROM memories
WHERE agent_id = :agent_id AND idempotency_key = :key AND is_deleted = 0 LIMIT 1
"""

FIND_BY_HASH = f"""
SELECT {MEMORY_COLUMNS} FROM memories
WHERE agent_id = :agent_id AND visibility = :visibility AND COALESCE(scope, '') = :scope
  AND content_hash = :hash AND is_deleted = 0 LIMIT 1
"""

# The same rule, for a content edit: another live row of the scope with the new hash.
FIND_CLASH = f"""
SELECT {MEMORY_COLUMNS} FROM memories
WHERE agent_id = :agent_id AND visibility = :visibility AND COALESCE(scope, '') = :scope
  AND content_hash = :hash AND is_deleted = 0 AND id <> :id LIMIT 1
"""

GET_MEMORY = f"SELECT {MEMORY_COLUMNS} FROM memories WHERE agent_id = :agent_id AND id = :id"

LIST_MEMORIES = f"""
SELECT {MEMORY_COLUMNS} FROM memories
WHERE agent_id = :agent_id AND is_deleted = 0 AND (:type IS NULL OR type = :type)
ORDER BY created_at DESC, seq DESC LIMIT :limit OFFSET :offset
"""

# A batch forget's selection: live rows of the agent matching every given criterion. Each
# fragment is fixed; a NULL parameter switches it off. Tags must all be present.
SELECT_LIVE = f"""
SELECT {MEMORY_COLUMNS} FROM memories
WHERE agent_id = :agent_id AND is_deleted = 0
  AND (:ids IS NULL OR id IN (SELECT value FROM json_each(:ids)))
  AND (:type IS NULL OR type = :type)
  AND (:who IS NULL OR who = :who)
  AND (:source_type IS NULL OR source_type = :source_type)
  AND (:since IS NULL OR created_at >= :since)
  AND (:until IS NULL OR created_at <= :until)
  AND (SELECT COUNT(*) FROM json_each(:tags) AS wanted
       WHERE EXISTS (SELECT 1 FROM json_each(memories.tags) AS have
                     WHERE have.value = wanted.value)) = json_array_length(:tags)
ORDER BY created_at DESC, seq DESC LIMIT :limit
"""

# PostgreSQL: the id list as a text[] and the wanted tags as one jsonb array the row's tags
# must contain (`@>`: every wanted tag present, as the json_each count above says).
SELECT_LIVE_PG = f"""
SELECT {MEMORY_COLUMNS} FROM memories
WHERE agent_id = :agent_id AND is_deleted = 0
  AND (CAST(:ids AS text[]) IS NULL OR id = ANY(CAST(:ids AS text[])))
  AND (:type IS NULL OR type = :type)
  AND (:who IS NULL OR who = :who)
  AND (:source_type IS NULL OR source_type = :source_type)
  AND (:since IS NULL OR created_at >= :since)
  AND (:until IS NULL OR created_at <= :until)
  AND tags @> CAST(:tags AS jsonb)
ORDER BY created_at DESC, seq DESC LIMIT :limit
"""

# Unary + on the scope columns keeps the planner on the id index; without it SQLite walks
# every row of the agent (measured: hydrate 40 ms instead of 0.3 ms at 100k memories).
GET_LIVE_BY_IDS = f"""
SELECT {MEMORY_COLUMNS} FROM memories
WHERE id IN (SELECT value FROM json_each(:ids)) AND +agent_id = :agent_id AND +is_deleted = 0
"""

# PostgreSQL: the id list as an array parameter (json_each is SQLite's).
GET_LIVE_BY_IDS_PG = f"""
SELECT {MEMORY_COLUMNS} FROM memories
WHERE id = ANY(:ids) AND agent_id = :agent_id AND is_deleted = 0
"""

SET_EMBEDDING_MODEL = """
UPDATE memories SET embedding_model = :model
WHERE id IN (SELECT value FROM json_each(:ids))
"""
SET_EMBEDDING_MODEL_PG = "UPDATE memories SET embedding_model = :model WHERE id = ANY(:ids)"


@dataclass(frozen=True, slots=True)
class MemoryStats:
    """Counts shown beside a memory listing."""

    total: int
    with_embeddings: int
    critical: int


def find_duplicate(conn: Connection, new: NewMemory) -> Memory | None:
    """The live memory `new` duplicates: by sourceId, then idempotencyKey, then content hash."""
    if new.source_id:
        row = conn.execute(
            FIND_BY_SOURCE,
            {"agent_id": new.agent_id, "source_id": new.source_id, "source_type": new.source_type},
        ).fetchone()
        if row:
            return row_to_memory(row)
    return _find_by_key_or_hash(conn, new)


def find_content_clash(conn: Connection, memory: Memory, new_content: str) -> Memory | None:
    """Another live memory of `memory`'s scope (agent, visibility, scope) whose content
    `new_content` would duplicate (the live-content uniqueness rule)."""
    row = conn.execute(
        FIND_CLASH,
        {
            "agent_id": memory.agent_id,
            "visibility": memory.visibility,
            "scope": memory.scope or "",
            "hash": content_hash(new_content),
            "id": memory.id,
        },
    ).fetchone()
    return row_to_memory(row) if row else None


def insert_memory(
    conn: Connection, memory_id: str, new: NewMemory, *, actor: str, embedding_model: str | None
) -> None:
    """Insert one validated memory row (FTS follows through its trigger, cues beside it)."""
    now = utc_now()
    created_at = new.created_at or now
    conn.execute(
        INSERT_MEMORY,
        {
            "id": memory_id,
            "agent_id": new.agent_id,
            "type": new.type,
            "content": new.content,
            "normalized_content": normalize_content(new.content),
            "content_hash": content_hash(new.content),
            "importance": new.importance,
            "pinned": int(new.pinned),
            "tags": json.dumps(list(new.tags)),
            "who": new.who,
            "project": new.project,
            "scope": new.scope,
            "visibility": new.visibility,
            "source_type": new.source_type,
            "source_id": new.source_id,
            "idempotency_key": new.idempotency_key,
            "session_id": new.session_id,
            "metadata": json.dumps(dict(new.metadata)),
            "created_at": created_at,
            "updated_at": now,
            "updated_by": actor,
            "embedding_model": embedding_model,
        },
    )
    hashed = content_hash(new.content)
    write_cues(conn, memory_id, new.agent_id, new.content, created_at, hashed)


def get_memory(conn: Connection, agent_id: str, memory_id: str) -> Memory | None:
    """The memory with this id in this agent's scope, deleted or not."""
    row = conn.execute(GET_MEMORY, {"agent_id": agent_id, "id": memory_id}).fetchone()
    return row_to_memory(row) if row else None


def get_memories(conn: Connection, agent_id: str, ids: Sequence[str]) -> dict[str, Memory]:
    """Live memories by id, in one query, scoped to the agent."""
    if not ids:
        return {}
    sql, params = _with_ids(conn, GET_LIVE_BY_IDS, GET_LIVE_BY_IDS_PG, ids, agent_id=agent_id)
    rows = conn.execute(sql, params).fetchall()
    return {row["id"]: row_to_memory(row) for row in rows}


def list_memories(
    conn: Connection, agent_id: str, limit: int, offset: int, memory_type: str | None = None
) -> list[Memory]:
    """Live memories, newest first, optionally of one type."""
    rows = conn.execute(
        LIST_MEMORIES,
        {"agent_id": agent_id, "limit": limit, "offset": offset, "type": memory_type},
    ).fetchall()
    return [row_to_memory(r) for r in rows]


def select_live(conn: Connection, agent_id: str, selector: MemorySelector) -> list[Memory]:
    """The agent's live memories matching every criterion of `selector`, newest first.

    `selector.ids` are matched within the agent only, so another agent's ids select nothing.
    """
    postgres = is_postgres(conn)
    ids = None if selector.ids is None else list(selector.ids)
    params = {
        "agent_id": agent_id,
        "ids": ids if postgres or ids is None else json.dumps(ids),
        "type": selector.type,
        "who": selector.who,
        "source_type": selector.source_type,
        "since": selector.since,
        "until": selector.until,
        "tags": json.dumps(list(selector.tags)),
        "limit": selector.limit,
    }
    sql = SELECT_LIVE_PG if postgres else SELECT_LIVE
    return [row_to_memory(r) for r in conn.execute(sql, params).fetchall()]


def count_live(conn: Connection, agent_id: str) -> int:
    """How many live memories the agent has (its maintained counter)."""
    return counters.agent_counts(conn, agent_id).live


def memory_stats(conn: Connection, agent_id: str) -> MemoryStats:
    """Total, embedded (a current vector in the active generation) and pinned live memories,
    from the counters the database maintains (storage/counters.py): no pass over the rows."""
    kept = counters.agent_counts(conn, agent_id)
    return MemoryStats(kept.live, counters.agent_embedded(conn, agent_id), kept.pinned)


def update_memory_fields(
    conn: Connection, memory: Memory, fields: dict[str, Any], *, actor: str
) -> None:
    """Write changed fields, bumping version; fields are column names from a fixed set."""
    allowed = {"content", "type", "tags", "importance", "pinned"}
    unknown = set(fields) - allowed
    if unknown:
        raise ValueError(f"cannot update columns {sorted(unknown)}")
    assignments = [f"{name} = :{name}" for name in sorted(fields)]
    params: dict[str, Any] = dict(fields)
    if "content" in fields:
        # What was derived from the old text is void: extraction starts over (Signet resets
        # it the same way) and the model is set again when the new vector is stored.
        assignments += [
            "normalized_content = :normalized_content",
            "content_hash = :content_hash",
            "extraction_status = 'none'",
            "extraction_model = NULL",
            "embedding_model = NULL",
        ]
        params["normalized_content"] = normalize_content(fields["content"])
        params["content_hash"] = content_hash(fields["content"])
    if "tags" in fields:
        params["tags"] = json.dumps(list(fields["tags"]))
    if "pinned" in fields:
        params["pinned"] = int(fields["pinned"])
    params.update(id=memory.id, agent_id=memory.agent_id, actor=actor, now=utc_now())
    conn.execute(
        f"UPDATE memories SET {', '.join(assignments)}, version = version + 1, "
        "update_count = update_count + 1, updated_at = :now, updated_by = :actor "
        "WHERE id = :id AND agent_id = :agent_id",
        params,
    )
    if "content" in fields:
        write_cues(
            conn,
            memory.id,
            memory.agent_id,
            str(fields["content"]),
            memory.created_at,
            params["content_hash"],
        )


def set_deleted(
    conn: Connection, memory: Memory, *, deleted: bool, reason: str | None, actor: str
) -> None:
    """Soft-delete or recover one memory, bumping its version."""
    now = utc_now()
    conn.execute(
        "UPDATE memories SET is_deleted = :deleted, deleted_at = :deleted_at, "
        "delete_reason = :reason, version = version + 1, updated_at = :now, updated_by = :actor "
        "WHERE id = :id AND agent_id = :agent_id",
        {
            "deleted": int(deleted),
            "deleted_at": now if deleted else None,
            "reason": reason if deleted else None,
            "now": now,
            "actor": actor,
            "id": memory.id,
            "agent_id": memory.agent_id,
        },
    )


def set_embedding_model(conn: Connection, memory_ids: Sequence[str], model: str) -> None:
    """Record which model's vector the memories now have (inside the vector's write)."""
    if memory_ids:
        conn.execute(
            *_with_ids(conn, SET_EMBEDDING_MODEL, SET_EMBEDDING_MODEL_PG, memory_ids, model=model)
        )


# -- imported memories (importers: the Signet workspace) ------------------------------------
# An imported row keeps what its source recorded (timestamps, who, version, deletion) and
# names its provenance in source_type / source_id (the import source) / source_path.

INSERT_IMPORTED = """
INSERT INTO memories (
    id, agent_id, type, category, content, normalized_content, content_hash, confidence,
    importance, pinned, tags, who, why, project, scope, visibility, memory_kind, source_type,
    source_id, source_path, runtime_path, idempotency_key, session_id, metadata, evidence_meta,
    created_at, updated_at, updated_by, occurred_at, last_accessed, access_count, version,
    update_count, manual_override, vector_clock, is_deleted, deleted_at, delete_reason,
    extraction_status, extraction_model, superseded_by, superseded_at, superseded_reason,
    stale_at, review_after
) VALUES (
    :id, :agent_id, :type, :category, :content, :normalized_content, :content_hash,
    :confidence, :importance, :pinned, :tags, :who, :why, :project, :scope, :visibility,
    :memory_kind, :source_type, :source_id, :source_path, :runtime_path, :idempotency_key,
    :session_id, :metadata, :evidence_meta, :created_at, :updated_at, :updated_by, :occurred_at,
    :last_accessed, :access_count, :version, :update_count, :manual_override, :vector_clock,
    :is_deleted, :deleted_at, :delete_reason, :extraction_status, :extraction_model,
    :superseded_by, :superseded_at, :superseded_reason, :stale_at, :review_after
)
"""

TAKEN_IDS = "SELECT id FROM memories WHERE id IN (SELECT value FROM json_each(:ids))"
TAKEN_IDS_PG = "SELECT id FROM memories WHERE id = ANY(:ids)"

IMPORTED_IDS = """
SELECT id FROM memories
WHERE agent_id = :agent_id AND source_type = :source_type AND source_id = :source_id
"""

DELETE_BY_IDS = """
DELETE FROM memories
WHERE agent_id = :agent_id AND id IN (SELECT value FROM json_each(:ids))
"""
DELETE_BY_IDS_PG = "DELETE FROM memories WHERE agent_id = :agent_id AND id = ANY(:ids)"


@dataclass(frozen=True, slots=True)
class ImportedMemory:
    """A memory brought in from another store, with the values that store recorded."""

    id: str
    agent_id: str
    content: str
    created_at: str
    updated_at: str
    source_type: str
    source_id: str
    type: str = "fact"
    category: str | None = None
    confidence: float = 1.0
    importance: float = 0.5
    pinned: bool = False
    tags: tuple[str, ...] = ()
    who: str | None = None
    why: str | None = None
    project: str | None = None
    scope: str | None = None
    visibility: str = "global"
    memory_kind: str = "episodic"
    source_path: str | None = None
    runtime_path: str | None = None
    idempotency_key: str | None = None
    session_id: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    evidence_meta: str | None = None
    updated_by: str = "system"
    occurred_at: str | None = None
    last_accessed: str | None = None
    access_count: int = 0
    version: int = 1
    update_count: int = 0
    manual_override: bool = False
    vector_clock: str | None = None
    is_deleted: bool = False
    deleted_at: str | None = None
    delete_reason: str | None = None
    extraction_status: str = "none"
    extraction_model: str | None = None
    superseded_by: str | None = None
    superseded_at: str | None = None
    superseded_reason: str | None = None
    stale_at: str | None = None
    review_after: str | None = None


def taken_ids(conn: Connection, ids: Sequence[str]) -> set[str]:
    """Which of these ids a memory row already has (any agent: ids are global)."""
    if not ids:
        return set()
    rows = conn.execute(*_with_ids(conn, TAKEN_IDS, TAKEN_IDS_PG, ids)).fetchall()
    return {str(r[0]) for r in rows}


def find_live_match(conn: Connection, memory: ImportedMemory) -> Memory | None:
    """The live memory an imported one would duplicate (idempotency key, then content hash)."""
    return _find_by_key_or_hash(conn, memory)


def insert_imported(conn: Connection, memory: ImportedMemory) -> None:
    """Insert one imported row as its source recorded it (FTS follows through its trigger)."""
    params = {name: getattr(memory, name) for name in ImportedMemory.__dataclass_fields__}
    params.update(
        normalized_content=normalize_content(memory.content),
        content_hash=content_hash(memory.content),
        tags=json.dumps(list(memory.tags)),
        metadata=json.dumps(dict(memory.metadata), ensure_ascii=False),
        pinned=int(memory.pinned),
        manual_override=int(memory.manual_override),
        is_deleted=int(memory.is_deleted),
    )
    conn.execute(INSERT_IMPORTED, params)
    said_at = memory.occurred_at or memory.created_at  # when its source says it happened
    write_cues(conn, memory.id, memory.agent_id, memory.content, said_at, params["content_hash"])


def imported_ids(conn: Connection, agent_id: str, source_type: str, source_id: str) -> list[str]:
    """Ids of the agent's memories (live or deleted) that one import source brought in."""
    return texts(
        conn,
        IMPORTED_IDS,
        {"agent_id": agent_id, "source_type": source_type, "source_id": source_id},
    )


def delete_memories(conn: Connection, agent_id: str, ids: Sequence[str]) -> int:
    """Purge rows for good (a removed import source); FTS follows through its trigger."""
    if not ids:
        return 0
    return rows_changed(
        conn, *_with_ids(conn, DELETE_BY_IDS, DELETE_BY_IDS_PG, ids, agent_id=agent_id)
    )


# -- retention (service/retention.py): tombstones past the recovery window -----------------

EXPIRED_TOMBSTONES = """
SELECT agent_id, id FROM memories
WHERE is_deleted = 1 AND deleted_at < :before
ORDER BY deleted_at LIMIT :limit
"""


def expired_tombstones(conn: Connection, before: str, limit: int) -> list[tuple[str, str]]:
    """(agent_id, id) of up to `limit` soft-deleted memories deleted before `before`, oldest
    first (the partial index on deleted_at)."""
    rows = conn.execute(EXPIRED_TOMBSTONES, {"before": before, "limit": limit}).fetchall()
    return [(str(r[0]), str(r[1])) for r in rows]


def _with_ids(
    conn: Connection, sqlite_sql: str, postgres_sql: str, ids: Sequence[str], **params: Any
) -> tuple[str, dict[str, Any]]:
    """A statement over a list of ids with its parameters, in the connection's dialect: the
    list as JSON text for json_each (SQLite), as an array for `= ANY` (PostgreSQL)."""
    if is_postgres(conn):
        return postgres_sql, {**params, "ids": list(ids)}
    return sqlite_sql, {**params, "ids": json.dumps(list(ids))}


def _find_by_key_or_hash(conn: Connection, memory: NewMemory | ImportedMemory) -> Memory | None:
    """The live memory with the same idempotency key, else with the same content hash."""
    if memory.idempotency_key:
        row = conn.execute(
            FIND_BY_IDEMPOTENCY, {"agent_id": memory.agent_id, "key": memory.idempotency_key}
        ).fetchone()
        if row:
            return row_to_memory(row)
    row = conn.execute(
        FIND_BY_HASH,
        {
            "agent_id": memory.agent_id,
            "visibility": memory.visibility,
            "scope": memory.scope or "",
            "hash": content_hash(memory.content),
        },
    ).fetchone()
    return row_to_memory(row) if row else None
