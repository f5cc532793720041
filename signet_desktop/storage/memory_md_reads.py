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

# One pass over the agent's rows: durable memories per month, and the newest change of any.
OVERVIEW = f"""
SELECT substr(COALESCE(occurred_at, created_at), 1, 7) AS month,
       COUNT(*) FILTER (WHERE {DURABLE}) AS n, MAX(updated_at) AS newest
FROM memories WHERE agent_id = :agent_id
GROUP BY month
"""

SESSION_MONTHS = """
SELECT substr(captured_at, 1, 7) AS month, COUNT(DISTINCT session_token) AS n
FROM memory_artifacts WHERE agent_id = :agent_id AND removed_at IS NULL
GROUP BY month
"""


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


@dataclass(frozen=True, slots=True)
class Overview:
    """Durable memories in all, the newest change of any memory, and a month index."""

    count: int
    newest_change: str | None
    months: list[tuple[str, int, int]]  # (YYYY-MM, memories, sessions), newest month first


def overview(conn: Connection, agent_id: str, months: int) -> Overview:
    """Counts for the header and the Temporal Index in one pass over the agent's rows."""
    rows = conn.execute(OVERVIEW, {"agent_id": agent_id}).fetchall()
    per_month = {str(r[0]): int(r[1]) for r in rows if int(r[1])}
    newest = max((str(r[2]) for r in rows if r[2] is not None), default=None)
    sessions = {
        str(r[0]): int(r[1])
        for r in conn.execute(SESSION_MONTHS, {"agent_id": agent_id}).fetchall()
    }
    keys = sorted(set(per_month) | set(sessions), reverse=True)[:months]
    index = [(k, per_month.get(k, 0), sessions.get(k, 0)) for k in keys]
    return Overview(sum(per_month.values()), newest, index)


def agents(conn: Connection) -> list[str]:
    """Every agent that has memories (any state), in name order."""
    rows = conn.execute("SELECT DISTINCT agent_id FROM memories ORDER BY agent_id").fetchall()
    return [str(r[0]) for r in rows]
