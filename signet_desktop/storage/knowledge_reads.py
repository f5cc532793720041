"""Reads of the knowledge graph for its writer and the knowledge surfaces.

Row -> value converters (shared with `storage/graph_rows.py`, the owner of the graph tables),
entity listings, an entity's detail pieces, per-agent counts and the mutation log. Nothing
here writes; every read is scoped by `agent_id` in SQL. (Traversal's bounded reads for
recall live in `storage/graph_reads.py`.)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from signet_desktop.domain.entities import canonical_entity_name
from signet_desktop.domain.knowledge import (
    Alias,
    Aspect,
    Claim,
    ClaimTimes,
    Dependency,
    Entity,
    EntityMention,
    EntityPage,
    Evidence,
    GraphMutation,
    KnowledgeStats,
    Relation,
)
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres, postgres_twin
from signet_desktop.storage.rows import TableRows, from_row, like_contains

EXCERPT_CHARS = 240


def row_dict(row: Any) -> dict[str, Any]:
    """A row as a plain dict (the entity embedding BLOB left out)."""
    data = {key: row[key] for key in row.keys()}  # noqa: SIM118 (a Row iterates values)
    data.pop("embedding", None)
    return data


def parse_evidence(raw: str | None) -> tuple[Evidence, ...]:
    """A JSON evidence list (`[{quote, source_ref}]`) as values; junk reads as none."""
    try:
        items = json.loads(raw or "[]")
    except ValueError:
        return ()
    out = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, Mapping):
            out.append(Evidence(str(item.get("quote", "")), str(item.get("source_ref", ""))))
    return tuple(out)


def to_entity(row: Mapping[str, Any]) -> Entity:
    return from_row(Entity, row, mentions=int(row["mentions"]), pinned=bool(row["pinned"]))


def to_alias(row: Mapping[str, Any]) -> Alias:
    return from_row(Alias, row)


def to_aspect(row: Mapping[str, Any]) -> Aspect:
    return from_row(Aspect, row, weight=float(row["weight"]))


def to_claim(row: Mapping[str, Any]) -> Claim:
    return from_row(
        Claim,
        row,
        confidence=float(row["confidence"]),
        importance=float(row["importance"]),
        version=int(row["version"]),
        evidence=parse_evidence(row["proposal_evidence"]),
        times=ClaimTimes.read(row),
    )


def to_dependency(row: Mapping[str, Any]) -> Dependency:
    keys = row.keys()
    return from_row(
        Dependency,
        row,
        strength=float(row["strength"]),
        confidence=float(row["confidence"]),
        source_name=row["source_name"] if "source_name" in keys else "",
        target_name=row["target_name"] if "target_name" in keys else "",
    )


def to_relation(row: Mapping[str, Any]) -> Relation:
    return from_row(
        Relation,
        row,
        strength=float(row["strength"]),
        confidence=float(row["confidence"]),
        mentions=int(row["mentions"]),
    )


def to_mutation(row: Mapping[str, Any]) -> GraphMutation:
    return from_row(
        GraphMutation,
        row,
        seq=int(row["seq"]),
        before=json.loads(row["before_json"]) if row["before_json"] else None,
        after=json.loads(row["after_json"]) if row["after_json"] else None,
        evidence=parse_evidence(row["evidence_json"]),
    )


ENTITIES = TableRows("entities", "*", to_entity)
ALIASES = TableRows("entity_aliases", "*", to_alias)
ASPECTS = TableRows("entity_aspects", "*", to_aspect)
CLAIMS = TableRows("entity_attributes", "*", to_claim)
DEPENDENCIES = TableRows("entity_dependencies", "*", to_dependency)


# --- single rows ------------------------------------------------------------------------


def entity(conn: Connection, agent_id: str, entity_id: str) -> Entity | None:
    """The agent's entity with this id (any status), or None."""
    return ENTITIES.one(conn, "id = ? AND agent_id = ?", (entity_id, agent_id))


def live_entity_named(
    conn: Connection, agent_id: str, name: str, entity_type: str | None = None
) -> Entity | None:
    """The agent's active entity with this canonical name (and type, when given)."""
    canonical = canonical_entity_name(name)
    if entity_type is None:
        return ENTITIES.one(
            conn,
            "agent_id = ? AND canonical_name = ? AND status = 'active' "
            "ORDER BY created_at, id LIMIT 1",
            (agent_id, canonical),
        )
    return ENTITIES.one(
        conn,
        "agent_id = ? AND canonical_name = ? AND entity_type = ? AND status = 'active'",
        (agent_id, canonical, entity_type),
    )


def aspect(conn: Connection, agent_id: str, aspect_id: str) -> Aspect | None:
    return ASPECTS.one(conn, "id = ? AND agent_id = ?", (aspect_id, agent_id))


def claim(conn: Connection, agent_id: str, attribute_id: str) -> Claim | None:
    return CLAIMS.one(conn, "id = ? AND agent_id = ?", (attribute_id, agent_id))


def dependency(conn: Connection, agent_id: str, link_id: str) -> Dependency | None:
    return DEPENDENCIES.one(conn, "id = ? AND agent_id = ?", (link_id, agent_id))


# --- listings and detail ----------------------------------------------------------------


def list_entities(
    conn: Connection,
    agent_id: str,
    *,
    query: str | None = None,
    entity_type: str | None = None,
    status: str | None = "active",
    limit: int = 50,
    offset: int = 0,
) -> EntityPage:
    """A page of the agent's entities, pinned then most mentioned first; `query` matches a
    substring of the canonical name or of an alias."""
    where = ["e.agent_id = :a"]
    params: dict[str, Any] = {"a": agent_id, "limit": limit, "offset": offset}
    if status is not None:
        where.append("e.status = :status")
        params["status"] = status
    if entity_type is not None:
        where.append("e.entity_type = :type")
        params["type"] = entity_type
    if query and canonical_entity_name(query):
        params["q"] = like_contains(canonical_entity_name(query))
        where.append(
            "(e.canonical_name LIKE :q ESCAPE '\\' OR EXISTS (SELECT 1 FROM entity_aliases x "
            "WHERE x.entity_id = e.id AND x.canonical_alias LIKE :q ESCAPE '\\'))"
        )
    clause = " AND ".join(where)
    total = int(
        conn.execute(f"SELECT COUNT(*) FROM entities e WHERE {clause}", params).fetchone()[0]
    )
    rows = conn.execute(
        f"SELECT e.* FROM entities e WHERE {clause} "
        "ORDER BY e.pinned DESC, e.mentions DESC, e.canonical_name, e.id "
        "LIMIT :limit OFFSET :offset",
        params,
    ).fetchall()
    return EntityPage(tuple(to_entity(r) for r in rows), total, limit, offset)


def aliases_of(conn: Connection, agent_id: str, entity_id: str) -> list[Alias]:
    return ALIASES.all(
        conn, "entity_id = ? AND agent_id = ? ORDER BY canonical_alias", (entity_id, agent_id)
    )


def aspects_of(conn: Connection, agent_id: str, entity_id: str) -> list[Aspect]:
    return ASPECTS.all(
        conn,
        "entity_id = ? AND agent_id = ? "
        "ORDER BY status = 'active' DESC, weight DESC, canonical_name",
        (entity_id, agent_id),
    )


CLAIMS_OF_ASPECTS = (
    "SELECT * FROM entity_attributes WHERE agent_id = :a AND aspect_id IN "
    "(SELECT value FROM json_each(:ids)) "
    "ORDER BY status = 'active' DESC, COALESCE(claim_key, ''), version DESC, created_at, id"
)
CLAIMS_OF_ASPECTS_PG = postgres_twin(CLAIMS_OF_ASPECTS)


def claims_of_aspects(
    conn: Connection, agent_id: str, aspect_ids: Sequence[str]
) -> dict[str, list[Claim]]:
    """aspect id -> its claims: active first, then history, newest version first."""
    if not aspect_ids:
        return {}
    rows = conn.execute(
        CLAIMS_OF_ASPECTS_PG if is_postgres(conn) else CLAIMS_OF_ASPECTS,
        {"a": agent_id, "ids": json.dumps(list(aspect_ids))},
    ).fetchall()
    out: dict[str, list[Claim]] = {}
    for row in rows:
        out.setdefault(row["aspect_id"], []).append(to_claim(row))
    return out


_DEPENDENCIES = """
SELECT d.*, s.name AS source_name, t.name AS target_name
FROM entity_dependencies d
JOIN entities s ON s.id = d.source_entity_id
JOIN entities t ON t.id = d.target_entity_id
WHERE d.agent_id = ? AND d.{side} = ?
ORDER BY d.status = 'active' DESC, d.strength DESC, d.id
"""


def dependencies_from(conn: Connection, agent_id: str, entity_id: str) -> list[Dependency]:
    sql = _DEPENDENCIES.format(side="source_entity_id")
    return [to_dependency(r) for r in conn.execute(sql, (agent_id, entity_id))]


def dependencies_to(conn: Connection, agent_id: str, entity_id: str) -> list[Dependency]:
    sql = _DEPENDENCIES.format(side="target_entity_id")
    return [to_dependency(r) for r in conn.execute(sql, (agent_id, entity_id))]


def mentions_of_entity(
    conn: Connection, agent_id: str, entity_id: str, limit: int
) -> tuple[list[EntityMention], int]:
    """The memories mentioning the entity (newest link first) with an excerpt; the total."""
    total = int(
        conn.execute(
            "SELECT COUNT(*) FROM memory_entity_mentions WHERE agent_id = ? AND entity_id = ?",
            (agent_id, entity_id),
        ).fetchone()[0]
    )
    rows = conn.execute(
        """
        SELECT m.memory_id, m.mention_text, m.confidence, m.created_at AS linked_at,
               substr(r.content, 1, ?) AS excerpt, r.type, r.who, r.source_type,
               r.created_at AS memory_created_at, r.is_deleted
        FROM memory_entity_mentions m JOIN memories r ON r.id = m.memory_id
        WHERE m.agent_id = ? AND m.entity_id = ? AND r.agent_id = m.agent_id
        ORDER BY m.created_at DESC, m.memory_id
        LIMIT ?
        """,
        (EXCERPT_CHARS, agent_id, entity_id, limit),
    ).fetchall()
    items = [
        EntityMention(
            memory_id=r["memory_id"],
            mention_text=r["mention_text"],
            confidence=float(r["confidence"]),
            linked_at=r["linked_at"],
            excerpt=r["excerpt"] or "",
            memory_type=r["type"],
            who=r["who"],
            source_type=r["source_type"],
            memory_created_at=r["memory_created_at"],
            memory_deleted=bool(r["is_deleted"]),
        )
        for r in rows
    ]
    return items, total


def stats(conn: Connection, agent_id: str) -> KnowledgeStats:
    """Counts for one agent."""

    def grouped(sql: str) -> dict[str, int]:
        return {str(r[0]): int(r[1]) for r in conn.execute(sql, (agent_id,))}

    def scalar(sql: str) -> int:
        return int(conn.execute(sql, (agent_id,)).fetchone()[0])

    return KnowledgeStats(
        entities=grouped(
            "SELECT status, COUNT(*) FROM entities WHERE agent_id = ? GROUP BY status"
        ),
        entity_types=grouped(
            "SELECT entity_type, COUNT(*) FROM entities WHERE agent_id = ? AND status = 'active' "
            "GROUP BY entity_type"
        ),
        aspects=scalar(
            "SELECT COUNT(*) FROM entity_aspects WHERE agent_id = ? AND status = 'active'"
        ),
        claims=grouped(
            "SELECT status, COUNT(*) FROM entity_attributes WHERE agent_id = ? GROUP BY status"
        ),
        dependencies=scalar(
            "SELECT COUNT(*) FROM entity_dependencies WHERE agent_id = ? AND status = 'active'"
        ),
        mentions=scalar("SELECT COUNT(*) FROM memory_entity_mentions WHERE agent_id = ?"),
        mutations=scalar("SELECT COUNT(*) FROM graph_mutations WHERE agent_id = ?"),
    )


# --- the mutation log -------------------------------------------------------------------


def mutation(conn: Connection, mutation_id: str) -> GraphMutation | None:
    row = conn.execute("SELECT * FROM graph_mutations WHERE id = ?", (mutation_id,)).fetchone()
    return to_mutation(row) if row is not None else None


def mutations_of_pass(conn: Connection, agent_id: str, pass_id: str) -> list[GraphMutation]:
    """A Dreaming pass's mutations, in the order they were made."""
    rows = conn.execute(
        "SELECT * FROM graph_mutations WHERE agent_id = ? AND pass_id = ? ORDER BY seq",
        (agent_id, pass_id),
    ).fetchall()
    return [to_mutation(r) for r in rows]


def mutations_of_target(
    conn: Connection, agent_id: str, table: str, target_id: str, *, after_seq: int = 0
) -> list[GraphMutation]:
    """Mutations of one row (oldest first), optionally only those after `after_seq`."""
    rows = conn.execute(
        "SELECT * FROM graph_mutations WHERE target_table = ? AND target_id = ? AND seq > ? "
        "AND agent_id = ? ORDER BY seq",
        (table, target_id, after_seq, agent_id),
    ).fetchall()
    return [to_mutation(r) for r in rows]


def later_mutations(conn: Connection, mutation: GraphMutation) -> list[GraphMutation]:
    """Mutations of the same row made after `mutation` (a revert must not silently undo them)."""
    return mutations_of_target(
        conn, mutation.agent_id, mutation.target_table, mutation.target_id, after_seq=mutation.seq
    )


def recent_mutations(conn: Connection, agent_id: str, limit: int = 100) -> list[GraphMutation]:
    """The agent's latest mutations, newest first."""
    rows = conn.execute(
        "SELECT * FROM graph_mutations WHERE agent_id = ? ORDER BY seq DESC LIMIT ?",
        (agent_id, limit),
    ).fetchall()
    return [to_mutation(r) for r in rows]
