"""Read-only graph queries for traversal and the graph-aware recall stages.

Every query is scoped to one agent (the row's `agent_id` and, through joins, the entity's),
reads active rows only and is bounded by a LIMIT. Nothing here writes: the graph's writers
are `storage/graph.py`, `graph_claims.py` and `graph_links.py` (over `graph_rows.py`) and
`storage/mentions.py`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from signet_desktop.domain.traversal import (
    GraphAspect,
    GraphClaim,
    GraphEdge,
    GraphEntity,
)
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres, postgres_twin

MAX_NAMES = 512  # canonical names looked up per query (query phrases and words)

ENTITIES_BY_NAME = """
SELECT e.canonical_name AS name, e.id, e.name AS display, e.mentions, e.created_at, 0 AS via_alias
FROM entities e
WHERE e.agent_id = :agent_id AND e.status = 'active'
  AND e.canonical_name IN (SELECT value FROM json_each(:names))
UNION ALL
SELECT a.canonical_alias, e.id, e.name, e.mentions, e.created_at, 1
FROM entity_aliases a JOIN entities e ON e.id = a.entity_id
WHERE a.agent_id = :agent_id AND e.agent_id = :agent_id AND e.status = 'active'
  AND a.canonical_alias IN (SELECT value FROM json_each(:names))
ORDER BY via_alias, created_at, id
LIMIT :limit
"""

# The frontier's aspects (heaviest first, `per_entity` each) with their active claims (most
# confident first, `per_aspect` each) in one statement: both bounded ranges are read from the
# covering indexes of migrations/0013 and stop at their LIMIT; only kept rows are looked up.
ASPECT_CLAIMS = """
SELECT s.entity_id, s.id AS aspect_id, s.name AS aspect_name, s.weight,
       c.id, c.memory_id, c.kind, c.content, c.confidence
FROM json_each(:entity_ids) j
JOIN entity_aspects s ON s.id IN (
    SELECT id FROM entity_aspects
    WHERE entity_id = j.value AND agent_id = :agent_id AND status = 'active'
    ORDER BY weight DESC, id LIMIT :per_entity)
LEFT JOIN entity_attributes c ON c.id IN (
    SELECT id FROM entity_attributes
    WHERE aspect_id = s.id AND agent_id = :agent_id AND status = 'active'
      AND confidence >= :min_confidence
    ORDER BY confidence DESC, importance DESC, id LIMIT :per_aspect)
ORDER BY j.key, s.weight DESC, s.id, c.confidence DESC, c.importance DESC, c.id
"""

EDGES = """
SELECT * FROM (
    SELECT d.entity_id, d.id, d.dependency_type, d.strength, d.confidence, d.outgoing,
           e.id AS other_id, e.name AS other_name, e.mentions AS other_mentions,
           ROW_NUMBER() OVER (
               PARTITION BY d.entity_id ORDER BY d.strength DESC, d.confidence DESC, d.id
           ) AS place
    FROM (
        SELECT source_entity_id AS entity_id, id, target_entity_id AS other, dependency_type,
               strength, confidence, 1 AS outgoing
        FROM entity_dependencies
        WHERE source_entity_id IN (SELECT value FROM json_each(:entity_ids))
          AND agent_id = :agent_id AND status = 'active'
          AND strength >= :min_strength AND confidence >= :min_confidence
        UNION ALL
        SELECT target_entity_id, id, source_entity_id, dependency_type, strength, confidence, 0
        FROM entity_dependencies
        WHERE target_entity_id IN (SELECT value FROM json_each(:entity_ids))
          AND agent_id = :agent_id AND status = 'active'
          AND strength >= :min_strength AND confidence >= :min_confidence
    ) d
    JOIN entities e ON e.id = d.other
    WHERE e.agent_id = :agent_id AND e.status = 'active'
)
WHERE place <= :per_entity
ORDER BY entity_id, place
"""

# One bounded range of the covering index idx_memory_entity_mentions_entity_agent per entity:
# a hub entity with 10,000 mentions costs `per_entity` entries, not 10,000. Joined with UNION
# ALL per entity.
MENTIONED_IN = """
SELECT :entity_{i} AS entity_id, memory_id FROM (
    SELECT memory_id FROM memory_entity_mentions
    WHERE entity_id = :entity_{i} AND agent_id = :agent_id
    LIMIT :per_entity
)"""
MAX_MENTION_SCANS = 64  # entities per mentions query

LINKED_ENTITIES = """
SELECT m.memory_id, e.id, e.mentions FROM memory_entity_mentions m
JOIN entities e ON e.id = m.entity_id
WHERE m.agent_id = :agent_id AND e.agent_id = :agent_id AND e.status = 'active'
  AND m.memory_id IN (SELECT value FROM json_each(:memory_ids))
LIMIT :limit
"""

ACTIVE_ENTITY_COUNT = """
SELECT COUNT(*) FROM entities WHERE agent_id = :agent_id AND status = 'active'
"""

# idx_entities_agent_status (agent_id, status, mentions) gives the order without a sort.
MENTION_DEGREE_AT = """
SELECT mentions FROM entities WHERE agent_id = :agent_id AND status = 'active'
ORDER BY mentions LIMIT 1 OFFSET :offset
"""


# PostgreSQL: the same statements with json_each's arrays as jsonb (storage/dialect.py).
ENTITIES_BY_NAME_PG = postgres_twin(ENTITIES_BY_NAME)
ASPECT_CLAIMS_PG = postgres_twin(ASPECT_CLAIMS)
EDGES_PG = postgres_twin(EDGES)
LINKED_ENTITIES_PG = postgres_twin(LINKED_ENTITIES)


def _json(values: Sequence[str]) -> str:
    return json.dumps(list(values))


def entities_named(
    conn: Connection, agent_id: str, canonical_names: Sequence[str], limit: int
) -> dict[str, GraphEntity]:
    """canonical name or alias -> the agent's active entity (a name beats an alias; oldest)."""
    names = list(dict.fromkeys(canonical_names))[:MAX_NAMES]
    if not names or limit <= 0:
        return {}
    rows = conn.execute(
        ENTITIES_BY_NAME_PG if is_postgres(conn) else ENTITIES_BY_NAME,
        {"agent_id": agent_id, "names": _json(names), "limit": 4 * limit},
    ).fetchall()
    found: dict[str, GraphEntity] = {}
    for row in rows:
        if row["name"] not in found:
            found[row["name"]] = GraphEntity(row["id"], row["display"], int(row["mentions"]))
    return found


def aspects_with_claims(
    conn: Connection,
    agent_id: str,
    entity_ids: Sequence[str],
    *,
    per_entity: int,
    per_aspect: int,
    min_confidence: float,
) -> list[tuple[GraphAspect, list[GraphClaim]]]:
    """The entities' active aspects (heaviest first, at most `per_entity` each), each with its
    active claims of confidence >= `min_confidence` (most confident first, `per_aspect`)."""
    ids = list(dict.fromkeys(entity_ids))
    if not ids or per_entity <= 0:
        return []
    rows = conn.execute(
        ASPECT_CLAIMS_PG if is_postgres(conn) else ASPECT_CLAIMS,
        {
            "entity_ids": _json(ids),
            "agent_id": agent_id,
            "per_entity": per_entity,
            "per_aspect": max(0, per_aspect),
            "min_confidence": min_confidence,
        },
    ).fetchall()
    found: dict[str, tuple[GraphAspect, list[GraphClaim]]] = {}
    for r in rows:
        aspect_id = r["aspect_id"]
        entry = found.get(aspect_id)
        if entry is None:
            aspect = GraphAspect(aspect_id, r["entity_id"], r["aspect_name"], float(r["weight"]))
            entry = found[aspect_id] = (aspect, [])
        if r["id"] is not None:
            entry[1].append(
                GraphClaim(
                    r["id"],
                    aspect_id,
                    r["memory_id"],
                    r["kind"],
                    r["content"],
                    float(r["confidence"]),
                )
            )
    return list(found.values())


def dependencies_of(
    conn: Connection,
    agent_id: str,
    entity_ids: Sequence[str],
    *,
    min_strength: float,
    min_confidence: float,
    per_entity: int,
) -> list[GraphEdge]:
    """Active edges out of and into each entity, strongest first, to active entities only."""
    if not entity_ids or per_entity <= 0:
        return []
    rows = conn.execute(
        EDGES_PG if is_postgres(conn) else EDGES,
        {
            "entity_ids": _json(entity_ids),
            "agent_id": agent_id,
            "min_strength": min_strength,
            "min_confidence": min_confidence,
            "per_entity": per_entity,
        },
    ).fetchall()
    return [
        GraphEdge(
            r["id"],
            r["entity_id"],
            GraphEntity(r["other_id"], r["other_name"], int(r["other_mentions"])),
            r["dependency_type"],
            float(r["strength"]),
            float(r["confidence"]),
            bool(r["outgoing"]),
        )
        for r in rows
    ]


def mentioned_in(
    conn: Connection, agent_id: str, entity_ids: Sequence[str], per_entity: int
) -> dict[str, list[str]]:
    """entity id -> ids of memories linked to it, at most `per_entity` each (liveness is the
    caller's join)."""
    ids = list(dict.fromkeys(entity_ids))
    found: dict[str, list[str]] = {}
    if per_entity <= 0:
        return found
    for start in range(0, len(ids), MAX_MENTION_SCANS):
        chunk = ids[start : start + MAX_MENTION_SCANS]
        sql = "\nUNION ALL\n".join(MENTIONED_IN.format(i=i) for i in range(len(chunk)))
        params: dict[str, object] = {f"entity_{i}": eid for i, eid in enumerate(chunk)}
        rows = conn.execute(sql, {**params, "agent_id": agent_id, "per_entity": per_entity})
        for entity_id, memory_id in rows:
            found.setdefault(str(entity_id), []).append(str(memory_id))
    return found


def linked_entities(
    conn: Connection, agent_id: str, memory_ids: Sequence[str], limit: int = 10_000
) -> dict[str, dict[str, int]]:
    """memory id -> {active entity id: its mention degree} for the memories' mention links."""
    if not memory_ids:
        return {}
    rows = conn.execute(
        LINKED_ENTITIES_PG if is_postgres(conn) else LINKED_ENTITIES,
        {"agent_id": agent_id, "memory_ids": _json(memory_ids), "limit": limit},
    ).fetchall()
    linked: dict[str, dict[str, int]] = {}
    for memory_id, entity_id, mentions in rows:
        linked.setdefault(str(memory_id), {})[str(entity_id)] = int(mentions)
    return linked


def mention_degree_percentile(conn: Connection, agent_id: str, pct: float) -> int | None:
    """The agent's `pct` percentile (0-100, nearest rank) of active entities' mention degree."""
    count = int(conn.execute(ACTIVE_ENTITY_COUNT, {"agent_id": agent_id}).fetchone()[0])
    if not count:
        return None
    offset = min(count - 1, max(0, round(pct / 100 * (count - 1))))
    row = conn.execute(MENTION_DEGREE_AT, {"agent_id": agent_id, "offset": offset}).fetchone()
    return None if row is None else int(row[0])


def by_id(entities: Mapping[str, GraphEntity]) -> dict[str, GraphEntity]:
    """The distinct entities of a name map, by id, in first-seen order."""
    return {entity.id: entity for entity in entities.values()}
