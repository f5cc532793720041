"""memory_counts and memory_vector_counts: counters the database keeps (migrations/0009).

Triggers on `memories` and `embeddings` update them inside the writing transaction, so a
status read or a listing's stats is a primary-key lookup instead of a pass over every row.
This module reads them and, as their Python owner, can recount them from the tables: the
maintenance run compares and repairs (a counter that drifted would be a bug in a trigger).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from signet_desktop.storage.connect import Connection

AGENT_COUNTS = "SELECT live, pinned, deleted FROM memory_counts WHERE agent_id = :agent_id"
ALL_COUNTS = (
    "SELECT COALESCE(SUM(live), 0), COALESCE(SUM(pinned), 0), COALESCE(SUM(deleted), 0) "
    "FROM memory_counts"
)
AGENT_EMBEDDED = """
SELECT COALESCE(SUM(c.embedded), 0) FROM memory_vector_counts c
JOIN embedding_generations g ON g.id = c.generation_id AND g.status = 'active'
WHERE c.agent_id = :agent_id
"""
AGENT_GENERATION_EMBEDDED = """
SELECT COALESCE(SUM(embedded), 0) FROM memory_vector_counts
WHERE agent_id = :agent_id AND generation_id = :generation_id
"""
GENERATION_EMBEDDED = """
SELECT COALESCE(SUM(embedded), 0) FROM memory_vector_counts WHERE generation_id = :generation_id
"""

# FILTER, not SUM(boolean): PostgreSQL has no sum of booleans; SQLite (3.30+) reads it too.
TRUE_COUNTS = """
SELECT agent_id, COUNT(*) FILTER (WHERE is_deleted = 0) AS live,
       COUNT(*) FILTER (WHERE is_deleted = 0 AND pinned = 1) AS pinned,
       COUNT(*) FILTER (WHERE is_deleted = 1) AS deleted
FROM memories GROUP BY agent_id
"""
TRUE_VECTOR_COUNTS = """
SELECT m.agent_id AS agent_id, e.generation_id AS generation_id, COUNT(*) AS embedded
FROM embeddings e JOIN memories m ON m.id = e.source_id AND m.content_hash = e.content_hash
WHERE e.source_type = 'memory' AND m.is_deleted = 0
GROUP BY m.agent_id, e.generation_id
"""
STORED_COUNTS = "SELECT agent_id, live, pinned, deleted FROM memory_counts"
STORED_VECTOR_COUNTS = "SELECT agent_id, generation_id, embedded FROM memory_vector_counts"


@dataclass(frozen=True, slots=True)
class MemoryCounts:
    """Live, pinned (live) and tombstoned memories."""

    live: int = 0
    pinned: int = 0
    deleted: int = 0


@dataclass(frozen=True, slots=True)
class RecountReport:
    """What a recount found: rows whose stored counter differed from the tables."""

    drifted: tuple[str, ...]
    repaired: bool


def agent_counts(conn: Connection, agent_id: str) -> MemoryCounts:
    """The agent's counters (zeros for an agent with no memories)."""
    row = conn.execute(AGENT_COUNTS, {"agent_id": agent_id}).fetchone()
    return MemoryCounts(int(row[0]), int(row[1]), int(row[2])) if row else MemoryCounts()


def all_counts(conn: Connection) -> MemoryCounts:
    """Every agent's counters summed."""
    row = conn.execute(ALL_COUNTS).fetchone()
    return MemoryCounts(int(row[0]), int(row[1]), int(row[2]))


def agent_embedded(conn: Connection, agent_id: str) -> int:
    """The agent's live memories with a current vector in the active generation."""
    return int(conn.execute(AGENT_EMBEDDED, {"agent_id": agent_id}).fetchone()[0])


def agent_generation_embedded(conn: Connection, agent_id: str, generation_id: int) -> int:
    """The agent's live memories with a current vector in this generation."""
    params = {"agent_id": agent_id, "generation_id": generation_id}
    return int(conn.execute(AGENT_GENERATION_EMBEDDED, params).fetchone()[0])


def generation_embedded(conn: Connection, generation_id: int) -> int:
    """Live memories (every agent) with a current vector in this generation."""
    return int(conn.execute(GENERATION_EMBEDDED, {"generation_id": generation_id}).fetchone()[0])


Key = tuple[str, ...]
Values = tuple[int, ...]


def _drift(stored: dict[Key, Values], true: dict[Key, Values]) -> list[Key]:
    keys = set(stored) | set(true)
    width = len(next(iter(true.values()), next(iter(stored.values()), ())))
    zero = (0,) * width
    return sorted(k for k in keys if stored.get(k, zero) != true.get(k, zero))


def recount(conn: Connection, *, repair: bool) -> RecountReport:
    """Compare the counters with the tables (one pass over each); rewrite the drifted rows
    when `repair` (inside the caller's write transaction)."""
    true: dict[Key, Values] = {
        (str(r[0]),): (int(r[1]), int(r[2]), int(r[3])) for r in conn.execute(TRUE_COUNTS)
    }
    stored: dict[Key, Values] = {
        (str(r[0]),): (int(r[1]), int(r[2]), int(r[3])) for r in conn.execute(STORED_COUNTS)
    }
    true_v: dict[Key, Values] = {
        (str(r[0]), str(r[1])): (int(r[2]),) for r in conn.execute(TRUE_VECTOR_COUNTS)
    }
    stored_v: dict[Key, Values] = {
        (str(r[0]), str(r[1])): (int(r[2]),) for r in conn.execute(STORED_VECTOR_COUNTS)
    }
    drifted = _drift(stored, true)
    drifted_v = _drift(stored_v, true_v)
    if repair:
        _rewrite(conn, drifted, true, drifted_v, true_v)
    names = [f"memory_counts:{k[0]}" for k in drifted]
    names += [f"memory_vector_counts:{k[0]}:{k[1]}" for k in drifted_v]
    return RecountReport(tuple(names), repair and bool(names))


def _rewrite(
    conn: Connection,
    drifted: Sequence[Key],
    true: dict[Key, Values],
    drifted_v: Sequence[Key],
    true_v: dict[Key, Values],
) -> None:
    for (agent_id,) in drifted:
        live, pinned, deleted = true.get((agent_id,), (0, 0, 0))
        conn.execute(
            "INSERT INTO memory_counts (agent_id, live, pinned, deleted) "
            "VALUES (:agent_id, :live, :pinned, :deleted) ON CONFLICT (agent_id) DO UPDATE "
            "SET live = excluded.live, pinned = excluded.pinned, deleted = excluded.deleted",
            {"agent_id": agent_id, "live": live, "pinned": pinned, "deleted": deleted},
        )
    for agent_id, generation in drifted_v:
        (embedded,) = true_v.get((agent_id, generation), (0,))
        conn.execute(
            "INSERT INTO memory_vector_counts (agent_id, generation_id, embedded) "
            "VALUES (:agent_id, :generation_id, :embedded) "
            "ON CONFLICT (agent_id, generation_id) DO UPDATE SET embedded = excluded.embedded",
            {"agent_id": agent_id, "generation_id": int(generation), "embedded": embedded},
        )
