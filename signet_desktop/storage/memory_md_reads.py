"""Read-only queries over `memories` for the MEMORY.md projection (the owner stays the writer).

"Durable" rows are live (not deleted, not superseded), not archived and not document chunks.
Every ordering ends in the id, so equal rows always come back in the same order.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from signet_desktop.storage.connect import Connection

LEAN_COLUMNS = "id, type, content, created_at, pinned, importance, project"
DURABLE = (
    "agent_id = :agent_id AND is_deleted = 0 AND superseded_by IS NULL "
    "AND visibility != 'archived' AND type != 'document_chunk'"
)
RANK = "pinned DESC, importance DESC, created_at, id"

GLOBAL_HEAD = f"""
SELECT {LEAN_COLUMNS} FROM memories
WHERE {DURABLE} AND project IS NULL AND (pinned = 1 OR importance >= :min_importance)
ORDER BY {RANK} LIMIT :limit
"""

THREAD_HEADS = f"""
WITH ranked AS (
    SELECT {LEAN_COLUMNS},
           ROW_NUMBER() OVER (PARTITION BY project ORDER BY {RANK}) AS place,
           MAX(created_at) OVER (PARTITION BY project) AS latest
    FROM memories WHERE {DURABLE} AND project IS NOT NULL AND type != 'issue'
)
SELECT {LEAN_COLUMNS} FROM ranked WHERE place <= :per_project
ORDER BY latest DESC, project, place
"""

BY_TYPE = f"""
WITH ranked AS (
    SELECT {LEAN_COLUMNS},
           ROW_NUMBER() OVER (
               PARTITION BY type ORDER BY pinned DESC, importance DESC, created_at DESC, id
           ) AS place
    FROM memories
    WHERE {DURABLE} AND type IN (SELECT value FROM json_each(:types))
)
SELECT {LEAN_COLUMNS} FROM ranked WHERE place <= :per_type ORDER BY type, place
"""

MONTHS = f"""
SELECT substr(COALESCE(occurred_at, created_at), 1, 7) AS month, COUNT(*) AS n
FROM memories WHERE {DURABLE}
GROUP BY month ORDER BY month DESC LIMIT :limit
"""

SESSION_MONTHS = """
SELECT substr(captured_at, 1, 7) AS month, COUNT(DISTINCT session_token) AS n
FROM memory_artifacts WHERE agent_id = :agent_id AND removed_at IS NULL
GROUP BY month
"""

NEWEST_CHANGE = "SELECT MAX(updated_at) FROM memories WHERE agent_id = :agent_id"
COUNT_DURABLE = f"SELECT COUNT(*) FROM memories WHERE {DURABLE}"


@dataclass(frozen=True, slots=True)
class MdMemory:
    """The columns MEMORY.md shows of one memory."""

    id: str
    type: str
    content: str
    created_at: str
    pinned: bool
    importance: float
    project: str | None


def _lean(row: Any) -> MdMemory:
    return MdMemory(
        id=row["id"],
        type=row["type"],
        content=row["content"],
        created_at=row["created_at"],
        pinned=bool(row["pinned"]),
        importance=float(row["importance"]),
        project=row["project"],
    )


def global_head(
    conn: Connection, agent_id: str, *, min_importance: float, limit: int
) -> list[MdMemory]:
    """Pinned or important memories of no project, best first."""
    rows = conn.execute(
        GLOBAL_HEAD, {"agent_id": agent_id, "min_importance": min_importance, "limit": limit}
    ).fetchall()
    return [_lean(r) for r in rows]


def thread_heads(conn: Connection, agent_id: str, per_project: int) -> list[MdMemory]:
    """The best `per_project` memories of each project, most recently active project first
    (issues are left to Open Threads)."""
    rows = conn.execute(THREAD_HEADS, {"agent_id": agent_id, "per_project": per_project})
    return [_lean(r) for r in rows.fetchall()]


def by_type(conn: Connection, agent_id: str, types: Sequence[str], per_type: int) -> list[MdMemory]:
    """The best `per_type` memories of each of `types` (newest first among equals)."""
    rows = conn.execute(
        BY_TYPE, {"agent_id": agent_id, "types": json.dumps(list(types)), "per_type": per_type}
    ).fetchall()
    return [_lean(r) for r in rows]


def months(conn: Connection, agent_id: str, limit: int) -> list[tuple[str, int, int]]:
    """(YYYY-MM, memories, sessions) for the newest `limit` months with memories."""
    sessions = {
        str(r[0]): int(r[1])
        for r in conn.execute(SESSION_MONTHS, {"agent_id": agent_id}).fetchall()
    }
    rows = conn.execute(MONTHS, {"agent_id": agent_id, "limit": limit}).fetchall()
    found = {str(r[0]): int(r[1]) for r in rows}
    keys = sorted(set(found) | set(sessions), reverse=True)[:limit]
    return [(k, found.get(k, 0), sessions.get(k, 0)) for k in keys]


def newest_change(conn: Connection, agent_id: str) -> str | None:
    """The latest `updated_at` of any of the agent's memories (deleted ones too)."""
    row = conn.execute(NEWEST_CHANGE, {"agent_id": agent_id}).fetchone()
    return None if row is None or row[0] is None else str(row[0])


def count_durable(conn: Connection, agent_id: str) -> int:
    return int(conn.execute(COUNT_DURABLE, {"agent_id": agent_id}).fetchone()[0])
