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
            INSERT INTO memory_entity_mentions
                (memory_id, entity_id, agent_id, mention_text, confidence, created_at)
            VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT DO NOTHING
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


# --- graph maintenance (called by storage/graph.py, which logs each change) -----------------

MentionRow = dict[str, object]

_MENTION_COLUMNS = (
    "memory_id",
    "entity_id",
    "agent_id",
    "mention_text",
    "confidence",
    "created_at",
)


def _mention_row(row: object) -> MentionRow:
    return {key: row[key] for key in _MENTION_COLUMNS}  # type: ignore[index]


def mention_rows_of(conn: Connection, entity_id: str) -> list[MentionRow]:
    """Every mention row of an entity, as plain dicts."""
    rows = conn.execute(
        "SELECT * FROM memory_entity_mentions WHERE entity_id = ? ORDER BY memory_id",
        (entity_id,),
    ).fetchall()
    return [_mention_row(r) for r in rows]


def mention_row(conn: Connection, memory_id: str, entity_id: str) -> MentionRow | None:
    row = conn.execute(
        "SELECT * FROM memory_entity_mentions WHERE memory_id = ? AND entity_id = ?",
        (memory_id, entity_id),
    ).fetchone()
    return _mention_row(row) if row is not None else None


def repoint(
    conn: Connection, from_entity: str, to_entity: str
) -> list[tuple[MentionRow, MentionRow | None]]:
    """Move an entity's mention rows to another (a merge); a memory already linked to the
    target loses the duplicate row. Returns (before, after-or-None-if-dropped) per row."""
    changes: list[tuple[MentionRow, MentionRow | None]] = []
    for before in mention_rows_of(conn, from_entity):
        memory_id = str(before["memory_id"])
        if mention_row(conn, memory_id, to_entity) is not None:
            delete_row(conn, before)
            changes.append((before, None))
            continue
        conn.execute(
            "UPDATE memory_entity_mentions SET entity_id = ? WHERE memory_id = ? AND entity_id = ?",
            (to_entity, memory_id, from_entity),
        )
        changes.append((before, {**before, "entity_id": to_entity}))
    return changes


def insert_row(conn: Connection, row: MentionRow) -> bool:
    """Put a mention row back as it was (a revert); False if the key is taken."""
    cursor = conn.execute(
        """
        INSERT INTO memory_entity_mentions
            (memory_id, entity_id, agent_id, mention_text, confidence, created_at)
        VALUES (:memory_id, :entity_id, :agent_id, :mention_text, :confidence, :created_at)
        ON CONFLICT DO NOTHING
        """,
        {key: row.get(key) for key in _MENTION_COLUMNS},
    )
    return cursor.rowcount > 0


def delete_row(conn: Connection, row: MentionRow) -> bool:
    """Drop one mention row by its key; False if it was not there."""
    cursor = conn.execute(
        "DELETE FROM memory_entity_mentions WHERE memory_id = ? AND entity_id = ?",
        (row["memory_id"], row["entity_id"]),
    )
    return cursor.rowcount > 0
