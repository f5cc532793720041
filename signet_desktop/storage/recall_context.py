"""What recall's context signals need about each candidate: its `who` and its session neighbours."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres, postgres_twin

# For each live candidate with a session: the previous and next live memory of the same
# session in seq order, within the agent's scope. Both subqueries seek
# idx_memories_session_order (the IS NOT NULL term lets the planner use the partial index).
CANDIDATE_CONTEXT = """
SELECT c.id AS id, c.who AS who,
    (SELECT p.id FROM memories p
      WHERE p.agent_id = c.agent_id AND p.session_id = c.session_id
        AND p.session_id IS NOT NULL AND p.seq < c.seq AND p.is_deleted = 0
      ORDER BY p.seq DESC LIMIT 1) AS previous_id,
    (SELECT n.id FROM memories n
      WHERE n.agent_id = c.agent_id AND n.session_id = c.session_id
        AND n.session_id IS NOT NULL AND n.seq > c.seq AND n.is_deleted = 0
      ORDER BY n.seq ASC LIMIT 1) AS next_id
FROM memories c
WHERE c.id IN (SELECT value FROM json_each(:ids)) AND +c.agent_id = :agent_id
  AND +c.is_deleted = 0
"""
CANDIDATE_CONTEXT_PG = postgres_twin(CANDIDATE_CONTEXT)


@dataclass(frozen=True, slots=True)
class CandidateContext:
    """A candidate's author and the ids of the live memories beside it in its session."""

    who: str | None
    previous_id: str | None
    next_id: str | None

    @property
    def neighbour_ids(self) -> tuple[str, ...]:
        return tuple(i for i in (self.previous_id, self.next_id) if i is not None)


def candidate_context(
    conn: Connection, agent_id: str, ids: Sequence[str]
) -> dict[str, CandidateContext]:
    """Context facts for the live candidates among `ids`, in one query, scoped to the agent."""
    if not ids:
        return {}
    rows = conn.execute(
        CANDIDATE_CONTEXT_PG if is_postgres(conn) else CANDIDATE_CONTEXT,
        {"agent_id": agent_id, "ids": json.dumps(list(ids))},
    ).fetchall()
    return {
        str(row["id"]): CandidateContext(row["who"], row["previous_id"], row["next_id"])
        for row in rows
    }


# One side of a candidate's session, `step` live memories away (step 1: the neighbour).
_SIDE = """(SELECT w.id FROM memories w
      WHERE w.agent_id = c.agent_id AND w.session_id = c.session_id
        AND w.session_id IS NOT NULL AND w.seq {op} c.seq AND w.is_deleted = 0
      ORDER BY w.seq {order} LIMIT 1 OFFSET {offset}) AS {side}_{step}"""


@lru_cache(maxsize=8)
def session_rings_sql(width: int) -> str:
    """For each live candidate: the memories 1..width steps before and after it in its session.

    Each column is one bounded seek of idx_memories_session_order (as CANDIDATE_CONTEXT's).
    """
    sides = [
        _SIDE.format(op=op, order=order, offset=step - 1, side=side, step=step)
        for step in range(1, width + 1)
        for side, op, order in (("before", "<", "DESC"), ("after", ">", "ASC"))
    ]
    return f"""
SELECT c.id AS id, {", ".join(sides)}
FROM memories c
WHERE c.id IN (SELECT value FROM json_each(:ids)) AND +c.agent_id = :agent_id
  AND +c.is_deleted = 0
"""


def session_rings(
    conn: Connection, agent_id: str, ids: Sequence[str], width: int
) -> dict[str, tuple[tuple[str, ...], ...]]:
    """Each live candidate's session memories by distance, in one query.

    Ring d holds the memories d steps before and after it, previous first; rings end at the
    first empty one. A candidate that is deleted or outside the agent's scope is left out.
    """
    if not ids or width < 1:
        return {}
    sql = session_rings_sql(width)
    rows = conn.execute(
        postgres_twin(sql) if is_postgres(conn) else sql,
        {"agent_id": agent_id, "ids": json.dumps(list(ids))},
    ).fetchall()
    out = {}
    for row in rows:
        rings = []
        for step in range(1, width + 1):
            ring = tuple(i for i in (row[f"before_{step}"], row[f"after_{step}"]) if i)
            if not ring:
                break
            rings.append(ring)
        out[str(row["id"])] = tuple(rings)
    return out
