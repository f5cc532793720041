"""Wire shapes of the ontology control plane: proposals, contradictions, attention, seam
reports and pass reverts (camelCase, as Signet's dashboard reads). A seam operation record is
rendered by `dreaming_views.operation_json`."""

from __future__ import annotations

from typing import Any

from signet_desktop.domain.errors import SignetError
from signet_desktop.domain.ontology import Attention, Contradiction, Proposal
from signet_desktop.dreaming.apply import ApplyReport, report_json
from signet_desktop.dreaming.revert import RevertOutcome
from signet_desktop.service.knowledge.ontology import ProposalOutcome


def proposal_json(proposal: Proposal) -> dict[str, Any]:
    return {
        "id": proposal.id,
        "agentId": proposal.agent_id,
        "operation": proposal.operation,
        "status": proposal.status,
        "payload": dict(proposal.payload),
        "confidence": proposal.confidence,
        "rationale": proposal.rationale,
        "evidence": [dict(e) for e in proposal.evidence],
        "provenance": proposal.provenance,
        "risk": proposal.risk,
        "passId": proposal.pass_id,
        "createdBy": proposal.created_by,
        "appliedBy": proposal.applied_by,
        "rejectedBy": proposal.rejected_by,
        "result": None if proposal.result is None else dict(proposal.result),
        "error": proposal.error,
        "createdAt": proposal.created_at,
        "updatedAt": proposal.updated_at,
        "appliedAt": proposal.applied_at,
        "rejectedAt": proposal.rejected_at,
    }


def contradiction_json(item: Contradiction) -> dict[str, Any]:
    return {
        "id": item.id,
        "agentId": item.agent_id,
        "entityId": item.entity_id,
        "entityName": item.entity_name,
        "aspectId": item.aspect_id,
        "aspectName": item.aspect_name,
        "claimKey": item.claim_key,
        "left": {"attributeId": item.left_attribute_id, "content": item.left_content},
        "right": {"attributeId": item.right_attribute_id, "content": item.right_content},
        "evidence": [dict(e) for e in item.evidence],
        "detector": item.detector,
        "reason": item.reason,
        "confidence": item.confidence,
        "status": item.status,
        "detectedAt": item.detected_at,
        "resolvedAt": item.resolved_at,
    }


def attention_json(item: Attention) -> dict[str, Any]:
    return {
        "id": item.id,
        "agentId": item.agent_id,
        "kind": item.kind,
        "subjectRef": item.subject_ref,
        "details": dict(item.details),
        "priority": item.priority,
        "status": item.status,
        "createdByPassId": item.created_by_pass_id,
        "resolvedByPassId": item.resolved_by_pass_id,
        "resolution": item.resolution,
        "createdAt": item.created_at,
        "updatedAt": item.updated_at,
        "resolvedAt": item.resolved_at,
    }


def apply_report_json(report: ApplyReport) -> dict[str, Any]:
    """The seam's per-operation report (the same shape the Dreaming tool surface returns)."""
    return report_json(report)


def proposal_outcome_json(outcome: ProposalOutcome) -> dict[str, Any]:
    body: dict[str, Any] = {"proposal": proposal_json(outcome.proposal)}
    if outcome.report is not None:
        body["report"] = apply_report_json(outcome.report)
    return body


def bulk_item_json(proposal_id: str, item: ProposalOutcome | SignetError) -> dict[str, Any]:
    if isinstance(item, SignetError):
        return {"id": proposal_id, "ok": False, "code": item.code, "error": item.message}
    return {
        "id": proposal_id,
        "ok": item.proposal.status in ("applied", "rejected"),
        **proposal_outcome_json(item),
    }


def revert_json(outcome: RevertOutcome) -> dict[str, Any]:
    """`{passId, dryRun, reverted, changes[...], blockers[...]}` (the CLI's `dream revert`)."""
    body: dict[str, Any] = {
        "passId": outcome.pass_id,
        "dryRun": outcome.dry_run,
        "reverted": outcome.reverted,
        "alreadyReverted": outcome.already_reverted,
        "changes": [
            {
                "action": c.action,
                "targetTable": c.target_table,
                "targetId": c.target_id,
                "before": None if c.before is None else dict(c.before),
                "after": None if c.after is None else dict(c.after),
            }
            for c in outcome.changes
        ],
        "blockers": [
            {
                "targetTable": b.target_table,
                "targetId": b.target_id,
                "reason": b.reason,
                "byPassId": b.by_pass_id,
                "mutationId": b.mutation_id,
            }
            for b in outcome.blockers
        ],
    }
    if outcome.already_reverted:
        body["reason"] = f"pass {outcome.pass_id} is already reverted"
    return body
