"""memory_feedback: an agent's ratings of recalled memories, a running mean per session."""

from __future__ import annotations

from collections.abc import Mapping

from signet_desktop.domain.feedback import MemoryRating
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres, postgres_twin

# The running mean of one more rating; `injected` from the session's context ledger.
RATE = """
INSERT INTO memory_feedback (agent_id, session_key, memory_id, score, ratings, injected,
                             first_rated_at, last_rated_at)
VALUES (:agent_id, :session_key, :memory_id, :score, 1, :injected, :now, :now)
ON CONFLICT (agent_id, session_key, memory_id) DO UPDATE SET
    score = (memory_feedback.score * memory_feedback.ratings + excluded.score)
            / (memory_feedback.ratings + 1),
    ratings = memory_feedback.ratings + 1,
    injected = excluded.injected,
    last_rated_at = excluded.last_rated_at
RETURNING memory_id, score, ratings, injected
"""

INJECTED = """
SELECT DISTINCT memory_id FROM session_context_ledger
WHERE agent_id = :agent_id AND session_key = :session_key
  AND memory_id IN (SELECT value FROM json_each(:ids))
"""
INJECTED_PG = postgres_twin(INJECTED)


def injected_ids(conn: Connection, agent_id: str, session_key: str, ids_json: str) -> set[str]:
    """Which of the memories the hooks put into this session's context (any epoch)."""
    rows = conn.execute(
        INJECTED_PG if is_postgres(conn) else INJECTED,
        {"agent_id": agent_id, "session_key": session_key, "ids": ids_json},
    ).fetchall()
    return {str(row[0]) for row in rows}


def rate(
    conn: Connection,
    agent_id: str,
    session_key: str,
    scores: Mapping[str, float],
    injected: set[str],
    now: str,
) -> list[MemoryRating]:
    """Fold each score into its memory's running mean for the session; the rows as now."""
    rated: list[MemoryRating] = []
    for memory_id, score in scores.items():
        row = conn.execute(
            RATE,
            {
                "agent_id": agent_id,
                "session_key": session_key,
                "memory_id": memory_id,
                "score": score,
                "injected": int(memory_id in injected),
                "now": now,
            },
        ).fetchone()
        rated.append(MemoryRating(row[0], float(row[1]), int(row[2]), bool(row[3])))
    return rated
