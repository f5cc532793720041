"""Retention steps: each one bounded batch in the caller's write transaction.

Signet's order (reference §9): graph links, embeddings, tombstones, then history and jobs.
A purged memory takes with it its mention rows, the entities only it supported, its
canonical vectors and vec0 rows (in every generation), its content-safety decisions and its
row (FTS, hints and document links follow through triggers and foreign keys); a `purged`
event is appended to its history, which itself ages out on the history window like every
other event. Nothing here calls a provider.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from signet_desktop.domain.memory import Actor
from signet_desktop.embedding import vectors
from signet_desktop.queue import jobs
from signet_desktop.storage import (
    content_safety,
    graph_claims,
    graph_staleness,
    history,
    memories,
    mentions,
)
from signet_desktop.storage.connect import Connection

RETENTION_ACTOR = Actor(changed_by="retention", actor_type="system")
PURGE_REASON = "recovery window expired"


@dataclass(frozen=True, slots=True)
class PurgeBatch:
    """What one tombstone batch removed."""

    memories: int = 0
    safety_decisions: int = 0
    mentioned_entities: int = 0  # entities the purged memories' mention rows named
    entities: int = 0
    vectors: int = 0
    claims_unsupported: int = 0  # claims whose only evidence was a purged memory


def cutoff(retention_ms: int, now: datetime | None = None) -> str:
    """The `utc_now()`-format timestamp `retention_ms` before now."""
    moment = (now or datetime.now(UTC)) - timedelta(milliseconds=retention_ms)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def purge_tombstones(conn: Connection, before: str, limit: int) -> PurgeBatch:
    """Purge up to `limit` memories soft-deleted before `before`, oldest first."""
    found = memories.expired_tombstones(conn, before, limit)
    if not found:
        return PurgeBatch()
    ids = [memory_id for _, memory_id in found]
    unsupported = graph_claims.mark_claims_unsupported(conn, ids)  # before the FK nulls memory_id
    named = mentions.delete_for_memories(conn, ids)
    removed_vectors = vectors.delete_source_vectors(conn, ids)
    removed = decisions = 0
    for agent_id, agent_ids in _by_agent(found).items():
        decisions += content_safety.delete_decisions(conn, agent_id, "memory", agent_ids)
        for memory_id in agent_ids:
            history.record_event(
                conn,
                memory_id=memory_id,
                agent_id=agent_id,
                event="purged",
                actor=RETENTION_ACTOR,
                reason=PURGE_REASON,
            )
        removed += memories.delete_memories(conn, agent_id, agent_ids)
    entities = graph_staleness.delete_orphaned(conn, named)
    return PurgeBatch(removed, decisions, len(named), entities, removed_vectors, unsupported)


def prune_history(conn: Connection, before: str, limit: int) -> int:
    """Drop up to `limit` history events older than the history window."""
    return history.delete_older_than(conn, before, limit)


def prune_jobs(conn: Connection, status: str, before: str, limit: int) -> int:
    """Drop up to `limit` terminal jobs of `status` that ended before `before`."""
    return jobs.prune_terminal(conn, status, before, limit)


def _by_agent(pairs: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for agent_id, memory_id in pairs:
        grouped.setdefault(agent_id, []).append(memory_id)
    return grouped
