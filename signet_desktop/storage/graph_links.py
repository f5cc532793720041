"""Links between entities (`entity_dependencies`) and typed relations (`relations`).

Each primitive checks scope and state and logs every row it changes through
`storage/graph_rows.py`, like the entity primitives in `storage/graph.py`.
"""

from __future__ import annotations

from typing import Any

from signet_desktop.domain.errors import InvalidInput
from signet_desktop.domain.knowledge import (
    MAX_LINK_TYPE_CHARS,
    MAX_REASON_CHARS,
    Dependency,
    Provenance,
    Relation,
    check_text,
    check_unit,
)
from signet_desktop.domain.memory import utc_now
from signet_desktop.storage import graph_rows
from signet_desktop.storage import knowledge_reads as reads
from signet_desktop.storage.connect import Connection

# --- links --------------------------------------------------------------------------------


def _named_link(conn: Connection, row: graph_rows.Row) -> Dependency:
    """A link value with its two entities' names."""
    names = dict(
        conn.execute(
            "SELECT id, name FROM entities WHERE id IN (?, ?)",
            (row["source_entity_id"], row["target_entity_id"]),
        ).fetchall()
    )
    return reads.to_dependency(
        {
            **row,
            "source_name": names.get(row["source_entity_id"], ""),
            "target_name": names.get(row["target_entity_id"], ""),
        }
    )


def live_edge(
    conn: Connection, agent_id: str, src: str, tgt: str, kind: str
) -> graph_rows.Row | None:
    found = conn.execute(
        "SELECT * FROM entity_dependencies WHERE agent_id = ? AND source_entity_id = ? "
        "AND target_entity_id = ? AND dependency_type = ? AND status = 'active'",
        (agent_id, src, tgt, kind),
    ).fetchone()
    return reads.row_dict(found) if found is not None else None


def create_link(
    conn: Connection,
    prov: Provenance,
    source_entity_id: str,
    target_entity_id: str,
    dependency_type: str,
    *,
    strength: float = 0.5,
    confidence: float = 1.0,
    reason: str | None = None,
    aspect_id: str | None = None,
) -> tuple[Dependency, bool]:
    """Get-or-create the active link `source -[type]-> target` between two active entities."""
    if source_entity_id == target_entity_id:
        raise InvalidInput("a link needs two different entities", code="link_invalid")
    graph_rows.entity_row(conn, prov, source_entity_id)
    graph_rows.entity_row(conn, prov, target_entity_id)
    kind = check_text(dependency_type, "link type", MAX_LINK_TYPE_CHARS, code="link_invalid")
    kind = kind.lower().replace(" ", "_")
    strength = check_unit(strength, "strength")
    confidence = check_unit(confidence, "confidence")
    if reason is not None:
        reason = check_text(reason, "reason", MAX_REASON_CHARS, code="link_invalid")
    if aspect_id is not None:
        aspect = graph_rows.aspect_row(conn, prov, aspect_id)
        if aspect["entity_id"] != source_entity_id:
            raise InvalidInput("a link's aspect belongs to its source entity", code="link_invalid")
    existing = live_edge(conn, prov.agent_id, source_entity_id, target_entity_id, kind)
    if existing is not None:
        return _named_link(conn, existing), False
    now = utc_now()
    row = graph_rows.insert_logged(
        conn,
        prov,
        "create_link",
        "entity_dependencies",
        {
            "id": graph_rows.new_id(),
            "source_entity_id": source_entity_id,
            "target_entity_id": target_entity_id,
            "agent_id": prov.agent_id,
            "aspect_id": aspect_id,
            "dependency_type": kind,
            "strength": strength,
            "confidence": confidence,
            "reason": reason,
            "status": "active",
            "proposal_id": prov.proposal_id,
            "proposal_evidence": graph_rows.evidence_column(prov),
            "created_at": now,
            "updated_at": now,
        },
    )
    return _named_link(conn, row), True


def update_link(
    conn: Connection,
    prov: Provenance,
    link_id: str,
    *,
    strength: float | None = None,
    confidence: float | None = None,
    reason: str | None = None,
) -> Dependency:
    """Change an active link's strength, confidence or reason."""
    before = graph_rows.link_row(conn, prov, link_id)
    values: dict[str, Any] = {}
    if strength is not None:
        values["strength"] = check_unit(strength, "strength")
    if confidence is not None:
        values["confidence"] = check_unit(confidence, "confidence")
    if reason is not None:
        values["reason"] = check_text(reason, "reason", MAX_REASON_CHARS, code="link_invalid")
    if not values:
        return _named_link(conn, before)
    values["updated_at"] = utc_now()
    after = graph_rows.update_logged(
        conn, prov, "update_link", "entity_dependencies", before, values
    )
    return _named_link(conn, after)


def archive_link(conn: Connection, prov: Provenance, link_id: str) -> Dependency:
    """Archive an active link (kept for history)."""
    before = graph_rows.link_row(conn, prov, link_id)
    after = graph_rows.update_logged(
        conn,
        prov,
        "archive_link",
        "entity_dependencies",
        before,
        {"status": "archived", "updated_at": utc_now()},
    )
    return _named_link(conn, after)


def create_relation(
    conn: Connection,
    prov: Provenance,
    source_entity_id: str,
    target_entity_id: str,
    relation_type: str,
    *,
    strength: float = 0.5,
    confidence: float = 1.0,
) -> Relation:
    """Record a legacy relation (one row per pair and type; a repeat bumps `mentions`)."""
    if source_entity_id == target_entity_id:
        raise InvalidInput("a relation needs two different entities", code="link_invalid")
    graph_rows.entity_row(conn, prov, source_entity_id)
    graph_rows.entity_row(conn, prov, target_entity_id)
    kind = check_text(relation_type, "relation type", MAX_LINK_TYPE_CHARS, code="link_invalid")
    found = conn.execute(
        "SELECT * FROM relations WHERE agent_id = ? AND source_entity_id = ? "
        "AND target_entity_id = ? AND relation_type = ?",
        (prov.agent_id, source_entity_id, target_entity_id, kind),
    ).fetchone()
    now = utc_now()
    if found is not None:
        before = reads.row_dict(found)
        after = graph_rows.update_logged(
            conn,
            prov,
            "create_relation",
            "relations",
            before,
            {"mentions": before["mentions"] + 1, "updated_at": now},
        )
        return reads.to_relation(after)
    row = graph_rows.insert_logged(
        conn,
        prov,
        "create_relation",
        "relations",
        {
            "id": graph_rows.new_id(),
            "agent_id": prov.agent_id,
            "source_entity_id": source_entity_id,
            "target_entity_id": target_entity_id,
            "relation_type": kind,
            "strength": check_unit(strength, "strength"),
            "confidence": check_unit(confidence, "confidence"),
            "created_at": now,
            "updated_at": now,
        },
    )
    return reads.to_relation(row)
