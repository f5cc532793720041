"""memory_history: the append-only audit trail of memory lifecycle events."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from signet_desktop.domain.memory import Actor, HistoryEvent, utc_now
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres, json_array_twin
from signet_desktop.storage.rows import from_row, rows_changed

INSERT_EVENT = """
INSERT INTO memory_history (
    id, memory_id, agent_id, event, old_content, new_content, changed_by, actor_type, reason,
    metadata, session_id, request_id, created_at
) VALUES (
    :id, :memory_id, :agent_id, :event, :old_content, :new_content, :changed_by, :actor_type,
    :reason, :metadata, :session_id, :request_id, :created_at
)
"""

LIST_EVENTS = """
SELECT id, memory_id, agent_id, event, old_content, new_content, changed_by, actor_type, reason,
       metadata, session_id, request_id, created_at
FROM memory_history
WHERE agent_id = :agent_id AND memory_id = :memory_id
ORDER BY created_at, rowid LIMIT :limit
"""
# PostgreSQL has no rowid: ties on created_at break by ctid, the row's place in the heap,
# which follows insertion order for this append-only table (rows are never updated).
LIST_EVENTS_PG = LIST_EVENTS.replace("rowid", "ctid")


def record_event(
    conn: Connection,
    *,
    memory_id: str,
    agent_id: str,
    event: str,
    actor: Actor,
    reason: str | None = None,
    old_content: str | None = None,
    new_content: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> str:
    """Append one history event; returns its id."""
    event_id = str(uuid.uuid4())
    conn.execute(
        INSERT_EVENT,
        {
            "id": event_id,
            "memory_id": memory_id,
            "agent_id": agent_id,
            "event": event,
            "old_content": old_content,
            "new_content": new_content,
            "changed_by": actor.changed_by,
            "actor_type": actor.actor_type,
            "reason": reason,
            "metadata": json.dumps(dict(metadata or {})),
            "session_id": actor.session_id,
            "request_id": actor.request_id,
            "created_at": utc_now(),
        },
    )
    return event_id


def list_events(conn: Connection, agent_id: str, memory_id: str, limit: int) -> list[HistoryEvent]:
    """A memory's events, oldest first, scoped to the agent."""
    rows = conn.execute(
        LIST_EVENTS_PG if is_postgres(conn) else LIST_EVENTS,
        {"agent_id": agent_id, "memory_id": memory_id, "limit": limit},
    ).fetchall()
    return [from_row(HistoryEvent, r, metadata=json.loads(r["metadata"] or "{}")) for r in rows]


# -- imported events (importers: the Signet workspace) --------------------------------------


@dataclass(frozen=True, slots=True)
class ImportedEvent:
    """A history event another store recorded, kept with its own id, actor and time."""

    id: str
    memory_id: str
    agent_id: str
    event: str
    changed_by: str
    created_at: str
    actor_type: str = "user"
    old_content: str | None = None
    new_content: str | None = None
    reason: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    session_id: str | None = None
    request_id: str | None = None


TAKEN_EVENT_IDS = "SELECT id FROM memory_history WHERE id IN (SELECT value FROM json_each(:ids))"
DELETE_FOR_MEMORIES = """
DELETE FROM memory_history
WHERE agent_id = :agent_id AND memory_id IN (SELECT value FROM json_each(:ids))
"""
DELETE_FOR_MEMORIES_PG = json_array_twin(DELETE_FOR_MEMORIES)


def taken_event_ids(conn: Connection, ids: Sequence[str]) -> set[str]:
    """Which of these ids a history row already has."""
    if not ids:
        return set()
    rows = conn.execute(TAKEN_EVENT_IDS, {"ids": json.dumps(list(ids))}).fetchall()
    return {str(r[0]) for r in rows}


def insert_imported_events(conn: Connection, events: Sequence[ImportedEvent]) -> None:
    """Append imported events as recorded (ids must be free: see `taken_event_ids`)."""
    conn.executemany(
        INSERT_EVENT,
        [
            {
                **{name: getattr(e, name) for name in ImportedEvent.__dataclass_fields__},
                "metadata": json.dumps(dict(e.metadata), ensure_ascii=False),
            }
            for e in events
        ],
    )


def delete_events_for(conn: Connection, agent_id: str, memory_ids: Sequence[str]) -> int:
    """Drop the trail of purged memories (a removed import source; the tombstone remains)."""
    if not memory_ids:
        return 0
    return rows_changed(
        conn,
        DELETE_FOR_MEMORIES_PG if is_postgres(conn) else DELETE_FOR_MEMORIES,
        {"agent_id": agent_id, "ids": json.dumps(list(memory_ids))},
    )


# -- retention (service/retention.py): events older than the history window ----------------

DELETE_OLDER_THAN = """
DELETE FROM memory_history WHERE rowid IN (
    SELECT rowid FROM memory_history WHERE created_at < :before LIMIT :limit)
"""
DELETE_OLDER_THAN_PG = DELETE_OLDER_THAN.replace("rowid", "ctid")


def delete_older_than(conn: Connection, before: str, limit: int) -> int:
    """Drop up to `limit` events recorded before `before` (the history retention window)."""
    return int(
        conn.execute(
            DELETE_OLDER_THAN_PG if is_postgres(conn) else DELETE_OLDER_THAN,
            {"before": before, "limit": limit},
        ).rowcount
    )
