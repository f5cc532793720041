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
