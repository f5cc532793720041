"""Plain-SQL seeding of graph rows for traversal tests (against migrations/0003's tables).

Deliberately below the graph's write API (storage/graph.py): traversal tests need exact rows
(strengths, confidences, cycles, hubs of 10,000 mentions) written fast, in one transaction.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Sequence

from signet_desktop.domain.entities import canonical_entity_name
from signet_desktop.domain.memory import NewMemory
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.memories import insert_memory

NOW = "2026-01-01T00:00:00.000Z"
_ids = itertools.count(1)


def _id(prefix: str) -> str:
    return f"{prefix}-{next(_ids)}"


def entity(conn: Connection, agent_id: str, name: str, entity_type: str = "unknown") -> str:
    entity_id = _id("ent")
    conn.execute(
        "INSERT INTO entities (id, agent_id, name, canonical_name, entity_type, created_at,"
        " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (entity_id, agent_id, name, canonical_entity_name(name), entity_type, NOW, NOW),
    )
    return entity_id


def alias(conn: Connection, agent_id: str, entity_id: str, text: str) -> None:
    conn.execute(
        "INSERT INTO entity_aliases (id, entity_id, agent_id, alias, canonical_alias, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (_id("alias"), entity_id, agent_id, text, canonical_entity_name(text), NOW),
    )


def aspect(conn: Connection, agent_id: str, entity_id: str, name: str, weight: float = 0.5) -> str:
    aspect_id = _id("asp")
    conn.execute(
        "INSERT INTO entity_aspects (id, entity_id, agent_id, name, canonical_name, weight,"
        " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (aspect_id, entity_id, agent_id, name, name.lower(), weight, NOW, NOW),
    )
    return aspect_id


def claim(
    conn: Connection,
    agent_id: str,
    aspect_id: str,
    content: str,
    memory_id: str | None,
    *,
    confidence: float = 1.0,
    status: str = "active",
) -> str:
    claim_id = _id("claim")
    conn.execute(
        "INSERT INTO entity_attributes (id, aspect_id, agent_id, memory_id, content,"
        " normalized_content, confidence, status, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (claim_id, aspect_id, agent_id, memory_id, content, content.lower(), confidence, status,
         NOW, NOW),
    )  # fmt: skip
    return claim_id


def depends(
    conn: Connection,
    agent_id: str,
    source: str,
    target: str,
    *,
    strength: float = 0.8,
    confidence: float = 1.0,
    kind: str = "uses",
) -> str:
    edge_id = _id("dep")
    conn.execute(
        "INSERT INTO entity_dependencies (id, source_entity_id, target_entity_id, agent_id,"
        " dependency_type, strength, confidence, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (edge_id, source, target, agent_id, kind, strength, confidence, NOW, NOW),
    )
    return edge_id


def mention(conn: Connection, agent_id: str, memory_id: str, entity_id: str) -> None:
    conn.execute(
        "INSERT INTO memory_entity_mentions (memory_id, entity_id, agent_id,"
        " created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
        (memory_id, entity_id, agent_id, NOW),
    )


def memories(
    conn: Connection, agent_id: str, texts: Sequence[str], *, kind: str = "fact"
) -> list[str]:
    """Insert memory rows directly (FTS by trigger; no vectors); their ids in order."""
    ids = []
    for text in texts:
        memory_id = str(uuid.uuid4())
        insert_memory(
            conn,
            memory_id,
            NewMemory(agent_id, text, type=kind),
            actor="test",
            embedding_model=None,
        )
        ids.append(memory_id)
    return ids
