"""Search telemetry values: the opt-in, local-only record of what recall answered.

A record keeps the query text, filters and the ranked ids with their scores and channels —
never memory content — so a person can see what a query returned before. Reading it is an
analytics act: refused to agent callers (actor type `agent`), always within one agent's scope
(and a project, when asked).
"""

from __future__ import annotations

from dataclasses import dataclass

from signet_desktop.domain.errors import Forbidden
from signet_desktop.domain.memory import Actor

# Callers that may read the ledger: people and operator tools; never a harness agent.
NO_ANALYTICS_ACTOR_TYPES = frozenset({"agent"})


@dataclass(frozen=True, slots=True)
class SearchResultEntry:
    """One ranked hit as it was answered: id, score, and who saw it (`source`)."""

    memory_id: str
    score: float
    source: str


@dataclass(frozen=True, slots=True)
class SearchRecord:
    """One recorded recall."""

    id: str
    agent_id: str
    project: str | None
    query: str
    keyword_query: str | None
    method: str
    result_count: int
    total_ms: float
    results: tuple[SearchResultEntry, ...]
    created_at: str


def check_analytics(actor: Actor) -> Actor:
    """Refuse agents (Forbidden `analytics_forbidden`); return `actor` otherwise."""
    if actor.actor_type in NO_ANALYTICS_ACTOR_TYPES:
        raise Forbidden(
            "search telemetry needs the analytics permission, which agent callers do not have",
            code="analytics_forbidden",
        )
    return actor
