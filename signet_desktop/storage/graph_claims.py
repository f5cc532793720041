"""Aspects of entities and the claims under them (`entity_aspects`, `entity_attributes`).

Each primitive checks scope and state and logs every row it changes through
`storage/graph_rows.py`, like the entity primitives in `storage/graph.py`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from signet_desktop.domain.entities import canonical_entity_name
from signet_desktop.domain.errors import Conflict, InvalidInput
from signet_desktop.domain.knowledge import (
    CLAIM_KINDS,
    MAX_ASPECT_CHARS,
    MAX_CLAIM_CHARS,
    MAX_KEY_CHARS,
    Aspect,
    Claim,
    ClaimTimes,
    Provenance,
    check_text,
    check_times,
    check_unit,
)
from signet_desktop.domain.memory import utc_now
from signet_desktop.storage import graph_rows
from signet_desktop.storage import knowledge_reads as reads
from signet_desktop.storage.connect import Connection


def move_claims(
    conn: Connection, prov: Provenance, operation: str, from_aspect: str, to_aspect: str
) -> None:
    for found in conn.execute(
        "SELECT * FROM entity_attributes WHERE aspect_id = ? ORDER BY id", (from_aspect,)
    ).fetchall():
        before = reads.row_dict(found)
        graph_rows.update_logged(
            conn,
            prov,
            operation,
            "entity_attributes",
            before,
            {"aspect_id": to_aspect, "updated_at": utc_now()},
        )
    for found in conn.execute(
        "SELECT * FROM entity_dependencies WHERE aspect_id = ? ORDER BY id", (from_aspect,)
    ).fetchall():
        before = reads.row_dict(found)
        graph_rows.update_logged(
            conn, prov, operation, "entity_dependencies", before, {"aspect_id": to_aspect}
        )


# --- aspects ------------------------------------------------------------------------------


def create_aspect(
    conn: Connection, prov: Provenance, entity_id: str, name: str, *, weight: float = 0.5
) -> tuple[Aspect, bool]:
    """Get-or-create an aspect of an active entity; an archived one of that name comes back."""
    graph_rows.entity_row(conn, prov, entity_id)
    name = check_text(name, "aspect name", MAX_ASPECT_CHARS, code="aspect_invalid")
    weight = check_unit(weight, "weight")
    canonical = canonical_entity_name(name)
    if not canonical:
        raise InvalidInput("aspect name has no letters or digits", code="aspect_invalid")
    found = conn.execute(
        "SELECT * FROM entity_aspects WHERE entity_id = ? AND canonical_name = ?",
        (entity_id, canonical),
    ).fetchone()
    if found is not None:
        before = reads.row_dict(found)
        if before["status"] == "active":
            return reads.to_aspect(before), False
        if before["status"] == "merged":
            raise Conflict(f"aspect {name!r} was merged into another", code="aspect_not_active")
        after = graph_rows.update_logged(
            conn,
            prov,
            "restore_aspect",
            "entity_aspects",
            before,
            {"status": "active", "archived_at": None, "updated_at": utc_now()},
        )
        return reads.to_aspect(after), True
    now = utc_now()
    row = graph_rows.insert_logged(
        conn,
        prov,
        "create_aspect",
        "entity_aspects",
        {
            "id": graph_rows.new_id(),
            "entity_id": entity_id,
            "agent_id": prov.agent_id,
            "name": name,
            "canonical_name": canonical,
            "weight": weight,
            "status": "active",
            "proposal_id": prov.proposal_id,
            "created_at": now,
            "updated_at": now,
        },
    )
    return reads.to_aspect(row), True


def archive_aspect(conn: Connection, prov: Provenance, aspect_id: str) -> Aspect:
    """Archive an active aspect (its claims stay, hidden with it)."""
    before = graph_rows.aspect_row(conn, prov, aspect_id)
    now = utc_now()
    after = graph_rows.update_logged(
        conn,
        prov,
        "archive_aspect",
        "entity_aspects",
        before,
        {"status": "archived", "archived_at": now, "updated_at": now},
    )
    return reads.to_aspect(after)


def merge_aspects(
    conn: Connection, prov: Provenance, survivor_id: str, other_ids: Sequence[str]
) -> Aspect:
    """Fold other aspects of the same entity into `survivor_id` (claims and links follow)."""
    survivor = graph_rows.aspect_row(conn, prov, survivor_id)
    others = list(dict.fromkeys(other_ids))
    if not others or survivor_id in others:
        raise InvalidInput("merge needs other aspects than the survivor")
    rows = [graph_rows.aspect_row(conn, prov, other) for other in others]
    for row in rows:
        if row["entity_id"] != survivor["entity_id"]:
            raise InvalidInput("only aspects of one entity can be merged", code="aspect_invalid")
    for row in rows:
        move_claims(conn, prov, "merge_aspects", row["id"], survivor_id)
        graph_rows.update_logged(
            conn,
            prov,
            "merge_aspects",
            "entity_aspects",
            row,
            {"status": "merged", "updated_at": utc_now()},
        )
    return reads.to_aspect(survivor)


# --- claims -------------------------------------------------------------------------------


def _claim_values(
    prov: Provenance,
    aspect_id: str,
    content: str,
    *,
    kind: str,
    claim_key: str | None,
    group_key: str | None,
    confidence: float,
    importance: float,
    memory_id: str | None,
    times: ClaimTimes,
) -> dict[str, Any]:
    content = check_text(content, "claim", MAX_CLAIM_CHARS, code="claim_invalid")
    times = check_times(times)
    if kind not in CLAIM_KINDS:
        raise InvalidInput(
            f"unknown claim kind {kind!r}; allowed: {', '.join(CLAIM_KINDS)}", code="claim_invalid"
        )
    if claim_key is not None:
        claim_key = check_text(claim_key, "claim_key", MAX_KEY_CHARS, code="claim_invalid")
    if group_key is not None:
        group_key = check_text(group_key, "group_key", MAX_KEY_CHARS, code="claim_invalid")
    now = utc_now()
    return {
        "id": graph_rows.new_id(),
        "aspect_id": aspect_id,
        "agent_id": prov.agent_id,
        "memory_id": memory_id or prov.source_memory_id,
        "kind": kind,
        "content": content,
        "normalized_content": graph_rows.normalize_claim(content),
        "confidence": check_unit(confidence, "confidence"),
        "importance": check_unit(importance, "importance"),
        "status": "active",
        "claim_key": claim_key,
        "group_key": group_key,
        "proposal_id": prov.proposal_id,
        "proposal_evidence": graph_rows.evidence_column(prov),
        "version": 1,
        **times.as_dict(),
        "created_at": now,
        "updated_at": now,
    }


def add_claim_value(
    conn: Connection,
    prov: Provenance,
    aspect_id: str,
    content: str,
    *,
    kind: str = "attribute",
    claim_key: str | None = None,
    group_key: str | None = None,
    confidence: float = 1.0,
    importance: float = 0.5,
    memory_id: str | None = None,
    valid_from: str | None = None,
    valid_until: str | None = None,
    times: ClaimTimes | None = None,
) -> tuple[Claim, bool]:
    """Add a claim under an active aspect; an identical active claim is returned instead.
    `times` (or the shorthand `valid_from`/`valid_until`) says when it holds or happened."""
    graph_rows.aspect_row(conn, prov, aspect_id)
    if times is None:
        times = ClaimTimes(valid_from=valid_from, valid_until=valid_until)
    values = _claim_values(
        prov,
        aspect_id,
        content,
        kind=kind,
        claim_key=claim_key,
        group_key=group_key,
        confidence=confidence,
        importance=importance,
        memory_id=memory_id,
        times=times,
    )
    same = conn.execute(
        "SELECT * FROM entity_attributes WHERE aspect_id = ? AND status = 'active' "
        "AND normalized_content = ? AND COALESCE(claim_key, '') = COALESCE(?, '') LIMIT 1",
        (aspect_id, values["normalized_content"], values["claim_key"]),
    ).fetchone()
    if same is not None:
        return reads.to_claim(same), False
    row = graph_rows.insert_logged(conn, prov, "add_claim_value", "entity_attributes", values)
    return reads.to_claim(row), True


def set_claim_value(
    conn: Connection,
    prov: Provenance,
    aspect_id: str,
    claim_key: str,
    content: str,
    *,
    kind: str = "attribute",
    group_key: str | None = None,
    confidence: float = 1.0,
    importance: float = 0.5,
    memory_id: str | None = None,
    times: ClaimTimes | None = None,
) -> tuple[Claim, bool]:
    """The keyed value of an aspect: a new value supersedes the active one (a new version);
    the same value is returned unchanged (False)."""
    graph_rows.aspect_row(conn, prov, aspect_id)
    claim_key = check_text(claim_key, "claim_key", MAX_KEY_CHARS, code="claim_invalid")
    current = conn.execute(
        "SELECT * FROM entity_attributes WHERE aspect_id = ? AND claim_key = ? "
        "AND status = 'active' ORDER BY version DESC, created_at DESC LIMIT 1",
        (aspect_id, claim_key),
    ).fetchone()
    if current is None:
        return add_claim_value(
            conn,
            prov,
            aspect_id,
            content,
            kind=kind,
            claim_key=claim_key,
            group_key=group_key,
            confidence=confidence,
            importance=importance,
            memory_id=memory_id,
            times=times,
        )
    if current["normalized_content"] == graph_rows.normalize_claim(content.strip()):
        return reads.to_claim(current), False
    claim = supersede_claim_value(
        conn,
        prov,
        current["id"],
        content,
        confidence=confidence,
        importance=importance,
        memory_id=memory_id,
        times=times,
    )
    return claim, True


def supersede_claim_value(
    conn: Connection,
    prov: Provenance,
    attribute_id: str,
    content: str,
    *,
    confidence: float | None = None,
    importance: float | None = None,
    memory_id: str | None = None,
    times: ClaimTimes | None = None,
) -> Claim:
    """Replace an active claim with a new version; the old one stays, `superseded`."""
    old = graph_rows.claim_row(conn, prov, attribute_id)
    graph_rows.aspect_row(conn, prov, old["aspect_id"])
    values = _claim_values(
        prov,
        old["aspect_id"],
        content,
        kind=old["kind"],
        claim_key=old["claim_key"],
        group_key=old["group_key"],
        confidence=old["confidence"] if confidence is None else confidence,
        importance=old["importance"] if importance is None else importance,
        memory_id=memory_id,
        times=times or ClaimTimes(),
    )
    values.update(
        version=int(old["version"]) + 1,
        version_root_id=old["version_root_id"] or old["id"],
        previous_attribute_id=old["id"],
    )
    row = graph_rows.insert_logged(conn, prov, "supersede_claim_value", "entity_attributes", values)
    graph_rows.update_logged(
        conn,
        prov,
        "supersede_claim_value",
        "entity_attributes",
        old,
        {"status": "superseded", "superseded_by": row["id"], "updated_at": utc_now()},
    )
    return reads.to_claim(row)


def archive_claim_value(conn: Connection, prov: Provenance, attribute_id: str) -> Claim:
    """Archive an active claim (kept for history)."""
    before = graph_rows.claim_row(conn, prov, attribute_id)
    after = graph_rows.update_logged(
        conn,
        prov,
        "archive_claim_value",
        "entity_attributes",
        before,
        {"status": "archived", "updated_at": utc_now()},
    )
    return reads.to_claim(after)


def _other_evidence(evidence_json: str, purged: set[str]) -> bool:
    try:
        items = json.loads(evidence_json or "[]")
    except ValueError:
        return False
    for item in items if isinstance(items, list) else []:
        ref = str(item.get("source_ref", "")) if isinstance(item, dict) else ""
        if ref and not (ref.startswith("memory:") and ref[len("memory:") :] in purged):
            return True
    return False


def mark_claims_unsupported(
    conn: Connection, memory_ids: Sequence[str], *, actor: str = "retention"
) -> int:
    """Active claims whose only evidence is among `memory_ids` become `unsupported`.

    Called before the memories are purged (their `memory_id` is then nulled by the foreign
    key); a claim that cites other evidence stays active. Never deletes a claim.
    """
    if not memory_ids:
        return 0
    purged = set(memory_ids)
    found = conn.execute(
        "SELECT * FROM entity_attributes WHERE status = 'active' "
        "AND memory_id IN (SELECT value FROM json_each(:ids)) ORDER BY id",
        {"ids": json.dumps(sorted(purged))},
    ).fetchall()
    marked = 0
    for item in found:
        before = reads.row_dict(item)
        if _other_evidence(before["proposal_evidence"], purged):
            continue
        prov = Provenance(actor=actor, agent_id=before["agent_id"])
        graph_rows.update_logged(
            conn,
            prov,
            "mark_unsupported",
            "entity_attributes",
            before,
            {"status": "unsupported", "updated_at": utc_now()},
        )
        marked += 1
    return marked
