"""One Dreaming operation through the graph writer: a typed handler per operation type.

`HANDLERS` maps each operation name to its handler; a handler takes the operation's own
payload type (`dreaming/operations.py`), so a field it reads is one the schema checked. The
apply seam (`dreaming/apply.py`) calls `execute` inside the operation's savepoint; a handler
writes only through `storage/graph*.py` with the operation's `Provenance`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from signet_desktop.domain.errors import Conflict
from signet_desktop.domain.knowledge import Claim, ClaimTimes, Provenance
from signet_desktop.dreaming.operations import (
    Archive,
    ClaimValue,
    CreateAspect,
    CreateEntity,
    CreateLink,
    DeclineAttention,
    Flag,
    MergeAspects,
    MergeEntities,
    Operation,
    Payload,
    RenameEntity,
    SupersedeClaimValue,
    UpdateLink,
)
from signet_desktop.storage import attention as attention_rows
from signet_desktop.storage import graph as graph_writes
from signet_desktop.storage import graph_claims, graph_links, graph_rows
from signet_desktop.storage import knowledge_reads as graph_reads
from signet_desktop.storage import ontology as ontology_rows
from signet_desktop.storage.connect import Connection


@dataclass(frozen=True, slots=True)
class OperationResult:
    """What happened to one operation.

    status: applied | proposed | skipped (rejected by the checks, or nothing to change) |
    failed (the write raised; rolled back to its savepoint). A dry run says valid | proposed |
    skipped instead.
    """

    index: int
    operation: str
    status: str
    code: str | None = None
    reason: str | None = None
    created: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    proposal_id: str | None = None
    contradictions: tuple[str, ...] = ()
    target_id: str | None = None  # the row it made or found (what `$<index>` resolves to)


Handler = Callable[[Connection, Operation, Provenance], OperationResult]
P = TypeVar("P", bound=Payload)


def execute(conn: Connection, op: Operation, prov: Provenance) -> OperationResult:
    """Apply one checked operation (Conflict: it has no handler, or its target is gone)."""
    handler = HANDLERS.get(op.name)
    if handler is None:
        raise Conflict(f"{op.name} cannot be applied", code="operation_unsupported")
    return handler(conn, op, prov)


def _typed(
    model: type[P], handle: Callable[[Connection, Operation, P, Provenance], OperationResult]
) -> Handler:
    """A handler over `model`'s payload (the schema gave the operation exactly that type)."""

    def run(conn: Connection, op: Operation, prov: Provenance) -> OperationResult:
        payload = op.payload
        if not isinstance(payload, model):
            raise Conflict(
                f"{op.name} carries a {type(payload).__name__} payload, not {model.__name__}",
                code="operation_unsupported",
            )
        return handle(conn, op, payload, prov)

    return run


def _done(
    op: Operation, created: Sequence[str] = (), changed: Sequence[str] = ()
) -> OperationResult:
    ids = [*created, *changed]
    made = ids[0] if ids else None
    return OperationResult(
        op.index,
        op.name,
        "applied",
        created=tuple(created),
        changed=tuple(changed),
        target_id=made,
    )


def _unchanged(op: Operation, what: str, row_id: str) -> OperationResult:
    return OperationResult(
        op.index,
        op.name,
        "skipped",
        "no_change",
        f"{what} {row_id} already as asked",
        target_id=row_id,
    )


# -- the handlers, one per operation type ------------------------------------------------------


def _create_entity(
    conn: Connection, op: Operation, p: CreateEntity, prov: Provenance
) -> OperationResult:
    entity, created = graph_writes.create_entity(conn, prov, name=p.name, entity_type=p.type)
    return _done(op, [entity.id]) if created else _unchanged(op, "entity", entity.id)


def _create_aspect(
    conn: Connection, op: Operation, p: CreateAspect, prov: Provenance
) -> OperationResult:
    aspect, created = graph_claims.create_aspect(conn, prov, p.entity_id, p.name)
    return _done(op, [aspect.id]) if created else _unchanged(op, "aspect", aspect.id)


def _add_claim(
    conn: Connection, op: Operation, p: ClaimValue, prov: Provenance
) -> tuple[Claim, bool]:
    """Add `p.value` under its aspect with the operation's confidence and the payload's times."""
    return graph_claims.add_claim_value(
        conn,
        prov,
        p.aspect_id,
        p.value,
        claim_key=p.claim_key,
        confidence=op.envelope.confidence,
        times=ClaimTimes.read(p),
    )


def _add_claim_value(
    conn: Connection, op: Operation, p: ClaimValue, prov: Provenance
) -> OperationResult:
    claim, created = _add_claim(conn, op, p, prov)
    if not created:
        return _unchanged(op, "claim value", claim.id)
    return _with_contradictions(conn, op, p, prov, _done(op, [claim.id]), claim.id)


def _set_claim_value(
    conn: Connection, op: Operation, p: ClaimValue, prov: Provenance
) -> OperationResult:
    claim, changed = graph_claims.set_claim_value(
        conn,
        prov,
        p.aspect_id,
        p.claim_key,
        p.value,
        confidence=op.envelope.confidence,
        times=ClaimTimes.read(p),
    )
    if not changed:
        return _unchanged(op, "claim value", claim.id)
    previous = [claim.previous_attribute_id] if claim.previous_attribute_id else []
    return _with_contradictions(conn, op, p, prov, _done(op, [claim.id], previous), claim.id)


def _supersede(
    conn: Connection, op: Operation, p: SupersedeClaimValue, prov: Provenance
) -> OperationResult:
    target = p.attribute_id
    if target is None:
        claims = graph_reads.claims_of_aspects(conn, prov.agent_id, [p.aspect_id]).get(
            p.aspect_id, []
        )
        active = [c for c in claims if c.status == "active" and c.claim_key == p.claim_key]
        target = active[0].id if active else None
    if target is None:
        claim, _ = _add_claim(conn, op, p, prov)
        return _with_contradictions(conn, op, p, prov, _done(op, [claim.id]), claim.id)
    claim = graph_claims.supersede_claim_value(
        conn, prov, target, p.value, confidence=op.envelope.confidence, times=ClaimTimes.read(p)
    )
    return _with_contradictions(conn, op, p, prov, _done(op, [claim.id], [target]), claim.id)


def _create_link(
    conn: Connection, op: Operation, p: CreateLink, prov: Provenance
) -> OperationResult:
    link, created = graph_links.create_link(
        conn,
        prov,
        p.from_entity_id,
        p.to_entity_id,
        p.link_type,
        confidence=op.envelope.confidence,
        reason=op.envelope.reason,
    )
    return _done(op, [link.id]) if created else _unchanged(op, "link", link.id)


def _update_link(
    conn: Connection, op: Operation, p: UpdateLink, prov: Provenance
) -> OperationResult:
    """A new link type: the old link is archived and the new one created (both logged)."""
    old = graph_reads.dependency(conn, prov.agent_id, p.link_id)
    if old is None:
        raise Conflict(f"link {p.link_id} not found", code="target_not_found")
    if old.dependency_type == p.link_type.strip().lower().replace(" ", "_"):
        return _unchanged(op, "link", old.id)
    graph_links.archive_link(conn, prov, old.id)
    new, _ = graph_links.create_link(
        conn,
        prov,
        old.source_entity_id,
        old.target_entity_id,
        p.link_type,
        strength=old.strength,
        confidence=op.envelope.confidence,
        reason=op.envelope.reason or old.reason,
        aspect_id=old.aspect_id,
    )
    return _done(op, [new.id], [old.id])


def _rename_entity(
    conn: Connection, op: Operation, p: RenameEntity, prov: Provenance
) -> OperationResult:
    entity = graph_writes.rename_entity(conn, prov, p.entity_id, p.new_name)
    return _done(op, changed=[entity.id])


def _archive_entity(
    conn: Connection, op: Operation, p: Archive, prov: Provenance
) -> OperationResult:
    entity = graph_writes.archive_entity(conn, prov, p.target, p.reason)
    return _done(op, changed=[entity.id])


def _archive_aspect(
    conn: Connection, op: Operation, p: Archive, prov: Provenance
) -> OperationResult:
    return _done(op, changed=[graph_claims.archive_aspect(conn, prov, p.target).id])


def _archive_claim_value(
    conn: Connection, op: Operation, p: Archive, prov: Provenance
) -> OperationResult:
    return _done(op, changed=[graph_claims.archive_claim_value(conn, prov, p.target).id])


def _archive_link(conn: Connection, op: Operation, p: Archive, prov: Provenance) -> OperationResult:
    return _done(op, changed=[graph_links.archive_link(conn, prov, p.target).id])


def _merge_entities(
    conn: Connection, op: Operation, p: MergeEntities, prov: Provenance
) -> OperationResult:
    others = [t for t in dict.fromkeys(p.targets) if t != p.survivor]
    survivor = graph_writes.merge_entities(conn, prov, p.survivor, others)
    return _done(op, changed=[survivor.id, *others])


def _merge_aspects(
    conn: Connection, op: Operation, p: MergeAspects, prov: Provenance
) -> OperationResult:
    aspect = graph_claims.merge_aspects(conn, prov, p.target, list(p.sources))
    return _done(op, changed=[aspect.id, *p.sources])


def _flag(conn: Connection, op: Operation, p: Flag, prov: Provenance) -> OperationResult:
    row = attention_rows.create_attention(
        conn,
        agent_id=prov.agent_id,
        kind="hygiene",
        subject_ref=p.subject_ref,
        details={"details": p.details, "reason": op.envelope.reason or ""},
        priority=p.priority,
        pass_id=prov.pass_id,
    )
    return _done(op, [row.id])


def _decline_attention(
    conn: Connection, op: Operation, p: DeclineAttention, prov: Provenance
) -> OperationResult:
    declined = attention_rows.decline_attention(
        conn,
        prov.agent_id,
        p.attention_id,
        pass_id=prov.pass_id,
        resolution=op.envelope.reason or "declined",
    )
    if not declined:
        raise Conflict(f"attention {p.attention_id} is not pending", code="attention_not_pending")
    return _done(op, changed=[p.attention_id])


def _with_contradictions(
    conn: Connection,
    op: Operation,
    p: ClaimValue,
    prov: Provenance,
    result: OperationResult,
    claim_id: str,
) -> OperationResult:
    """Record an advisory contradiction with each other active value of the claim key."""
    claims = graph_reads.claims_of_aspects(conn, prov.agent_id, [p.aspect_id]).get(p.aspect_id, [])
    new = next((c for c in claims if c.id == claim_id), None)
    if new is None or new.claim_key is None:
        return result
    mine = graph_rows.normalize_claim(new.content)
    others = [
        c
        for c in claims
        if c.status == "active"
        and c.id != claim_id
        and c.claim_key == new.claim_key
        and graph_rows.normalize_claim(c.content) != mine
    ]
    if not others:
        return result
    entity = graph_reads.entity(conn, prov.agent_id, p.entity_id)
    aspect = graph_reads.aspect(conn, prov.agent_id, p.aspect_id)
    found = []
    for other in others:
        recorded = ontology_rows.record_contradiction(
            conn,
            agent_id=prov.agent_id,
            entity_id=p.entity_id,
            entity_name=entity.name if entity else None,
            aspect_id=p.aspect_id,
            aspect_name=aspect.name if aspect else None,
            claim_key=new.claim_key,
            left_attribute_id=other.id,
            right_attribute_id=claim_id,
            left_content=other.content,
            right_content=new.content,
            evidence=op.evidence_json(),
            reason=f"{op.name} wrote a value of {new.claim_key!r} that differs from an active one",
            confidence=op.envelope.confidence,
        )
        if recorded:
            found.append(recorded)
    return replace(result, contradictions=tuple(found))


# Every operation type the seam applies; `rename_aspect` passes the schema but has no writer
# yet, so it is refused here (`operation_unsupported`) as before.
HANDLERS: dict[str, Handler] = {
    "create_entity": _typed(CreateEntity, _create_entity),
    "create_aspect": _typed(CreateAspect, _create_aspect),
    "add_claim_value": _typed(ClaimValue, _add_claim_value),
    "set_claim_value": _typed(ClaimValue, _set_claim_value),
    "supersede_claim_value": _typed(SupersedeClaimValue, _supersede),
    "create_link": _typed(CreateLink, _create_link),
    "update_link": _typed(UpdateLink, _update_link),
    "rename_entity": _typed(RenameEntity, _rename_entity),
    "archive_entity": _typed(Archive, _archive_entity),
    "archive_aspect": _typed(Archive, _archive_aspect),
    "archive_claim_value": _typed(Archive, _archive_claim_value),
    "archive_link": _typed(Archive, _archive_link),
    "merge_entities": _typed(MergeEntities, _merge_entities),
    "merge_aspects": _typed(MergeAspects, _merge_aspects),
    "flag": _typed(Flag, _flag),
    "decline_attention": _typed(DeclineAttention, _decline_attention),
}
