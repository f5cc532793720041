"""What the Proposals pane shows, computed without Qt: counts, proposal rows and detail,
contradictions side by side, and what a decision or a bulk action did."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from signet_desktop.domain.ontology import Contradiction, Proposal
from signet_desktop.ui.dreaming_format import Names, operation_subject
from signet_desktop.ui.hit_format import preview, relative_date
from signet_desktop.ui.quote_format import Quote, quotes_of, short_ref

STATUSES = ("pending", "applied", "rejected", "failed")
STATUS_TONES = {"pending": "accent", "applied": "ok", "rejected": "muted", "failed": "error"}
MAX_COUNTED = 500  # the service lists at most this many per status


def counts_text(counts: Mapping[str, int]) -> str:
    """`pending 3 · applied 41 · rejected 7` (failed shown only when there are any)."""
    parts = []
    for status in STATUSES:
        count = int(counts.get(status, 0))
        if status == "failed" and not count:
            continue
        shown = f"{MAX_COUNTED}+" if count >= MAX_COUNTED else f"{count:,}"
        parts.append(f"{status} {shown}")
    return " · ".join(parts)


def tab_label(status: str, count: int) -> str:
    """`Pending (3)`."""
    shown = f"{MAX_COUNTED}+" if count >= MAX_COUNTED else f"{count:,}"
    return f"{status.capitalize()} ({shown})"


@dataclass(frozen=True, slots=True)
class ProposalRow:
    """One proposal in the list."""

    proposal_id: str
    title: str  # the operation
    subject: str  # `“ledger-svc” → “ledger”`
    meta: str  # `evidence ×2 · confidence 0.80 · from pass 3f2a… · 2 days ago`
    status: str
    tone: str


def evidence_count(proposal: Proposal) -> str:
    """`evidence ×2`, or `no evidence`."""
    count = len(quotes_of(proposal.evidence))
    return f"evidence ×{count}" if count else "no evidence"


def proposal_row(
    proposal: Proposal, now: datetime | None = None, names: Names | None = None
) -> ProposalRow:
    parts = [evidence_count(proposal)]
    if proposal.confidence is not None:
        parts.append(f"confidence {proposal.confidence:.2f}")
    if proposal.risk:
        parts.append(f"risk {proposal.risk}")
    parts.append(relative_date(proposal.created_at, now))
    return ProposalRow(
        proposal_id=proposal.id,
        title=proposal.operation,
        subject=operation_subject(proposal.operation, proposal.payload, names),
        meta=" · ".join(parts),
        status=proposal.status,
        tone=STATUS_TONES.get(proposal.status, "muted"),
    )


def decision_text(proposal: Proposal, now: datetime | None = None) -> str:
    """What happened to it: `waiting for review`, `applied by inspector 2 days ago`,
    `rejected by inspector: duplicate`, `failed: the entity is archived`."""
    if proposal.status == "pending":
        return "waiting for review"
    if proposal.status == "applied":
        when = relative_date(proposal.applied_at, now) if proposal.applied_at else ""
        return " ".join(p for p in ("applied by", proposal.applied_by or "?", when) if p)
    if proposal.status == "rejected":
        who = proposal.rejected_by or "?"
        return f"rejected by {who}" + (f": {proposal.error}" if proposal.error else "")
    return f"{proposal.status}: {proposal.error or 'no reason recorded'}"


def detail_lines(proposal: Proposal) -> list[tuple[str, str]]:
    """The detail's form: decision, rationale, provenance, who proposed, the payload."""
    rows = [("Status", decision_text(proposal))]
    if proposal.rationale:
        rows.append(("Why", proposal.rationale))
    if proposal.confidence is not None:
        rows.append(("Confidence", f"{proposal.confidence:.2f}"))
    if proposal.provenance:
        rows.append(("Provenance", proposal.provenance))
    rows.append(("Proposed by", proposer(proposal)))
    rows.append(("Payload", payload_text(proposal.payload)))
    return rows


def proposer(proposal: Proposal) -> str:
    """`a Dreaming pass (78cd257e…), 2 days ago` or the actor's name."""
    actor = proposal.created_by
    if actor.startswith("dreaming") and proposal.pass_id:
        return f"a Dreaming pass ({short_ref(proposal.pass_id)})"
    return actor + (f" in pass {short_ref(proposal.pass_id)}" if proposal.pass_id else "")


def payload_text(payload: Mapping[str, Any]) -> str:
    """`entityId: 9f1c… · newName: ledger` — every key, ids cut short."""
    parts = []
    for key, value in payload.items():
        shown = short_ref(value, 12) if key.lower().endswith("id") else preview(str(value), 80)
        parts.append(f"{key}: {shown}")
    return " · ".join(parts) or "—"


def quotes_of_proposal(proposal: Proposal) -> tuple[Quote, ...]:
    return quotes_of(proposal.evidence)


def actions_for(proposal: Proposal | None) -> tuple[bool, bool]:
    """(apply allowed, reject allowed): only a pending proposal is decided."""
    pending = proposal is not None and proposal.status == "pending"
    return pending, pending


# -- contradictions ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ContradictionView:
    """Two claims that disagree, side by side."""

    contradiction_id: str
    title: str  # `billing · storage · database`
    left: str
    right: str
    meta: str  # `lexical · confidence 0.70 · 2 days ago`
    reason: str
    entity_id: str | None
    quotes: tuple[Quote, ...]


def contradiction_view(item: Contradiction, now: datetime | None = None) -> ContradictionView:
    names = [n for n in (item.entity_name, item.aspect_name, item.claim_key) if n]
    meta = [
        item.detector,
        f"confidence {item.confidence:.2f}",
        relative_date(item.detected_at, now),
    ]
    if item.status != "active":
        meta.append(item.status)
    return ContradictionView(
        contradiction_id=item.id,
        title=" · ".join(names) or "two claims",
        left=item.left_content or f"claim {short_ref(item.left_attribute_id)}",
        right=item.right_content or f"claim {short_ref(item.right_attribute_id)}",
        meta=" · ".join(meta),
        reason=item.reason or "",
        entity_id=item.entity_id,
        quotes=quotes_of(item.evidence),
    )


# -- outcomes ------------------------------------------------------------------------------


def outcome_text(action: str, outcomes: Sequence[Any]) -> tuple[str, list[str]]:
    """What a decision or bulk action did: `2 applied` / `1 rejected`, then each refusal
    (`9f1c…: proposal is applied`) or a proposal that failed its re-validation."""
    done, refused = 0, []
    for outcome in outcomes:
        proposal = getattr(outcome, "proposal", None)
        if isinstance(proposal, Proposal):
            if proposal.status in ("applied", "rejected"):
                done += 1
            else:
                refused.append(f"{short_ref(proposal.id)}: {decision_text(proposal)}")
        else:
            refused.append(str(getattr(outcome, "message", None) or outcome))
    verb = "applied" if action == "apply" else "rejected"
    head = f"{done} {verb}" + (f", {len(refused)} not" if refused else "")
    return head, refused
