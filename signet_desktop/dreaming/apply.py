"""The apply seam (`applyDreamingOperations`): validate everything, then write in small batches.

1. `validate_operations` (dreaming/apply_checks.py) on a read connection: scope, schema,
   exact quotes, hygiene provenance, caps. A request over `max_per_request` is rejected whole.
2. Writes, only after that: batches of at most `batch_size` operations, each batch one short
   write transaction, each operation in its own SAVEPOINT (a failure rolls back that operation
   alone) and through its typed handler (`dreaming/apply_handlers.py`). Graph rows are
   written only through `storage/graph.py` with a `Provenance` (actor,
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

from signet_desktop.domain import scope
from signet_desktop.domain.dreaming import MutationCounts
from signet_desktop.domain.errors import Conflict, SignetError
from signet_desktop.domain.events import EventSink
from signet_desktop.domain.knowledge import Evidence, Provenance
from signet_desktop.domain.ontology import OntologyChanged
from signet_desktop.dreaming.apply_checks import (
    DEFAULT_CAPS,
    REFERENCE,
    REFERENCE_FIELDS,
    ApplyCaps,
    OperationVerdict,
    validate_operations,
)
from signet_desktop.dreaming.apply_handlers import OperationResult, execute
from signet_desktop.dreaming.operations import Operation
from signet_desktop.dreaming.sources import parse_ref
from signet_desktop.storage import attention as attention_rows
from signet_desktop.storage import dreaming_operations as op_rows
from signet_desktop.storage import ontology as ontology_rows
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dreaming_operations import NewOperationRecord
from signet_desktop.storage.errors import DATABASE_ERRORS
from signet_desktop.storage.faults import NO_FAULTS, FaultPoints
from signet_desktop.storage.handle import DatabaseHandle

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
    db: DatabaseHandle,
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
        db: DatabaseHandle,
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
                result = execute(savepoint, op, self._provenance(op))
                if result.status == "applied":
                    self._after_applied(savepoint, op, result)
                return result
        except SignetError as exc:
            failed = OperationResult(op.index, op.name, "failed", exc.code, exc.message)
        except DATABASE_ERRORS as exc:
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

    db: DatabaseHandle
    agent_id: str
    pass_id: str | None
    actor: str = ""
    caps: ApplyCaps = DEFAULT_CAPS
    workspace: Path | None = None
    events: EventSink | None = None
    reports: list[ApplyReport] = field(default_factory=list)

    def _actor(self) -> str:
        return self.actor or (f"dreaming:{self.pass_id}" if self.pass_id else "dreaming")

    def _run(self, operations: list[Any], *, dry_run: bool) -> ApplyReport:
        """`operations` through the apply seam as this pass (a dry run publishes nothing)."""
        return apply_operations(
            self.db,
            agent_id=self.agent_id,
            pass_id=self.pass_id,
            operations=operations,
            actor=self._actor(),
            caps=self.caps,
            workspace=self.workspace,
            dry_run=dry_run,
            events=None if dry_run else self.events,
        )

    def validate(self, operations: list[Any]) -> dict[str, Any]:
        return report_json(self._run(operations, dry_run=True))

    def apply(self, operations: list[Any]) -> tuple[dict[str, Any], MutationCounts]:
        report = self._run(operations, dry_run=False)
        self.reports.append(report)
        return report_json(report), report.mutation_counts()
