"""Graph rows whose evidence was purged become `unsupported` (migrations/0003).

Source removal is the caller: an entity recorded as derived from a purged transcript
(`entities.source_kind`, `entities.source_id`) keeps its row for Dreaming's review but is no
longer `active`. The writes themselves go through `storage/graph.py`'s entity primitives,
which log each one in `graph_mutations` (`storage/graph_rows.py`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from signet_desktop.domain.knowledge import Provenance
from signet_desktop.storage import graph
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.rows import scalar_int

STALENESS_ACTOR = "source-removal"

_MATCH = (
    "agent_id = :a AND source_kind = :kind AND status = 'active' "
    "AND source_id IN (SELECT value FROM json_each(:ids))"
)


def count_supported_by(conn: Connection, agent_id: str, kind: str, ids: Sequence[str]) -> int:
    """Active entities derived from these evidence ids."""
    return scalar_int(
        conn,
        f"SELECT COUNT(*) FROM entities WHERE {_MATCH}",
        {"a": agent_id, "kind": kind, "ids": json.dumps(list(ids))},
    )


def mark_unsupported(conn: Connection, agent_id: str, kind: str, ids: Sequence[str]) -> int:
    """Mark active entities derived from these evidence ids unsupported; how many."""
    prov = Provenance(actor=STALENESS_ACTOR, agent_id=agent_id)
    return graph.mark_entities_unsupported(conn, prov, kind, ids)


def delete_orphaned(conn: Connection, entity_ids: Sequence[str]) -> int:
    """Delete the entities among `entity_ids` that only purged memories supported; how many.

    The rule lives in `storage/graph.py: ORPHANED` (see docs/GRAPH.md).
    """
    return graph.delete_orphaned(conn, entity_ids)
