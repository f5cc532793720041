"""What recall's context signals need about each candidate: its `who` and its session neighbours."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from signet_desktop.storage.connect import Connection

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
        CANDIDATE_CONTEXT, {"agent_id": agent_id, "ids": json.dumps(list(ids))}
    ).fetchall()
    return {
        str(row["id"]): CandidateContext(row["who"], row["previous_id"], row["next_id"])
        for row in rows
    }
