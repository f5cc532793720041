"""The ontology control plane's values: attention, proposals, contradictions, seam records,
and the events the ontology capability publishes after commit."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from signet_desktop.domain.events import Event

ATTENTION_KINDS = ("review_due", "hygiene", "contested_claim", "evidence_requeue", "surprisal")
ATTENTION_STATUSES = ("pending", "resolved", "declined")
PROPOSAL_STATUSES = ("pending", "applied", "rejected", "failed")
CONTRADICTION_STATUSES = ("active", "resolved")
OPERATION_STATUSES = ("applied", "proposed", "skipped", "failed")


@dataclass(frozen=True, slots=True)
class Attention:
    """A `dreaming_attention` row: bounded work for the next passes."""

    id: str
    agent_id: str
    kind: str
    subject_ref: str
    details: Mapping[str, Any]
    priority: int
    status: str
    created_by_pass_id: str | None
    resolved_by_pass_id: str | None
    resolution: str | None
    created_at: str
    updated_at: str
    resolved_at: str | None


@dataclass(frozen=True, slots=True)
class Proposal:
    """A review-only operation waiting for (or past) a person's decision."""

    id: str
    agent_id: str
    operation: str
    status: str
    payload: Mapping[str, Any]
    confidence: float | None
    rationale: str | None
    evidence: tuple[Mapping[str, str], ...]
    provenance: str | None
    risk: str | None
    pass_id: str | None
    created_by: str
    applied_by: str | None
    rejected_by: str | None
    result: Mapping[str, Any] | None
    error: str | None
    created_at: str
    updated_at: str
    applied_at: str | None
    rejected_at: str | None


@dataclass(frozen=True, slots=True)
class Contradiction:
    """Two active claim values of one claim key that disagree (advisory; neither replaced)."""

    id: str
    agent_id: str
    entity_id: str | None
    entity_name: str | None
    aspect_id: str | None
    aspect_name: str | None
    claim_key: str | None
    left_attribute_id: str
    right_attribute_id: str
    left_content: str | None
    right_content: str | None
    evidence: tuple[Mapping[str, str], ...]
    detector: str
    reason: str | None
    confidence: float
    status: str
    detected_at: str
    resolved_at: str | None


@dataclass(frozen=True, slots=True)
class OperationRecord:
    """One row of `dreaming_operations`: an operation the seam saw, and its outcome."""

    id: str
    agent_id: str
    pass_id: str | None
    request_id: str
    seq: int
    operation: str
    payload: Mapping[str, Any]
    evidence: tuple[Mapping[str, Any], ...]
    provenance: str | None
    actor: str
    status: str
    code: str | None
    reason: str | None
    result: Mapping[str, Any] | None
    created_at: str


@dataclass(frozen=True, slots=True, kw_only=True)
class OntologyChanged(Event):
    """Operations were applied, proposed, or a proposal was decided (counts by status)."""

    kind: ClassVar[str] = "ontology.changed"
    pass_id: str | None = None
    proposal_ids: tuple[str, ...] = ()
    applied: int = 0
    proposed: int = 0
    rejected: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class PassReverted(Event):
    """A pass's graph mutations were undone."""

    kind: ClassVar[str] = "pass.reverted"
    pass_id: str
    changes: int = 0
