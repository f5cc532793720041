"""The apply seam (`applyDreamingOperations`): validate everything, then write in small batches.

1. `validate_operations` (dreaming/apply_checks.py) on a read connection: scope, schema,
   exact quotes, hygiene provenance, caps. A request over `max_per_request` is rejected whole.
2. Writes, only after that: batches of at most `batch_size` operations, each batch one short
   write transaction, each operation in its own SAVEPOINT (a failure rolls back that operation
   alone). Graph rows are written only through `storage/graph.py` with a `Provenance` (actor,
   pass, proposal — the attention or ontology proposal behind it — and the cited evidence).
   Review-only operations become pending `ontology_proposals` (deduplicated); a claim value
   that disagrees with another active value of its claim key records an advisory
   `ontology_contradictions` row (neither claim is replaced); attention an operation cites is
   resolved with the pass id. Every operation, whatever happened to it, is appended to
   `dreaming_operations` in the batch that handled it.
3. After commit: one `ontology.changed` event (when a sink is given).

Fault points for crash tests (`storage/faults.py`): `SIGNET_APPLY_FAULT=<step>[:<n>]`
SIGKILLs the process at the n-th hit of `<step>` within one apply: `operation.written` inside
a batch's transaction after each operation's savepoint, `batch.logged` inside it after the
batch's `dreaming_operations` rows, `batch.committed` after its commit (n = the batch).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import sqlean

from signet_desktop.domain import scope
from signet_desktop.domain.dreaming import MutationCounts
from signet_desktop.domain.errors import Conflict, SignetError
from signet_desktop.domain.events import EventSink
from signet_desktop.domain.knowledge import ClaimTimes, Evidence, Provenance
from signet_desktop.domain.ontology import OntologyChanged
from signet_desktop.dreaming.apply_checks import (
    DEFAULT_CAPS,
    REFERENCE,
    REFERENCE_FIELDS,
    ApplyCaps,
    OperationVerdict,
    validate_operations,
)
from signet_desktop.dreaming.operations import Operation
from signet_desktop.dreaming.sources import parse_ref
from signet_desktop.storage import attention as attention_rows
from signet_desktop.storage import dreaming_operations as op_rows
from signet_desktop.storage import graph as graph_writes
from signet_desktop.storage import graph_claims, graph_links, graph_rows
from signet_desktop.storage import knowledge_reads as graph_reads
from signet_desktop.storage import ontology as ontology_rows
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.database import Database
from signet_desktop.storage.dreaming_operations import NewOperationRecord
from signet_desktop.storage.faults import NO_FAULTS, FaultPoints

__all__ = [
    "DEFAULT_CAPS",
    "FAULT_ENV",
    "FAULT_STEPS",
    "ApplyCaps",
    "ApplyReport",
    "OperationResult",
    "OperationVerdict",
    "PassSeam",
    "apply_operations",
    "report_json",
    "validate_operations",
]

FAULT_ENV = "SIGNET_APPLY_FAULT"
FAULT_STEPS = ("operation.written", "batch.logged", "batch.committed")  # in the order hit


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


@dataclass(frozen=True, slots=True)
class ApplyReport:
    """Per-operation results of one request, and its counts."""

    request_id: str
    agent_id: str
    pass_id: str | None
    dry_run: bool
    results: tuple[OperationResult, ...]
    code: str | None = None  # set when the request was rejected as a whole
    reason: str | None = None

    @property
    def counts(self) -> dict[str, int]:
        out = {"applied": 0, "proposed": 0, "skipped": 0, "failed": 0, "valid": 0}
        for result in self.results:
            out[result.status] = out.get(result.status, 0) + 1
        return out

    def mutation_counts(self) -> MutationCounts:
        """For the pass record: proposals count as skipped (nothing written to the graph)."""
        counts = self.counts
        return MutationCounts(
            counts["applied"], counts["skipped"] + counts["proposed"], counts["failed"]
        )


def apply_operations(
    db: Database,
    *,
    agent_id: str,
    pass_id: str | None,
    operations: Sequence[Any],
    actor: str,
    caps: ApplyCaps = DEFAULT_CAPS,
    workspace: Path | None = None,
    dry_run: bool = False,
    events: EventSink | None = None,
    proposal_id: str | None = None,
    review: bool = True,
) -> ApplyReport:
    """Validate, then write (see the module docstring). Never raises for bad operations.

    `proposal_id` (with `review=False`): the operation is that ontology proposal, approved by
    a person; the proposal is marked applied (or failed) with it.
    """
    scope.check_agent_id(agent_id)
    request_id = str(uuid.uuid4())
    if not isinstance(operations, list | tuple):
        reason = "operations must be a list of operation objects"
        return ApplyReport(request_id, agent_id, pass_id, dry_run, (), "operations_invalid", reason)
    verdicts = validate_operations(
        db.reader(),
        agent_id=agent_id,
        pass_id=pass_id,
        operations=operations,
        caps=caps,
        workspace=workspace,
        review=review,
    )
    whole = _request_rejection(verdicts)
    if dry_run:
        results = tuple(_dry(v) for v in verdicts)
        return ApplyReport(request_id, agent_id, pass_id, True, results, *whole)
    faults = FaultPoints.from_variable(FAULT_ENV)
    writer = _Writer(db, agent_id, pass_id, request_id, actor, proposal_id, faults)
    results_list: list[OperationResult] = []
    size = max(1, caps.batch_size)
    for start in range(0, len(verdicts), size):
        results_list.extend(writer.batch(verdicts[start : start + size]))
        faults.hit("batch.committed")
    report = ApplyReport(request_id, agent_id, pass_id, False, tuple(results_list), *whole)
    if events is not None and results_list:
        counts = report.counts
        events.publish(
            OntologyChanged(
                agent_id=agent_id,
                pass_id=pass_id,
                proposal_ids=tuple(r.proposal_id for r in results_list if r.proposal_id),
                applied=counts["applied"],
                proposed=counts["proposed"],
            )
        )
    return report


def _request_rejection(verdicts: Sequence[OperationVerdict]) -> tuple[str | None, str | None]:
    if verdicts and all(v.code == "request_cap_exceeded" for v in verdicts):
        return "request_cap_exceeded", verdicts[0].reason
    return None, None


def _dry(verdict: OperationVerdict) -> OperationResult:
    status = {"valid": "valid", "propose": "proposed"}.get(verdict.status, "skipped")
    return OperationResult(verdict.index, verdict.operation, status, verdict.code, verdict.reason)


class _Writer:
    def __init__(
        self,
        db: Database,
        agent_id: str,
        pass_id: str | None,
        request_id: str,
        actor: str,
        proposal_id: str | None,
        faults: FaultPoints = NO_FAULTS,
    ) -> None:
        self.db = db
        self.faults = faults
        self.agent = agent_id
        self.pass_id = pass_id
        self.request_id = request_id
        self.actor = actor
        self.proposal_id = proposal_id
        self.made: dict[int, str] = {}  # operation index -> the row it made or found
        self.resolved: dict[int, Operation] = {}  # operations whose `$<index>` were resolved

    def batch(self, verdicts: Sequence[OperationVerdict]) -> list[OperationResult]:
        """One short write transaction: each operation in its own savepoint, then the log."""
        results = []
        with self.db.write() as conn:
            for verdict in verdicts:
                result = self._one(conn, verdict)
                if result.target_id is not None and result.status in ("applied", "skipped"):
                    self.made[result.index] = result.target_id
                results.append(result)
                self.faults.hit("operation.written")
            op_rows.append(
                conn,
                agent_id=self.agent,
                pass_id=self.pass_id,
                request_id=self.request_id,
                actor=self.actor,
                records=[
                    _record(v, r, self.resolved.get(r.index))
                    for v, r in zip(verdicts, results, strict=True)
                ],
            )
            self.faults.hit("batch.logged")
        return results

    def _one(self, conn: Connection, verdict: OperationVerdict) -> OperationResult:
        if verdict.status == "rejected" or verdict.parsed is None:
            self._proposal_failed(conn, verdict.reason or "rejected")
            return OperationResult(
                verdict.index, verdict.operation, "skipped", verdict.code, verdict.reason
            )
        op = verdict.parsed
        try:
            op = self._resolve(op)
            with self.db.write() as savepoint:
                if verdict.status == "propose":
                    return self._propose(savepoint, op, verdict.reason)
                result = _execute(savepoint, op, self._provenance(op))
                if result.status == "applied":
                    self._after_applied(savepoint, op, result)
                return result
        except SignetError as exc:
            failed = OperationResult(op.index, op.name, "failed", exc.code, exc.message)
        except sqlean.Error as exc:
            failed = OperationResult(op.index, op.name, "failed", "write_failed", str(exc))
        self._proposal_failed(conn, failed.reason or "failed")
        return failed

    def _resolve(self, op: Operation) -> Operation:
        """`$<index>` ids replaced by the rows those earlier operations made (or found)."""
        update: dict[str, str] = {}
        for name in REFERENCE_FIELDS:
            value = getattr(op.payload, name, None)
            match = REFERENCE.fullmatch(value) if isinstance(value, str) else None
            if match is None:
                continue
            made = self.made.get(int(match[1]))
            if made is None:
                raise Conflict(
                    f"{value}: operation {match[1]} made no row", code="reference_failed"
                )
            update[name] = made
        if not update:
            return op
        resolved = replace(op, payload=op.payload.model_copy(update=update))
        self.resolved[op.index] = resolved
        return resolved

    def _provenance(self, op: Operation) -> Provenance:
        evidence = tuple(Evidence(e.quote, e.source_ref) for e in op.envelope.evidence)
        memory_id = None
        for item in evidence:
            ref = parse_ref(item.source_ref)
            if ref is not None and ref.kind == "memory":
                memory_id = ref.source_id
                break
        return Provenance(
            actor=self.actor,
            agent_id=self.agent,
            pass_id=self.pass_id,
            proposal_id=self.proposal_id or op.envelope.provenance,
            evidence=evidence,
            source_memory_id=memory_id,
        )

    def _propose(self, conn: Connection, op: Operation, why: str | None) -> OperationResult:
        proposal, created = ontology_rows.propose(
            conn,
            agent_id=self.agent,
            operation=op.name,
            payload=op.payload_json(),
            evidence=op.evidence_json(),
            confidence=op.envelope.confidence,
            rationale=op.envelope.reason,
            provenance=op.envelope.provenance,
            risk=op.envelope.risk,
            pass_id=self.pass_id,
            created_by=self.actor,
        )
        code = "review_only" if created else "duplicate_proposal"
        reason = why if created else f"{why}; the same proposal is already pending"
        return OperationResult(op.index, op.name, "proposed", code, reason, proposal_id=proposal.id)

    def _after_applied(self, conn: Connection, op: Operation, result: OperationResult) -> None:
        attention_id = op.attention_id()
        if attention_id is not None and op.name != "decline_attention":
            attention_rows.resolve_attention(
                conn,
                self.agent,
                attention_id,
                pass_id=self.pass_id,
                resolution=f"{op.name} applied",
            )
        if self.proposal_id is not None:
            ontology_rows.mark_applied(
                conn,
                self.agent,
                self.proposal_id,
                actor=self.actor,
                result={"created": list(result.created), "changed": list(result.changed)},
            )

    def _proposal_failed(self, conn: Connection, reason: str) -> None:
        if self.proposal_id is not None:
            ontology_rows.mark_failed(conn, self.agent, self.proposal_id, error=reason)


def _record(
    verdict: OperationVerdict, result: OperationResult, resolved: Operation | None
) -> NewOperationRecord:
    op = resolved or verdict.parsed
    raw = verdict.raw if isinstance(verdict.raw, dict) else {}
    payload = op.payload_json() if op else raw.get("payload")
    evidence = op.evidence_json() if op else raw.get("evidence")
    provenance = op.envelope.provenance if op else raw.get("provenance")
    outcome: dict[str, Any] = {"created": list(result.created), "changed": list(result.changed)}
    if result.proposal_id:
        outcome["proposalId"] = result.proposal_id
    if result.contradictions:
        outcome["contradictions"] = list(result.contradictions)
    if op is not None:
        outcome["confidence"] = op.envelope.confidence
        if op.envelope.reason:
            outcome["rationale"] = op.envelope.reason
    return NewOperationRecord(
        operation=result.operation or verdict.operation,
        payload=payload if isinstance(payload, dict) else {"raw": payload},
        evidence=evidence if isinstance(evidence, list) else [],
        provenance=provenance if isinstance(provenance, str) else None,
        status=result.status,
        code=result.code,
        reason=result.reason,
        result=outcome,
    )


# -- one operation through the graph writer ---------------------------------------------------


def _done(
    op: Operation, created: Sequence[str] = (), changed: Sequence[str] = ()
) -> OperationResult:
    ids = [*created, *changed]
    made = ids[0] if ids else None
    return OperationResult(
        op.index, op.name, "applied", created=tuple(created), changed=tuple(changed),
        target_id=made,
    )  # fmt: skip


def _unchanged(op: Operation, what: str, row_id: str) -> OperationResult:
    return OperationResult(
        op.index, op.name, "skipped", "no_change", f"{what} {row_id} already as asked",
        target_id=row_id,
    )  # fmt: skip


def _execute(conn: Connection, op: Operation, prov: Provenance) -> OperationResult:
    p: Any = op.payload
    name = op.name
    confidence = op.envelope.confidence
    if name == "create_entity":
        entity, created = graph_writes.create_entity(conn, prov, name=p.name, entity_type=p.type)
        return _done(op, [entity.id]) if created else _unchanged(op, "entity", entity.id)
    if name == "create_aspect":
        aspect, created = graph_claims.create_aspect(conn, prov, p.entity_id, p.name)
        return _done(op, [aspect.id]) if created else _unchanged(op, "aspect", aspect.id)
    if name == "add_claim_value":
        claim, created = graph_claims.add_claim_value(
            conn, prov, p.aspect_id, p.value, claim_key=p.claim_key, confidence=confidence,
            times=ClaimTimes.read(p),
        )  # fmt: skip
        if not created:
            return _unchanged(op, "claim value", claim.id)
        return _with_contradictions(conn, op, prov, _done(op, [claim.id]), claim.id)
    if name == "set_claim_value":
        claim, changed = graph_claims.set_claim_value(
            conn, prov, p.aspect_id, p.claim_key, p.value, confidence=confidence,
            times=ClaimTimes.read(p),
        )  # fmt: skip
        if not changed:
            return _unchanged(op, "claim value", claim.id)
        previous = [claim.previous_attribute_id] if claim.previous_attribute_id else []
        return _with_contradictions(conn, op, prov, _done(op, [claim.id], previous), claim.id)
    if name == "supersede_claim_value":
        return _supersede(conn, op, prov)
    if name == "create_link":
        link, created = graph_links.create_link(
            conn, prov, p.from_entity_id, p.to_entity_id, p.link_type, confidence=confidence,
            reason=op.envelope.reason,
        )  # fmt: skip
        return _done(op, [link.id]) if created else _unchanged(op, "link", link.id)
    if name == "update_link":
        return _update_link(conn, op, prov)
    if name == "rename_entity":
        entity = graph_writes.rename_entity(conn, prov, p.entity_id, p.new_name)
        return _done(op, changed=[entity.id])
    if name == "archive_entity":
        entity = graph_writes.archive_entity(conn, prov, p.target, p.reason)
        return _done(op, changed=[entity.id])
    if name == "archive_aspect":
        return _done(op, changed=[graph_claims.archive_aspect(conn, prov, p.target).id])
    if name == "archive_claim_value":
        return _done(op, changed=[graph_claims.archive_claim_value(conn, prov, p.target).id])
    if name == "archive_link":
        return _done(op, changed=[graph_links.archive_link(conn, prov, p.target).id])
    if name == "merge_entities":
        others = [t for t in dict.fromkeys(p.targets) if t != p.survivor]
        survivor = graph_writes.merge_entities(conn, prov, p.survivor, others)
        return _done(op, changed=[survivor.id, *others])
    if name == "merge_aspects":
        aspect = graph_claims.merge_aspects(conn, prov, p.target, list(p.sources))
        return _done(op, changed=[aspect.id, *p.sources])
    if name == "flag":
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
    if name == "decline_attention":
        declined = attention_rows.decline_attention(
            conn,
            prov.agent_id,
            p.attention_id,
            pass_id=prov.pass_id,
            resolution=op.envelope.reason or "declined",
        )
        if not declined:
            raise Conflict(
                f"attention {p.attention_id} is not pending", code="attention_not_pending"
            )
        return _done(op, changed=[p.attention_id])
    raise Conflict(f"{name} cannot be applied", code="operation_unsupported")


def _supersede(conn: Connection, op: Operation, prov: Provenance) -> OperationResult:
    p: Any = op.payload
    target = p.attribute_id
    if target is None:
        claims = graph_reads.claims_of_aspects(conn, prov.agent_id, [p.aspect_id]).get(
            p.aspect_id, []
        )
        active = [c for c in claims if c.status == "active" and c.claim_key == p.claim_key]
        target = active[0].id if active else None
    if target is None:
        claim, _ = graph_claims.add_claim_value(
            conn, prov, p.aspect_id, p.value, claim_key=p.claim_key,
            confidence=op.envelope.confidence, times=ClaimTimes.read(p),
        )  # fmt: skip
        return _with_contradictions(conn, op, prov, _done(op, [claim.id]), claim.id)
    claim = graph_claims.supersede_claim_value(
        conn, prov, target, p.value, confidence=op.envelope.confidence, times=ClaimTimes.read(p)
    )
    return _with_contradictions(conn, op, prov, _done(op, [claim.id], [target]), claim.id)


def _update_link(conn: Connection, op: Operation, prov: Provenance) -> OperationResult:
    """A new link type: the old link is archived and the new one created (both logged)."""
    p: Any = op.payload
    old = graph_reads.dependency(conn, prov.agent_id, p.link_id)
    if old is None:
        raise Conflict(f"link {p.link_id} not found", code="target_not_found")
    if old.dependency_type == p.link_type.strip().lower().replace(" ", "_"):
        return _unchanged(op, "link", old.id)
    graph_links.archive_link(conn, prov, old.id)
    new, _ = graph_links.create_link(
        conn, prov, old.source_entity_id, old.target_entity_id, p.link_type,
        strength=old.strength, confidence=op.envelope.confidence,
        reason=op.envelope.reason or old.reason, aspect_id=old.aspect_id,
    )  # fmt: skip
    return _done(op, [new.id], [old.id])


def _with_contradictions(
    conn: Connection, op: Operation, prov: Provenance, result: OperationResult, claim_id: str
) -> OperationResult:
    """Record an advisory contradiction with each other active value of the claim key."""
    p: Any = op.payload
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


# -- the seam bound to one pass (the Dreaming tool surface calls this) -------------------------


def report_json(report: ApplyReport) -> dict[str, Any]:
    """The report as the tool surface and HTTP return it."""
    body: dict[str, Any] = {
        "requestId": report.request_id,
        "passId": report.pass_id,
        "dryRun": report.dry_run,
        "counts": report.counts,
        "results": [
            {
                "index": r.index,
                "operation": r.operation,
                "status": r.status,
                "code": r.code,
                "reason": r.reason,
                "created": list(r.created),
                "changed": list(r.changed),
                "proposalId": r.proposal_id,
                "contradictions": list(r.contradictions),
                "targetId": r.target_id,
            }
            for r in report.results
        ],
    }
    if report.code:
        body["code"] = report.code
        body["reason"] = report.reason
    return body


@dataclass
class PassSeam:
    """`dreaming/tools.py: Seam` for one pass: validate (a dry run) or apply operations."""

    db: Database
    agent_id: str
    pass_id: str | None
    actor: str = ""
    caps: ApplyCaps = DEFAULT_CAPS
    workspace: Path | None = None
    events: EventSink | None = None
    reports: list[ApplyReport] = field(default_factory=list)

    def _actor(self) -> str:
        return self.actor or (f"dreaming:{self.pass_id}" if self.pass_id else "dreaming")

    def validate(self, operations: list[Any]) -> dict[str, Any]:
        report = apply_operations(
            self.db, agent_id=self.agent_id, pass_id=self.pass_id, operations=operations,
            actor=self._actor(), caps=self.caps, workspace=self.workspace, dry_run=True,
        )  # fmt: skip
        return report_json(report)

    def apply(self, operations: list[Any]) -> tuple[dict[str, Any], MutationCounts]:
        report = apply_operations(
            self.db, agent_id=self.agent_id, pass_id=self.pass_id, operations=operations,
            actor=self._actor(), caps=self.caps, workspace=self.workspace, events=self.events,
        )  # fmt: skip
        self.reports.append(report)
        return report_json(report), report.mutation_counts()
