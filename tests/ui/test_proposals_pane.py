"""The Proposals pane over the real facade: proposals made by the apply seam, counts per
status, evidence highlighted in its source, Apply / Reject with a reason, bulk actions,
contradictions side by side, and one agent never seeing another's."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from PySide6.QtCore import QUrl
from pytestqt.qtbot import QtBot

from signet_desktop.domain.memory import Actor
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest
from signet_desktop.ui.memory_format import INSPECTOR_ACTOR
from signet_desktop.ui.pane import PaneContext, discover_panes
from signet_desktop.ui.panes.proposals import EMPTY_HINT, PANE, TABS, ProposalsPane
from tests.ui.conftest import RecordingNavigator
from tests.ui.memory_support import settle

pytestmark = pytest.mark.gui

MEMORY = (
    "We renamed ledger-svc to ledger last week. Billing moved from Postgres 14 "
    "to Postgres 16 in November."
)


def seed(service: SignetService, agent: str = "default") -> dict[str, str]:
    """Two pending proposals (high-risk renames) and one contradiction, all with quotes."""
    memory = service.memories.remember(
        RememberRequest(content=MEMORY, agent_id=agent), Actor(changed_by="claude-code")
    ).memory
    ref = f"memory:{memory.id}"
    knowledge = service.knowledge
    ledger, _ = knowledge.create_entity(
        agent, "ledger-svc", actor=INSPECTOR_ACTOR, entity_type="service"
    )
    billing, _ = knowledge.create_entity(
        agent, "billing", actor=INSPECTOR_ACTOR, entity_type="system"
    )
    aspect = knowledge.create_aspect(agent, billing.id, "storage", actor=INSPECTOR_ACTOR)

    def op(name: str, payload: dict[str, Any], quote: str, **kw: Any) -> dict[str, Any]:
        evidence = [{"quote": quote, "source_ref": ref}]
        return {
            "operation": name,
            "payload": payload,
            "evidence": evidence,
            "confidence": 0.9,
            **kw,
        }

    claim = {"entityId": billing.id, "aspectId": aspect.id, "claimKey": "database"}
    report = service.ontology.apply(
        agent,
        [
            op(
                "rename_entity",
                {"entityId": ledger.id, "newName": "ledger"},
                "We renamed ledger-svc to ledger",
                risk="high",
                reason="the service was renamed",
            ),
            op(
                "rename_entity",
                {"entityId": billing.id, "newName": "billing-service"},
                "Billing moved",
                risk="high",
            ),
            op("add_claim_value", {**claim, "value": "Postgres 14"}, "Postgres 14"),
            op("add_claim_value", {**claim, "value": "Postgres 16"}, "Postgres 16"),
        ],
        actor="dreaming",
    )
    assert [r.status for r in report.results] == ["proposed", "proposed", "applied", "applied"]
    return {"memory": memory.id, "ledger": ledger.id, "billing": billing.id}


def open_pane(qtbot: QtBot, context: PaneContext, loop: asyncio.AbstractEventLoop) -> ProposalsPane:
    pane = ProposalsPane(context)
    qtbot.addWidget(pane)
    pane.resize(1100, 720)
    pane.show()
    pane.activated()
    settle(loop, context)
    return pane


def test_the_pane_registers_itself() -> None:
    spec = next(spec for spec in discover_panes() if spec.key == "proposals")
    assert spec == PANE
    assert (spec.title, spec.icon, spec.order) == ("Proposals", "proposals.svg", 55)


def test_pending_proposals_with_their_evidence_in_context(
    qtbot: QtBot,
    qt_loop: asyncio.AbstractEventLoop,
    pane_context: PaneContext,
    navigator: RecordingNavigator,
) -> None:
    ids = seed(pane_context.service)
    pane = open_pane(qtbot, pane_context, qt_loop)
    assert pane.stack.currentWidget() is pane.content
    assert pane.count_label.text() == "pending 2 · applied 0 · rejected 0"
    assert [pane.tabs.tabText(i) for i in range(pane.tabs.count())] == [
        "Pending (2)",
        "Applied (0)",
        "Rejected (0)",
        "Failed (0)",
        "Contradictions (1)",
    ]
    assert len(pane.proposal_ids()) == 2
    pane.list.setCurrentRow(pane.proposal_ids().index(ledger_proposal(pane)))
    assert pane.heading.text() == "rename_entity  “ledger-svc” → “ledger”"  # names looked up
    settle(qt_loop, pane_context, until=lambda: "memory " in pane.quotes.toPlainText())
    html = pane.quotes.toHtml()
    assert "We renamed ledger-svc to ledger" in pane.quotes.toPlainText()
    assert "background-color" in html and "last week" in pane.quotes.toPlainText()
    assert f'href="memory:{ids["memory"]}"' in html
    pane.quotes.open_source(QUrl(f"memory:{ids['memory']}"))
    assert navigator.opened == [ids["memory"]]


def ledger_proposal(pane: ProposalsPane) -> str:
    return next(p.id for p in pane.listed if p.payload.get("newName") == "ledger")


def test_apply_and_reject_with_a_reason(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    ids = seed(pane_context.service)
    service = pane_context.service
    pane = open_pane(qtbot, pane_context, qt_loop)
    pane.list.setCurrentRow(pane.proposal_ids().index(ledger_proposal(pane)))
    pane.apply_button.click()
    settle(qt_loop, pane_context, until=lambda: pane.notice.text() == "1 applied.")
    assert service.knowledge.get_entity("default", ids["ledger"]).entity.name == "ledger"
    settle(qt_loop, pane_context, until=lambda: len(pane.proposal_ids()) == 1)
    asked: list[int] = []
    pane.ask_reject_reason = lambda n: asked.append(n) and None  # cancelled: nothing happens
    pane.reject_button.click()
    settle(qt_loop, pane_context)
    assert asked == [1] and len(service.ontology.proposals("default")) == 1
    pane.ask_reject_reason = lambda n: "billing keeps its name"
    pane.reject_button.click()
    settle(qt_loop, pane_context, until=lambda: pane.notice.text() == "1 rejected.")
    [rejected] = service.ontology.proposals("default", status="rejected")
    assert rejected.error == "billing keeps its name" and rejected.rejected_by == "inspector"
    settle(
        qt_loop,
        pane_context,
        until=lambda: pane.count_label.text() == "pending 0 · applied 1 · rejected 1",
    )
    pane.reveal(status="rejected")
    settle(qt_loop, pane_context, until=lambda: pane.proposal_ids() == [rejected.id])
    assert not pane.apply_button.isEnabled() and not pane.bulk_bar.isVisibleTo(pane)
    assert "billing keeps its name" in pane.form.itemAt(1).widget().text()  # type: ignore[union-attr]


def test_bulk_apply_of_the_ticked_proposals(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    ids = seed(pane_context.service)
    pane = open_pane(qtbot, pane_context, qt_loop)
    assert not pane.bulk_apply.isEnabled()
    pane.select_all.setChecked(True)
    assert pane.bulk_apply.text() == "Apply selected (2)" and pane.bulk_apply.isEnabled()
    pane.bulk_apply.click()
    settle(qt_loop, pane_context, until=lambda: pane.notice.text() == "2 applied.")
    names = {
        pane_context.service.knowledge.get_entity("default", ids[k]).entity.name
        for k in ("ledger", "billing")
    }
    assert names == {"ledger", "billing-service"}
    settle(qt_loop, pane_context, until=lambda: pane.proposal_ids() == [])
    assert "No pending proposals" in pane.list_empty.text()


def test_contradictions_side_by_side_and_review_opens_the_entity(
    qtbot: QtBot,
    qt_loop: asyncio.AbstractEventLoop,
    pane_context: PaneContext,
    navigator: RecordingNavigator,
) -> None:
    ids = seed(pane_context.service)
    pane = open_pane(qtbot, pane_context, qt_loop)
    pane.tabs.setCurrentIndex(TABS.index("contradictions"))
    settle(qt_loop, pane_context)
    assert pane.views.currentWidget() is pane.contradictions_view
    card = pane.contradiction_list.itemWidget(pane.contradiction_list.item(0))
    assert {card.left.text(), card.right.text()} == {"Postgres 14", "Postgres 16"}  # type: ignore[union-attr]
    assert "billing · storage · database" in card.title.text()  # type: ignore[union-attr]
    settle(
        qt_loop,
        pane_context,
        until=lambda: (
            "Postgres 16" in pane.contradiction_quotes.toPlainText()
            and "memory " in pane.contradiction_quotes.toPlainText()
        ),
    )
    card = pane.contradiction_list.itemWidget(pane.contradiction_list.item(0))  # rebuilt
    card.review.click()  # type: ignore[union-attr]
    assert navigator.panes[-1] == ("entities", {"entity_id": ids["billing"]})


def test_empty_state_and_another_agents_proposals(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    seed(pane_context.service, agent="other")
    assert len(pane_context.service.ontology.proposals("other")) == 2
    pane = open_pane(qtbot, pane_context, qt_loop)
    assert pane.stack.currentWidget() is pane.empty
    assert pane.empty.hint_label.text() == EMPTY_HINT
    assert pane.proposal_ids() == [] and pane.contradictions == []
    theirs = pane_context.service.ontology.proposals("other")[0].id
    pane.current = pane_context.service.ontology.proposal("other", theirs)  # forced, as if stale
    pane.decide("apply")
    settle(qt_loop, pane_context, until=lambda: bool(pane.banner.text))
    assert "Nothing was decided" in pane.banner.text
    assert pane_context.service.ontology.proposal("other", theirs).status == "pending"
