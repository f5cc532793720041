"""Memory feedback: an agent rates how useful recalled memories were in one of its sessions.

Signet's `memory_feedback` (POST /api/memory/feedback): each rating (-1 harmful, 0 unused,
1 directly helpful) is folded into a running mean per (agent, session, memory), with whether
the hooks had injected that memory into the session. A call is all or nothing: every id must
be a live memory of the calling agent (another agent's or a forgotten one is `not_found`,
named), every score a number in -1..1; a refused call writes nothing. The ledger is
recorded, not yet read by ranking (docs/MCP.md).
"""

from __future__ import annotations

import json

from signet_desktop.domain import scope
from signet_desktop.domain.errors import InvalidInput, NotFound
from signet_desktop.domain.feedback import FeedbackOutcome, check_ratings
from signet_desktop.domain.memory import utc_now
from signet_desktop.storage import feedback, memories
from signet_desktop.storage.handle import DatabaseHandle

MAX_NAMED_MISSING = 5  # ids a not_found message names


class FeedbackService:
    """Records ratings of recalled memories, scoped by agent and session."""

    def __init__(self, db: DatabaseHandle) -> None:
        self._db = db

    def rate(self, agent_id: str, session_key: str, ratings: object) -> FeedbackOutcome:
        """Fold `ratings` ({memory id: -1..1}) into the session's feedback; all or nothing."""
        scope.check_agent_id(agent_id)
        key = scope.check_session_key(session_key)
        if not key:
            raise InvalidInput("sessionKey is required", code="session_required")
        scores = check_ratings(ratings)
        ids = json.dumps(list(scores))
        with self._db.write() as conn:
            live = memories.get_memories(conn, agent_id, list(scores))
            missing = [memory_id for memory_id in scores if memory_id not in live]
            if missing:
                named = ", ".join(missing[:MAX_NAMED_MISSING])
                more = len(missing) - MAX_NAMED_MISSING
                raise NotFound(
                    f"no such memory: {named}" + (f" (and {more} more)" if more > 0 else ""),
                    code="not_found",
                    details={"missing": missing},
                )
            injected = feedback.injected_ids(conn, agent_id, key, ids)
            rated = feedback.rate(conn, agent_id, key, scores, injected, utc_now())
        return FeedbackOutcome(key, tuple(rated))
