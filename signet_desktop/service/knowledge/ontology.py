"""The ontology control plane (`service.ontology`): proposals, contradictions, attention,
manual applies through the apply seam, and pass revert.

Every call is scoped to one agent: another agent's proposal, attention or pass reads as not
found. Applying a proposal goes through the same seam as Dreaming (`dreaming/apply.py`, with
review skipped because a person approved it), so it is re-validated against today's graph;
a proposal that no longer validates is marked `failed` with the reason. Events go out after
commit: `ontology.changed` (applies, proposals decided), `pass.reverted`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from signet_desktop.domain import scope
from signet_desktop.domain.errors import Conflict, InvalidInput, NotFound
from signet_desktop.domain.events import DiscardEvents, EventSink
from signet_desktop.domain.ontology import (
    ATTENTION_STATUSES,
    CONTRADICTION_STATUSES,
    PROPOSAL_STATUSES,
    Attention,
    Contradiction,
    OntologyChanged,
    OperationRecord,
    PassReverted,
    Proposal,
)
from signet_desktop.dreaming.apply import ApplyCaps, ApplyReport, apply_operations
from signet_desktop.dreaming.revert import RevertOutcome, revert_pass
from signet_desktop.storage import attention, dreaming_operations, ontology
from signet_desktop.storage.handle import DatabaseHandle

MAX_LIST = 500
MAX_BULK = 100
MAX_REASON = 1000


@dataclass(frozen=True, slots=True)
class ProposalOutcome:
    """A proposal after apply/reject, with the seam's report for an apply."""

    proposal: Proposal
    report: ApplyReport | None = None


def _limit(limit: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIST:
        raise InvalidInput(f"limit must be 1..{MAX_LIST}", code="bad_limit")
    return limit


def _status(value: str | None, allowed: Sequence[str], what: str) -> str | None:
    if value is None or value == "all":
        return None
    if value not in allowed:
        raise InvalidInput(
            f"{what} status must be one of {', '.join(allowed)} or all", code="status_invalid"
        )
    return value


def _reason(reason: object, *, required: bool) -> str | None:
    if reason is None or (isinstance(reason, str) and not reason.strip()):
        if required:
            raise InvalidInput("a reason is required", code="reason_required")
        return None
    if not isinstance(reason, str) or len(reason) > MAX_REASON:
        raise InvalidInput(f"reason must be text of at most {MAX_REASON} characters")
    return reason.strip()


def _actor(actor: str) -> str:
    if not isinstance(actor, str) or not actor.strip() or len(actor) > 128:
        raise InvalidInput("actor is required (at most 128 characters)", code="actor_invalid")
    return actor.strip()


class OntologyService:
    """Proposals, contradictions, attention, manual applies and pass reverts, per agent."""

    def __init__(
        self,
        db: DatabaseHandle,
        *,
        workspace: Path | None = None,
        caps: ApplyCaps | None = None,
        events: EventSink | None = None,
    ) -> None:
        self._db = db
        self._workspace = workspace
        self._caps = caps or ApplyCaps()
        self._events = events or DiscardEvents()

    # -- reads -----------------------------------------------------------------------------

    def proposals(
        self, agent_id: str, *, status: str | None = "pending", limit: int = 50
    ) -> list[Proposal]:
        scope.check_agent_id(agent_id)
        wanted = _status(status, PROPOSAL_STATUSES, "proposal")
        return ontology.list_proposals(
            self._db.reader(), agent_id, status=wanted, limit=_limit(limit)
        )

    def proposal(self, agent_id: str, proposal_id: str) -> Proposal:
        scope.check_agent_id(agent_id)
        found = ontology.get_proposal(self._db.reader(), agent_id, str(proposal_id))
        if found is None:
            raise NotFound(f"no proposal {proposal_id!r}", code="proposal_not_found")
        return found

    def contradictions(
        self, agent_id: str, *, status: str | None = "active", limit: int = 50
    ) -> list[Contradiction]:
        scope.check_agent_id(agent_id)
        wanted = _status(status, CONTRADICTION_STATUSES, "contradiction")
        return ontology.list_contradictions(
            self._db.reader(), agent_id, status=wanted, limit=_limit(limit)
        )

    def attention(
        self, agent_id: str, *, status: str | None = "pending", limit: int = 50
    ) -> list[Attention]:
        scope.check_agent_id(agent_id)
        wanted = _status(status, ATTENTION_STATUSES, "attention")
        return attention.list_attention(
            self._db.reader(), agent_id, status=wanted, limit=_limit(limit)
        )

    def operations(self, agent_id: str, pass_id: str) -> list[OperationRecord]:
        """Every operation the seam saw in one pass, in order (the Dreaming pane)."""
        scope.check_agent_id(agent_id)
        return dreaming_operations.for_pass(self._db.reader(), agent_id, pass_id)

    # -- writes ----------------------------------------------------------------------------

    def apply(
        self, agent_id: str, operations: Sequence[Any], *, actor: str, dry_run: bool = False
    ) -> ApplyReport:
        """A manual apply through the seam (no pass); `dry_run` only validates."""
        scope.check_agent_id(agent_id)
        if not isinstance(operations, list | tuple) or not operations:
            raise InvalidInput("operations must be a non-empty list", code="operations_invalid")
        return apply_operations(
            self._db,
            agent_id=agent_id,
            pass_id=None,
            operations=list(operations),
            actor=_actor(actor),
            caps=self._caps,
            workspace=self._workspace,
            dry_run=dry_run,
            events=self._events,
        )

    def apply_proposal(self, agent_id: str, proposal_id: str, *, actor: str) -> ProposalOutcome:
        """Apply a pending proposal through the seam (re-validated; failed if it no longer is)."""
        who = _actor(actor)
        found = self.proposal(agent_id, proposal_id)
        if found.status != "pending":
            raise Conflict(f"proposal {proposal_id} is {found.status}", code="proposal_not_pending")
        raw: dict[str, Any] = {
            "operation": found.operation,
            "payload": dict(found.payload),
            "evidence": [dict(e) for e in found.evidence],
            "confidence": 1.0 if found.confidence is None else found.confidence,
        }
        if found.provenance:
            raw["provenance"] = found.provenance
        if found.rationale:
            raw["reason"] = found.rationale
        report = apply_operations(
            self._db,
            agent_id=agent_id,
            pass_id=None,
            operations=[raw],
            actor=who,
            caps=self._caps,
            workspace=self._workspace,
            proposal_id=found.id,
            review=False,
        )
        after = self.proposal(agent_id, proposal_id)
        self._events.publish(
            OntologyChanged(
                agent_id=agent_id,
                proposal_ids=(found.id,),
                applied=int(after.status == "applied"),
            )
        )
        return ProposalOutcome(after, report)

    def reject_proposal(
        self, agent_id: str, proposal_id: str, *, actor: str, reason: str | None
    ) -> ProposalOutcome:
        who = _actor(actor)
        why = _reason(reason, required=True)
        assert why is not None
        self.proposal(agent_id, proposal_id)
        with self._db.write() as conn:
            if not ontology.mark_rejected(conn, agent_id, proposal_id, actor=who, reason=why):
                current = ontology.get_proposal(conn, agent_id, proposal_id)
                status = current.status if current else "gone"
                raise Conflict(f"proposal {proposal_id} is {status}", code="proposal_not_pending")
        self._events.publish(
            OntologyChanged(agent_id=agent_id, proposal_ids=(proposal_id,), rejected=1)
        )
        return ProposalOutcome(self.proposal(agent_id, proposal_id))

    def bulk(
        self,
        agent_id: str,
        proposal_ids: Sequence[str],
        *,
        action: str,
        actor: str,
        reason: str | None = None,
    ) -> list[ProposalOutcome | NotFound | Conflict]:
        """Apply or reject each proposal; per id its outcome or the refusal (others go on)."""
        scope.check_agent_id(agent_id)
        if action not in ("apply", "reject"):
            raise InvalidInput("action must be apply or reject", code="action_invalid")
        ids = list(dict.fromkeys(str(i) for i in proposal_ids))
        if not ids or len(ids) > MAX_BULK:
            raise InvalidInput(f"ids must name 1..{MAX_BULK} proposals", code="ids_invalid")
        _actor(actor)
        if action == "reject":
            _reason(reason, required=True)
        out: list[ProposalOutcome | NotFound | Conflict] = []
        for proposal_id in ids:
            try:
                if action == "apply":
                    out.append(self.apply_proposal(agent_id, proposal_id, actor=actor))
                else:
                    out.append(
                        self.reject_proposal(agent_id, proposal_id, actor=actor, reason=reason)
                    )
            except (NotFound, Conflict) as exc:
                out.append(exc)
        return out

    def revert_pass(
        self, agent_id: str, pass_id: str, *, actor: str, dry_run: bool = False
    ) -> RevertOutcome:
        """Undo a pass's graph mutations (or show what would change). Blockers are in the
        outcome; the caller refuses (HTTP 409 `revert_blocked`) when there are any."""
        scope.check_agent_id(agent_id)
        if not isinstance(pass_id, str) or not pass_id.strip() or len(pass_id) > 128:
            raise InvalidInput("pass id is required", code="pass_id_invalid")
        outcome = revert_pass(self._db, agent_id, pass_id, _actor(actor), dry_run=dry_run)
        empty = not (outcome.changes or outcome.already_reverted or outcome.blockers)
        if empty and not dreaming_operations.for_pass(self._db.reader(), agent_id, pass_id):
            raise NotFound(f"no pass {pass_id!r} with operations", code="pass_not_found")
        if outcome.reverted:
            self._events.publish(
                PassReverted(agent_id=agent_id, pass_id=pass_id, changes=len(outcome.changes))
            )
        return outcome
