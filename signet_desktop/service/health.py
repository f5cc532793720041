"""Signet's composite health score for /api/status, from what the service knows of itself.

Weights: the database 0.5, vector search 0.2 (complete; 0.1 for the recent-window scan),
embedding coverage 0.2 (times the covered share), workers 0.1 (none crashed). Running without an
embedder is a choice, not a fault: it scores as complete. `healthy` from 0.9, `degraded` from
0.5, else `unhealthy`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from signet_desktop.service.facade import ServiceStatus

HEALTHY_SCORE = 0.9
DEGRADED_SCORE = 0.5
VECTOR_SEARCH_SHARE = {"complete": 0.2, "recent-window": 0.1}


@dataclass(frozen=True, slots=True)
class Health:
    """A score in [0, 1] and its label."""

    score: float
    status: str  # healthy | degraded | unhealthy


def health_of(status: ServiceStatus, db_ok: bool) -> Health:
    """The score for `status`, or 0 when the database does not answer."""
    if not db_ok:
        return Health(0.0, "unhealthy")
    embedding = status.embedding
    if embedding.provider == "none":
        vectors = 0.4
    else:
        coverage = embedding.coverage.ratio if embedding.coverage is not None else 0.0
        vectors = VECTOR_SEARCH_SHARE.get(embedding.vector_search, 0.0) + 0.2 * coverage
    workers = status.process.get("workers") or {}
    crashed = any(
        isinstance(state, Mapping) and state.get("state") == "crashed" for state in workers.values()
    )
    score = round(min(0.5 + vectors + (0.0 if crashed else 0.1), 1.0), 2)
    if score >= HEALTHY_SCORE:
        return Health(score, "healthy")
    return Health(score, "degraded" if score >= DEGRADED_SCORE else "unhealthy")
