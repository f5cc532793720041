"""Wire shape of memory feedback (POST /api/memory/feedback, MCP `memory_feedback`)."""

from __future__ import annotations

from typing import Any

from signet_desktop.domain.feedback import FeedbackOutcome


def feedback_json(outcome: FeedbackOutcome) -> dict[str, Any]:
    """Signet's `{ok, recorded}`, plus each memory's running mean in this session."""
    return {
        "ok": True,
        "recorded": len(outcome.rated),
        "sessionKey": outcome.session_key,
        "ratings": [
            {
                "memoryId": r.memory_id,
                "score": round(r.score, 4),
                "ratings": r.ratings,
                "injected": r.injected,
            }
            for r in outcome.rated
        ],
    }
