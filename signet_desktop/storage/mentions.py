"""memory_entity_mentions: remember-time links from a memory to entities that already exist.

The owner of that table. Lookups read `entities` and `entity_aliases` (active entities of the
same agent only); nothing here creates or changes an entity, aspect, attribute or edge.
"""

from __future__ import annotations

from collections.abc import Sequence

from signet_desktop.domain.entities import EntityMatch, Mention
from signet_desktop.domain.memory import utc_now
from signet_desktop.storage.connect import Connection

NAME_CONFIDENCE = 1.0
ALIAS_CONFIDENCE = 0.9


def has_entities(conn: Connection, agent_id: str) -> bool:
    """Does the agent have any active entity? (one index seek; most stores have none yet)"""
    row = conn.execute(
        "SELECT 1 FROM entities WHERE agent_id = ? AND status = 'active' LIMIT 1", (agent_id,)
    ).fetchone()
    return row is not None


def known_names(
    conn: Connection, agent_id: str, canonical_names: Sequence[str]
) -> dict[str, tuple[str, float]]:
    """canonical name or alias -> (active entity id, confidence) among `canonical_names`.

    A name beats an alias; among several entities of one name (types differ) the oldest wins.
    """
    if not canonical_names:
        return {}
    names = list(dict.fromkeys(canonical_names))
    marks = ", ".join("?" for _ in names)
    rows = conn.execute(
        f"""
        SELECT canonical_name AS name, id, created_at, 0 AS via_alias FROM entities
        WHERE agent_id = ? AND status = 'active' AND canonical_name IN ({marks})
        UNION ALL
        SELECT a.canonical_alias, e.id, e.created_at, 1 FROM entity_aliases a
        JOIN entities e ON e.id = a.entity_id
        WHERE a.agent_id = ? AND e.agent_id = ? AND e.status = 'active'
          AND a.canonical_alias IN ({marks})
        ORDER BY via_alias, created_at, id
        """,
        (agent_id, *names, agent_id, agent_id, *names),
    ).fetchall()
    found: dict[str, tuple[str, float]] = {}
    for row in rows:
        confidence = ALIAS_CONFIDENCE if row["via_alias"] else NAME_CONFIDENCE
        found.setdefault(row["name"], (row["id"], confidence))
    return found


def link(conn: Connection, agent_id: str, memory_id: str, matches: Sequence[EntityMatch]) -> int:
    """Write one mention row per match (existing links stay); returns rows written."""
    now = utc_now()
    written = 0
    for match in matches:
        cursor = conn.execute(
            """
            INSERT OR IGNORE INTO memory_entity_mentions
                (memory_id, entity_id, agent_id, mention_text, confidence, created_at)
            VALUES (?, ?, ?, ?, ?, ?)
            """,
            (memory_id, match.entity_id, agent_id, match.mention_text, match.confidence, now),
        )
        written += cursor.rowcount
    return written


def mentions_of(conn: Connection, agent_id: str, memory_id: str) -> list[Mention]:
    """The memory's links with their entity names, strongest first."""
    rows = conn.execute(
        """
        SELECT m.memory_id, m.entity_id, e.name, m.mention_text, m.confidence, m.created_at
        FROM memory_entity_mentions m JOIN entities e ON e.id = m.entity_id
        WHERE m.agent_id = ? AND m.memory_id = ? AND e.agent_id = m.agent_id
        ORDER BY m.confidence DESC, e.name, m.entity_id
        """,
        (agent_id, memory_id),
    ).fetchall()
    return [Mention(r[0], r[1], r[2], r[3], float(r[4]), r[5]) for r in rows]


def memories_mentioning(
    conn: Connection, agent_id: str, entity_ids: Sequence[str], limit: int
) -> list[str]:
    """Ids of the agent's live memories linked to any of these entities, most important first.

    Ties go to the newer memory; a memory linked to several of them is listed once.
    """
    if not entity_ids or limit <= 0:
        return []
    ids = list(dict.fromkeys(entity_ids))
    marks = ", ".join("?" for _ in ids)
    rows = conn.execute(
        f"""
        SELECT m.id FROM memories m
        WHERE m.agent_id = ? AND m.is_deleted = 0 AND m.id IN (
            SELECT memory_id FROM memory_entity_mentions
            WHERE agent_id = ? AND entity_id IN ({marks}))
        ORDER BY m.pinned DESC, m.importance DESC, m.created_at DESC, m.id
        LIMIT ?
        """,
        (agent_id, agent_id, *ids, limit),
    ).fetchall()
    return [row[0] for row in rows]


def delete_for_memories(conn: Connection, memory_ids: Sequence[str]) -> list[str]:
    """Drop the mention rows of purged memories (retention); the entity ids they named."""
    if not memory_ids:
        return []
    marks = ", ".join("?" for _ in memory_ids)
    rows = conn.execute(
        f"DELETE FROM memory_entity_mentions WHERE memory_id IN ({marks}) RETURNING entity_id",
        tuple(memory_ids),
    ).fetchall()
    return sorted({str(r[0]) for r in rows})
