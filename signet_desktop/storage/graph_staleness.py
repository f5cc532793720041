"""Graph rows whose evidence was purged become `unsupported` (migrations/0003).

Source removal is the writer so far: an entity recorded as derived from a purged transcript
(`entities.source_kind`, `entities.source_id`) keeps its row for Dreaming's review but is no
longer `active`. The graph issue's owner of `entities` takes this module over.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from signet_desktop.domain.memory import utc_now
from signet_desktop.storage.connect import Connection

_MATCH = (
    "agent_id = :a AND source_kind = :kind AND status = 'active' "
    "AND source_id IN (SELECT value FROM json_each(:ids))"
)


def count_supported_by(conn: Connection, agent_id: str, kind: str, ids: Sequence[str]) -> int:
    """Active entities derived from these evidence ids."""
    row = conn.execute(
        f"SELECT COUNT(*) FROM entities WHERE {_MATCH}",
        {"a": agent_id, "kind": kind, "ids": json.dumps(list(ids))},
    ).fetchone()
    return int(row[0])


def mark_unsupported(conn: Connection, agent_id: str, kind: str, ids: Sequence[str]) -> int:
    """Mark active entities derived from these evidence ids unsupported; how many."""
    cursor = conn.execute(
        f"UPDATE entities SET status = 'unsupported', updated_at = :now WHERE {_MATCH}",
        {"a": agent_id, "kind": kind, "ids": json.dumps(list(ids)), "now": utc_now()},
    )
    return int(cursor.rowcount)


# Retention: an entity the purged memories named, that nothing supports any more. Kept:
# pinned entities, ones another memory still mentions, ones with structure (aspects,
# dependencies, relations), merge targets, and entities derived from other evidence.
ORPHANED = """
SELECT e.id FROM entities e
WHERE e.id IN (SELECT value FROM json_each(:ids)) AND e.pinned = 0
  AND e.status IN ('active', 'unsupported')
  AND (e.source_kind IS NULL OR e.source_kind = 'memory')
  AND NOT EXISTS (SELECT 1 FROM memory_entity_mentions m WHERE m.entity_id = e.id)
  AND NOT EXISTS (SELECT 1 FROM entity_aspects a WHERE a.entity_id = e.id)
  AND NOT EXISTS (SELECT 1 FROM entity_dependencies d
                  WHERE d.source_entity_id = e.id OR d.target_entity_id = e.id)
  AND NOT EXISTS (SELECT 1 FROM relations r
                  WHERE r.source_entity_id = e.id OR r.target_entity_id = e.id)
  AND NOT EXISTS (SELECT 1 FROM entities other WHERE other.merged_into = e.id)
"""


def delete_orphaned(conn: Connection, entity_ids: Sequence[str]) -> int:
    """Delete the entities among `entity_ids` that only purged memories supported; how many."""
    if not entity_ids:
        return 0
    ids = [r[0] for r in conn.execute(ORPHANED, {"ids": json.dumps(list(entity_ids))})]
    if not ids:
        return 0
    cursor = conn.execute(
        "DELETE FROM entities WHERE id IN (SELECT value FROM json_each(:ids))",
        {"ids": json.dumps(ids)},
    )
    return int(cursor.rowcount)
