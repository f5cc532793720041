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
from signet_desktop.storage.dialect import is_postgres, postgres_twin
from signet_desktop.storage.rows import from_row, texts

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

# One pass over the agent's rows, without their text: what MEMORY.md ranks in Python (one
# scan instead of a window query per section), plus what the header and month index count.
SCAN = f"""
SELECT id, type, created_at, pinned, importance, project, updated_at,
       substr(COALESCE(occurred_at, created_at), 1, 7) AS month,
       ({DURABLE.removeprefix("agent_id = :agent_id AND ")}) AS durable
FROM memories WHERE agent_id = :agent_id
"""

# The chosen rows' text (unary + keeps the planner on the id index).
CONTENTS = """
SELECT id, content FROM memories
WHERE id IN (SELECT value FROM json_each(:ids)) AND +agent_id = :agent_id
"""
CONTENTS_PG = postgres_twin(CONTENTS)

SESSION_MONTHS = """
SELECT substr(captured_at, 1, 7) AS month, COUNT(DISTINCT session_token) AS n
FROM memory_artifacts WHERE agent_id = :agent_id AND removed_at IS NULL
GROUP BY month
"""


@dataclass(frozen=True, slots=True)
class Ranked:
    """A durable memory's ranking facts (no text yet)."""

    id: str
    type: str
    created_at: str
    pinned: bool
    importance: float
    project: str | None


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


@dataclass(frozen=True, slots=True)
class Scan:
    """The agent's durable rows, how many, the newest change of any row, memories per month."""

    durable: list[Ranked]
    newest_change: str | None
    per_month: dict[str, int]

    @property
    def count(self) -> int:
        return len(self.durable)


def _lean(row: Any) -> MdMemory:
    return from_row(MdMemory, row, pinned=bool(row["pinned"]), importance=float(row["importance"]))


def global_head(
    conn: Connection, agent_id: str, *, min_importance: float, limit: int
) -> list[MdMemory]:
    """Pinned or important memories of no project, best first (`rank_head`'s order in SQL)."""
    rows = conn.execute(
        GLOBAL_HEAD, {"agent_id": agent_id, "min_importance": min_importance, "limit": limit}
    ).fetchall()
    return [_lean(r) for r in rows]


def scan(conn: Connection, agent_id: str) -> Scan:
    """Every row of the agent once: the durable ones' facts, the newest change, the months."""
    durable: list[Ranked] = []
    per_month: dict[str, int] = {}
    newest: str | None = None
    rows = conn.execute(SCAN, {"agent_id": agent_id}).fetchall()
    for memory_id, kind, created, pinned, importance, project, updated, month, keep in rows:
        if updated is not None and (newest is None or updated > newest):
            newest = str(updated)
        if keep:  # positional unpacking: by-name access cost half the scan at 10k rows
            durable.append(
                Ranked(memory_id, kind, created, bool(pinned), float(importance), project)
            )
            per_month[month] = per_month.get(month, 0) + 1
    return Scan(durable, newest, per_month)


def _best_first(rows: list[Ranked]) -> list[Ranked]:
    """pinned, importance (high first), then created_at and id (old first): RANK."""
    return sorted(rows, key=lambda r: (not r.pinned, -r.importance, r.created_at, r.id))


def rank_head(rows: Sequence[Ranked], min_importance: float, limit: int) -> list[Ranked]:
    """Pinned or important memories of no project, best first."""
    chosen = [r for r in rows if r.project is None and (r.pinned or r.importance >= min_importance)]
    return _best_first(chosen)[:limit]


def rank_threads(rows: Sequence[Ranked], per_project: int) -> list[list[Ranked]]:
    """Each project's best `per_project` (issues left out), the project with the newest
    memory first (ties by name)."""
    by_project: dict[str, list[Ranked]] = {}
    for row in rows:
        if row.project is not None and row.type != "issue":
            by_project.setdefault(row.project, []).append(row)
    order = sorted(by_project)
    order.sort(key=lambda p: max(r.created_at for r in by_project[p]), reverse=True)
    return [_best_first(by_project[p])[:per_project] for p in order]


def rank_by_type(rows: Sequence[Ranked], types: Sequence[str], per_type: int) -> list[Ranked]:
    """The best `per_type` of each of `types`: pinned, importance, then newest (then id)."""
    by_type: dict[str, list[Ranked]] = {t: [] for t in types}
    for row in rows:
        if row.type in by_type:
            by_type[row.type].append(row)
    out: list[Ranked] = []
    for memory_type in sorted(by_type):
        group = sorted(by_type[memory_type], key=lambda r: r.id)
        group.sort(key=lambda r: r.created_at, reverse=True)  # stable: id breaks ties
        group.sort(key=lambda r: (not r.pinned, -r.importance))
        out += group[:per_type]
    return out


def with_content(conn: Connection, agent_id: str, rows: Sequence[Ranked]) -> list[MdMemory]:
    """`rows` with their text, in the same order (one query)."""
    ids = sorted({r.id for r in rows})
    if not ids:
        return []
    found = conn.execute(
        CONTENTS_PG if is_postgres(conn) else CONTENTS,
        {"agent_id": agent_id, "ids": json.dumps(ids)},
    )
    text = {str(r[0]): str(r[1]) for r in found.fetchall()}
    return [
        MdMemory(r.id, r.type, text[r.id], r.created_at, r.pinned, r.importance, r.project)
        for r in rows
        if r.id in text
    ]


def session_months(conn: Connection, agent_id: str) -> dict[str, int]:
    """Sessions (distinct tokens) with artifacts captured per month."""
    rows = conn.execute(SESSION_MONTHS, {"agent_id": agent_id}).fetchall()
    return {str(r[0]): int(r[1]) for r in rows}


def agents(conn: Connection) -> list[str]:
    """Every agent that has memories (any state), in name order."""
    return texts(conn, "SELECT DISTINCT agent_id FROM memories ORDER BY agent_id")
