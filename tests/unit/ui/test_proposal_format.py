"""The Proposals pane's words, computed without Qt."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from signet_desktop.domain.errors import Conflict
from signet_desktop.domain.ontology import Contradiction, Proposal
from signet_desktop.ui import proposal_format as fmt

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
WHEN = "2026-11-29T12:00:00.000Z"


def a_proposal(**kw: Any) -> Proposal:
    fields: dict[str, Any] = dict(
        id="prop-1234567890", agent_id="default", operation="rename_entity", status="pending",
        payload={"entityId": "e-123456789abc", "oldName": "ledger-svc", "newName": "ledger"},
        confidence=0.8, rationale="the service was renamed", provenance=None, risk=None,
        evidence=({"quote": "we call it ledger now", "source_ref": "transcript:s1"},
                  {"quote": "ledger replaced ledger-svc", "source_ref": "memory:m1"}),
        pass_id="pass-abcdef123456", created_by="dreaming", applied_by=None, rejected_by=None,
        result=None, error=None, created_at=WHEN, updated_at=WHEN, applied_at=None,
        rejected_at=None,
    )  # fmt: skip
    fields.update(kw)
    return Proposal(**fields)


def test_counts_and_tabs() -> None:
    assert fmt.counts_text({"pending": 3, "applied": 41, "rejected": 7}) == (
        "pending 3 · applied 41 · rejected 7"
    )
    assert fmt.counts_text({"pending": 500, "failed": 1}).endswith("failed 1")
    assert fmt.counts_text({"pending": 500}).startswith("pending 500+")
    assert fmt.tab_label("pending", 3) == "Pending (3)"


def test_a_proposal_row() -> None:
    row = fmt.proposal_row(a_proposal(), NOW)
    assert (row.title, row.subject, row.tone) == ("rename_entity", "“ledger-svc” → “ledger”",
                                                  "accent")  # fmt: skip
    assert row.meta == "evidence ×2 · confidence 0.80 · 2 days ago"
    bare = fmt.proposal_row(a_proposal(evidence=(), confidence=None, pass_id=None), NOW)
    assert bare.meta == "no evidence · 2 days ago"


def test_decisions_read_plainly() -> None:
    assert fmt.decision_text(a_proposal()) == "waiting for review"
    applied = a_proposal(status="applied", applied_by="inspector", applied_at=WHEN)
    assert fmt.decision_text(applied, NOW) == "applied by inspector 2 days ago"
    rejected = a_proposal(status="rejected", rejected_by="inspector", error="duplicate")
    assert fmt.decision_text(rejected) == "rejected by inspector: duplicate"
    failed = a_proposal(status="failed", error="entity e-1 is archived")
    assert fmt.decision_text(failed) == "failed: entity e-1 is archived"
    assert fmt.actions_for(a_proposal()) == (True, True)
    assert fmt.actions_for(applied) == (False, False) and fmt.actions_for(None) == (False, False)


def test_detail_lines() -> None:
    lines = dict(fmt.detail_lines(a_proposal()))
    assert lines["Why"] == "the service was renamed"
    assert lines["Proposed by"] == "a Dreaming pass (pass-abc…)"
    assert fmt.proposer(a_proposal(created_by="inspector", pass_id=None)) == "inspector"
    assert lines["Payload"] == "entityId: e-123456789a… · oldName: ledger-svc · newName: ledger"
    assert [q.source_ref for q in fmt.quotes_of_proposal(a_proposal())] == ["transcript:s1",
                                                                         "memory:m1"]  # fmt: skip


def test_a_contradiction_side_by_side() -> None:
    item = Contradiction(
        id="c1", agent_id="default", entity_id="e1", entity_name="billing", aspect_id="a1",
        aspect_name="storage", claim_key="database", left_attribute_id="l1",
        right_attribute_id="r1", left_content="Postgres 14", right_content="Postgres 16",
        evidence=({"quote": "moved to 16", "source_ref": "memory:m2"},), detector="lexical",
        reason="two active values of one key", confidence=0.7, status="active",
        detected_at=WHEN, resolved_at=None,
    )  # fmt: skip
    view = fmt.contradiction_view(item, NOW)
    assert view.title == "billing · storage · database"
    assert (view.left, view.right) == ("Postgres 14", "Postgres 16")
    assert view.meta == "lexical · confidence 0.70 · 2 days ago"
    blank = fmt.contradiction_view(replace(item, entity_name=None, aspect_name=None,
                                           claim_key=None, left_content=None), NOW)  # fmt: skip
    assert blank.title == "two claims" and blank.left == "claim l1"


@dataclass
class Outcome:
    proposal: Proposal


def test_outcomes_count_what_was_done_and_list_refusals() -> None:
    applied = Outcome(a_proposal(status="applied"))
    failed = Outcome(a_proposal(id="prop-2", status="failed", error="target archived"))
    refused = Conflict("proposal prop-3 is rejected", code="proposal_not_pending")
    head, lines = fmt.outcome_text("apply", [applied, failed, refused])
    assert head == "1 applied, 2 not"
    assert lines == ["prop-2: failed: target archived", "proposal prop-3 is rejected"]
    assert fmt.outcome_text("reject", [Outcome(a_proposal(status="rejected"))]) == (
        "1 rejected",
        [],
    )
