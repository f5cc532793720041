"""ontology_proposals and ontology_contradictions (owner).

Proposals: review-only operations, pending until a person applies or rejects them. One pending
copy per identical operation: `dedupe_key` is a hash of the operation name, its payload and its
evidence (canonical JSON), so the same proposal from two passes stays one row.
Contradictions: advisory records of two active claim values that disagree; neither claim is
replaced. One row per (agent, left, right) pair.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from signet_desktop.domain.memory import utc_now
from signet_desktop.domain.ontology import Contradiction, Proposal
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.rows import TableRows, from_row, scalar_int

PROPOSAL_COLUMNS = (
    "id, agent_id, operation, status, payload, confidence, rationale, evidence, provenance, "
    "risk, pass_id, created_by, applied_by, rejected_by, result, error, created_at, updated_at, "
    "applied_at, rejected_at"
)
CONTRADICTION_COLUMNS = (
    "id, agent_id, entity_id, entity_name, aspect_id, aspect_name, claim_key, "
    "left_attribute_id, right_attribute_id, left_content, right_content, evidence, detector, "
    "reason, confidence, status, detected_at, resolved_at"
)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def dedupe_key(operation: str, payload: Mapping[str, Any], evidence: Sequence[Any]) -> str:
    """The hash two identical proposals share."""
    text = _canonical({"operation": operation, "payload": payload, "evidence": list(evidence)})
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _proposal(row: Any) -> Proposal:
    return from_row(
        Proposal,
        row,
        payload=json.loads(row["payload"]),
        evidence=tuple(json.loads(row["evidence"] or "[]")),
        result=None if row["result"] is None else json.loads(row["result"]),
    )


PROPOSALS = TableRows("ontology_proposals", PROPOSAL_COLUMNS, _proposal)


def propose(
    conn: Connection,
    *,
    agent_id: str,
    operation: str,
    payload: Mapping[str, Any],
    evidence: Sequence[Mapping[str, Any]],
    confidence: float | None,
    rationale: str | None,
    provenance: str | None,
    risk: str | None,
    pass_id: str | None,
    created_by: str,
) -> tuple[Proposal, bool]:
    """Insert a pending proposal, or return the identical pending one; (row, created)."""
    key = dedupe_key(operation, payload, evidence)
    existing = PROPOSALS.one(
        conn, "agent_id = :a AND dedupe_key = :k AND status = 'pending'", {"a": agent_id, "k": key}
    )
    if existing is not None:
        return existing, False
    proposal_id = str(uuid.uuid4())
    now = utc_now()
    conn.execute(
        "INSERT INTO ontology_proposals (id, agent_id, operation, status, payload, confidence,"
        " rationale, evidence, provenance, risk, dedupe_key, pass_id, created_by, created_at,"
        " updated_at) VALUES (:id, :a, :op, 'pending', :payload, :confidence, :rationale,"
        " :evidence, :provenance, :risk, :k, :pass, :by, :now, :now)",
        {
            "id": proposal_id,
            "a": agent_id,
            "op": operation,
            "payload": _canonical(dict(payload)),
            "confidence": confidence,
            "rationale": rationale,
            "evidence": _canonical([dict(e) for e in evidence]),
            "provenance": provenance,
            "risk": risk,
            "k": key,
            "pass": pass_id,
            "by": created_by,
            "now": now,
        },
    )
    found = get_proposal(conn, agent_id, proposal_id)
    assert found is not None
    return found, True


def get_proposal(conn: Connection, agent_id: str, proposal_id: str) -> Proposal | None:
    return PROPOSALS.one(conn, "agent_id = :a AND id = :i", {"a": agent_id, "i": proposal_id})


def list_proposals(
    conn: Connection,
    agent_id: str,
    *,
    status: str | None = "pending",
    pass_id: str | None = None,
    limit: int = 100,
) -> list[Proposal]:
    """The agent's proposals (newest first), optionally one status or one pass."""
    return PROPOSALS.all(
        conn,
        "agent_id = :a AND (:status IS NULL OR status = :status)"
        " AND (:pass IS NULL OR pass_id = :pass) ORDER BY created_at DESC, id DESC LIMIT :limit",
        {"a": agent_id, "status": status, "pass": pass_id, "limit": limit},
    )


def count_proposals(conn: Connection, agent_id: str, status: str = "pending") -> int:
    return scalar_int(
        conn,
        "SELECT COUNT(*) FROM ontology_proposals WHERE agent_id = :a AND status = :s",
        {"a": agent_id, "s": status},
    )


def _move_pending(
    conn: Connection, agent_id: str, proposal_id: str, sets: str, values: Mapping[str, Any]
) -> bool:
    """Apply `sets` (a fixed SET fragment) to a pending proposal; False if it was not pending."""
    cursor = conn.execute(
        f"UPDATE ontology_proposals SET {sets}, updated_at = :now"
        " WHERE agent_id = :a AND id = :i AND status = 'pending'",
        {**values, "now": utc_now(), "a": agent_id, "i": proposal_id},
    )
    return bool(cursor.rowcount)


def mark_applied(
    conn: Connection, agent_id: str, proposal_id: str, *, actor: str, result: Mapping[str, Any]
) -> bool:
    """pending -> applied, with what the apply changed; False if it was not pending."""
    return _move_pending(
        conn,
        agent_id,
        proposal_id,
        "status = 'applied', applied_by = :by, applied_at = :now, result = :result, error = NULL",
        {"by": actor, "result": _canonical(dict(result))},
    )


def mark_rejected(
    conn: Connection, agent_id: str, proposal_id: str, *, actor: str, reason: str
) -> bool:
    """pending -> rejected with the reason; False if it was not pending."""
    return _move_pending(
        conn,
        agent_id,
        proposal_id,
        "status = 'rejected', rejected_by = :by, rejected_at = :now, error = :reason",
        {"by": actor, "reason": reason},
    )


def mark_failed(conn: Connection, agent_id: str, proposal_id: str, *, error: str) -> bool:
    """pending -> failed (its apply no longer validates, e.g. the target was archived)."""
    return _move_pending(conn, agent_id, proposal_id, "status = 'failed', error = :e", {"e": error})


# -- contradictions ----------------------------------------------------------------------------


def _contradiction(row: Any) -> Contradiction:
    return from_row(
        Contradiction,
        row,
        evidence=tuple(json.loads(row["evidence"] or "[]")),
        confidence=float(row["confidence"]),
    )


CONTRADICTIONS = TableRows("ontology_contradictions", CONTRADICTION_COLUMNS, _contradiction)


def record_contradiction(
    conn: Connection,
    *,
    agent_id: str,
    entity_id: str,
    entity_name: str | None,
    aspect_id: str,
    aspect_name: str | None,
    claim_key: str,
    left_attribute_id: str,
    right_attribute_id: str,
    left_content: str,
    right_content: str,
    evidence: Sequence[Mapping[str, Any]],
    reason: str,
    confidence: float,
    detector: str = "lexical",
) -> str | None:
    """Record one contradiction; its id, or None when the pair was already recorded."""
    contradiction_id = str(uuid.uuid4())
    cursor = conn.execute(
        "INSERT INTO ontology_contradictions (id, agent_id, entity_id, entity_name, aspect_id,"
        " aspect_name, group_key, claim_key, left_attribute_id, right_attribute_id, left_content,"
        " right_content, evidence, detector, reason, confidence, status, detected_at)"
        " VALUES (:id, :a, :e, :en, :asp, :an, :g, :k, :l, :r, :lc, :rc, :ev, :det, :why, :c,"
        " 'active', :now) ON CONFLICT (agent_id, left_attribute_id, right_attribute_id) DO NOTHING",
        {
            "id": contradiction_id,
            "a": agent_id,
            "e": entity_id,
            "en": entity_name,
            "asp": aspect_id,
            "an": aspect_name,
            "g": claim_key,
            "k": claim_key,
            "l": left_attribute_id,
            "r": right_attribute_id,
            "lc": left_content,
            "rc": right_content,
            "ev": _canonical([dict(e) for e in evidence]),
            "det": detector,
            "why": reason,
            "c": confidence,
            "now": utc_now(),
        },
    )
    return contradiction_id if cursor.rowcount else None


def list_contradictions(
    conn: Connection, agent_id: str, *, status: str | None = "active", limit: int = 100
) -> list[Contradiction]:
    return CONTRADICTIONS.all(
        conn,
        "agent_id = :a AND (:status IS NULL OR status = :status)"
        " ORDER BY detected_at DESC, id DESC LIMIT :limit",
        {"a": agent_id, "status": status, "limit": limit},
    )
