"""The Queue pane over the real facade: counts, chart, jobs, detail, repair with a dry run
first and a confirmation, events, one agent never seeing another's jobs."""

from __future__ import annotations

import asyncio

import pytest
from pytestqt.qtbot import QtBot
from support.db import database_of
from support.queue_jobs import all_rows, fill_queue

from signet_desktop.domain.events import JobDead
from signet_desktop.queue.repair import RepairOutcome
from signet_desktop.ui import queue_format as fmt
from signet_desktop.ui.pane import PaneContext, discover_panes
from signet_desktop.ui.panes.queue import PANE, QueuePane
from tests.ui.conftest import RecordingNavigator
from tests.ui.memory_support import settle

pytestmark = pytest.mark.gui


class Confirmations:
    """A `confirm_repair` stand-in: records what it was shown and answers `answer`."""

    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.shown: list[RepairOutcome] = []

    def __call__(self, outcome: RepairOutcome) -> bool:
        self.shown.append(outcome)
        return self.answer


def open_pane(qtbot: QtBot, context: PaneContext, loop: asyncio.AbstractEventLoop) -> QueuePane:
    pane = QueuePane(context)
    qtbot.addWidget(pane)
    pane.resize(1200, 760)
    pane.show()
    pane.activated()
    settle(loop, context)
    return pane


def test_the_pane_registers_itself() -> None:
    spec = next(spec for spec in discover_panes() if spec.key == "queue")
    assert spec == PANE
    assert (spec.title, spec.icon, spec.order) == ("Queue", "queue.svg", 60)


def test_an_empty_queue_shows_the_designed_empty_state_until_a_job_event(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    pane = open_pane(qtbot, pane_context, qt_loop)
    assert pane.stack.currentWidget() is pane.empty
    assert "dry run first" in pane.empty.hint_label.text()
    made = fill_queue(database_of(pane_context.service))
    event = JobDead(agent_id="default", job_id=made.dead[0], job_type="x", worker=None, error="e")
    pane_context.service.events.publish(event)
    settle(qt_loop, pane_context, until=lambda: len(pane.job_ids()) == 7)
    assert pane.stack.currentWidget() is pane.content


def test_counts_table_and_detail_leave_retired_rows_out(
    qtbot: QtBot,
    qt_loop: asyncio.AbstractEventLoop,
    pane_context: PaneContext,
    navigator: RecordingNavigator,
) -> None:
    made = fill_queue(database_of(pane_context.service))
    pane = open_pane(qtbot, pane_context, qt_loop)
    assert pane.pills.text() == ("pending 2 · leased 1 · completed 2 · dead 2 ⚠ · cancelled 0")
    assert not set(made.retired) & set(pane.job_ids())
    assert len(pane.job_ids()) == 7 and len(pane.history) >= 1
    # The one verdict: the expired lease is a fault, the dead jobs are notices with Retry.
    assert pane.health_label.text() == (
        "Degraded: 1 job is stuck in an expired lease · 2 failed items"
    )
    assert pane.failed.isVisibleTo(pane) and len(pane.failed.retry_buttons) == 2
    assert "document_ingest" in pane.types_label.full_text()
    row = pane.job_ids().index(made.dead[0])
    pane.table.selectRow(row)
    detail = pane.detail
    assert detail.job is not None and detail.job.id == made.dead[0]
    assert detail.error.toPlainText() == "timeout after 10 s"
    assert "design.pdf" in detail.payload.toPlainText()
    assert detail.buttons["requeue"].isVisibleTo(pane)
    assert not detail.buttons["cancel"].isVisibleTo(pane)
    assert not detail.document_button.isVisibleTo(pane)
    pane.table.selectRow(pane.job_ids().index(made.pending[0]))
    detail.document_button.click()  # a document's job links to the Documents pane
    assert navigator.panes == [("documents", {"document_id": "doc-0"})]


def test_state_filter_and_reveal(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    made = fill_queue(database_of(pane_context.service))
    pane = open_pane(qtbot, pane_context, qt_loop)
    pane.reveal(state="dead")
    settle(qt_loop, pane_context)
    assert sorted(pane.job_ids()) == sorted(made.dead)
    pane.type_filter.setCurrentIndex(pane.type_filter.findData("document_ingest"))
    settle(qt_loop, pane_context)
    assert pane.job_ids() == [made.dead[0]]


def test_repair_shows_the_dry_run_and_declining_changes_nothing(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    db = database_of(pane_context.service)
    made = fill_queue(db)
    pane = open_pane(qtbot, pane_context, qt_loop)
    before = all_rows(db)
    pane.confirm_repair = ask = Confirmations(False)
    pane.start_repair("requeue")
    settle(qt_loop, pane_context)
    [shown] = ask.shown
    assert shown.dry_run and set(shown.ids) == set(made.dead)
    assert "2 jobs would be back to pending" in fmt.preview_text(shown)
    assert all_rows(db) == before
    assert pane.notice.text() == "Nothing changed."


def test_confirming_applies_to_exactly_the_listed_jobs(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    db = database_of(pane_context.service)
    made = fill_queue(db)
    pane = open_pane(qtbot, pane_context, qt_loop)
    before = all_rows(db)
    pane.confirm_repair = ask = Confirmations(True)
    pane.start_repair("requeue")
    settle(qt_loop, pane_context, until=lambda: "back to pending" in pane.notice.text())
    after = all_rows(db)
    assert {i for i in before if before[i] != after[i]} == set(ask.shown[0].ids) == set(made.dead)
    assert pane.notice.text() == "2 jobs back to pending."
    settle(qt_loop, pane_context, until=lambda: "dead 0" in pane.pills.text())


def test_a_job_action_repairs_only_that_job(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    db = database_of(pane_context.service)
    made = fill_queue(db)
    pane = open_pane(qtbot, pane_context, qt_loop)
    pane.table.selectRow(pane.job_ids().index(made.pending[1]))
    before = all_rows(db)
    pane.confirm_repair = ask = Confirmations(True)
    pane.detail.buttons["cancel"].click()
    settle(qt_loop, pane_context, until=lambda: "cancelled" in pane.notice.text())
    after = all_rows(db)
    assert ask.shown[0].ids == (made.pending[1],)
    assert {i for i in before if before[i] != after[i]} == {made.pending[1]}


def test_a_refused_apply_says_why_and_changes_nothing(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    db = database_of(pane_context.service)
    made = fill_queue(db)
    pane = open_pane(qtbot, pane_context, qt_loop)
    pane.confirm_repair = Confirmations(True)
    pane.start_repair("requeue", [made.dead[0]])
    settle(qt_loop, pane_context, until=lambda: "1 job" in pane.notice.text())
    before = all_rows(db)
    pane.start_repair("requeue", [made.dead[1]])
    settle(qt_loop, pane_context, until=lambda: bool(pane.banner.text))
    assert "cooldown" in pane.banner.text
    assert all_rows(db) == before


def test_one_agent_never_sees_another_agents_jobs(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    db = database_of(pane_context.service)
    theirs = fill_queue(db, "other")
    pane = open_pane(qtbot, pane_context, qt_loop)
    assert pane.job_ids() == [] and pane.stack.currentWidget() is pane.empty
    pane.confirm_repair = ask = Confirmations(True)
    pane.start_repair("requeue", theirs.dead)
    settle(qt_loop, pane_context)
    assert ask.shown == [] and "nothing would change" in pane.notice.text()
    reads = pane.history.__len__()
    event = JobDead(agent_id="other", job_id=theirs.dead[0], job_type="x", worker=None, error="e")
    pane_context.service.events.publish(event)
    settle(qt_loop, pane_context)
    assert len(pane.history) == reads  # another agent's event caused no read
