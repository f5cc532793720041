"""Remember-time entity linking: a new memory's proper nouns -> entities that already exist.

Runs inside the remember write transaction, so a memory and its mention rows commit
together. It only ever writes `memory_entity_mentions` (storage/mentions.py); entities,
aspects, attributes and edges come from structured payloads, explicit operations and
Dreaming's apply seam, never from here.
"""

from __future__ import annotations

from signet_desktop.domain.memory import Memory
from signet_desktop.graph.mentions import candidates, resolve
from signet_desktop.storage import mentions
from signet_desktop.storage.connect import Connection


def link_mentions(conn: Connection, memory: Memory) -> int:
    """Link `memory` to the agent's existing entities it names; returns rows written."""
    if not mentions.has_entities(conn, memory.agent_id):
        return 0  # nothing to link to: skip the text work
    found = candidates(memory.content)
    if not found:
        return 0
    known = mentions.known_names(
        conn, memory.agent_id, list(dict.fromkeys(c.canonical for c in found))
    )
    if not known:
        return 0
    return mentions.link(conn, memory.agent_id, memory.id, resolve(found, known))
