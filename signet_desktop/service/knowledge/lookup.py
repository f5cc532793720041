"""The narrow entity lookup of prompt-submit: memories linked to entities the prompt names.

Before (and beside) recall, a prompt that names an entity the agent already has (by name or
alias, the same proper-noun candidates remember-time linking uses) brings the memories
mentioning it — precise hits recall might rank below its threshold. Read-only; scoped to the
agent; the caller applies the project rule and the injection budget.
"""

from __future__ import annotations

from signet_desktop.domain.memory import Memory
from signet_desktop.graph.mentions import candidates
from signet_desktop.storage import memories, mentions
from signet_desktop.storage.connect import Connection

MAX_ENTITY_MEMORIES = 5


def entity_memories(
    conn: Connection, agent_id: str, text: str, limit: int = MAX_ENTITY_MEMORIES
) -> list[Memory]:
    """Live memories of `agent_id` mentioning entities named in `text`, best first."""
    found = candidates(text)
    if not found:
        return []
    known = mentions.known_names(conn, agent_id, list(dict.fromkeys(c.canonical for c in found)))
    if not known:
        return []
    entity_ids = list(dict.fromkeys(entity_id for entity_id, _ in known.values()))
    ids = mentions.memories_mentioning(conn, agent_id, entity_ids, limit)
    by_id = memories.get_memories(conn, agent_id, ids)
    return [by_id[i] for i in ids if i in by_id and not by_id[i].is_deleted]
