"""One judgment: the tray, the status bar, Health and Queue say the same about the same facts.

The scenario of issue 29: one unreachable URL left a dead document job, and from then on the
tray was orange, a warning popped at every launch and Queue said "Degraded" while Health said
every check passed. Now the dead job is a notice with Retry on that document everywhere, the
app is Ready, and a Retry (the queue's requeue of that job) moves every surface on together.
"""

from __future__ import annotations

import asyncio

import pytest
from pytestqt.qtbot import QtBot
from support.db import database_of
from support.queue_jobs import set_row

from signet_desktop.domain.documents import DocumentRequest
from signet_desktop.service.verdict import judge, read_facts
from signet_desktop.storage import documents
from signet_desktop.ui.pane import PaneContext
from signet_desktop.ui.panes.health import HealthPane
from signet_desktop.ui.panes.queue import QueuePane
from signet_desktop.ui.status_bar import StatusBar
from signet_desktop.ui.status_view import read_status, tray_state
from signet_desktop.ui.tray import TrayIcon
from tests.ui.memory_support import settle

pytestmark = pytest.mark.gui

URL = "https://docs.internal.invalid/design-doc.pdf"
ERROR = "fetch failed: [Errno -2] Name or service not known"


def dead_document(context: PaneContext) -> tuple[str, str]:
    """A URL document whose ingest job spent its attempts, as the worker leaves it."""
    service = context.service
    ticket = service.documents.submit("default", DocumentRequest("url", url=URL))
    document = service.documents.get("default", ticket.id)
    assert document.job is not None
    db = database_of(service)
    set_row(db, document.job.id, status="dead", attempts=3, error=ERROR,
            failed_at="2026-12-06T09:00:00.000Z")  # fmt: skip
    with db.write() as conn:
        documents.set_failed(conn, ticket.id, ERROR)
    return ticket.id, document.job.id


class Surfaces:
    """The four places that state the app's health, over one real service."""

    def __init__(self, qtbot: QtBot, context: PaneContext, loop: asyncio.AbstractEventLoop):
        self.context, self.loop = context, loop
        self.tray = TrayIcon()
        self.bar = StatusBar()
        self.health = HealthPane(context)
        self.queue = QueuePane(context)
        for widget in (self.bar, self.health, self.queue):
            qtbot.addWidget(widget)
        for pane in (self.health, self.queue):
            pane.resize(1200, 760)
            pane.show()
            pane.activated()
        self.read()

    def read(self) -> None:
        view = read_status(self.context.service)
        self.tray.show_state(tray_state(view), view.facts.paused)
        self.bar.show_view(view)
        self.health.refresh()
        self.queue.refresh()
        settle(self.loop, self.context)

    def said(self) -> dict[str, str]:
        assert self.health.report is not None
        return {
            "tray": self.tray.state.reason,
            "bar": f"{self.bar.state_label.text()} {self.bar.failed_label.text()}",
            "health": self.health.summary.text(),
            "queue": self.queue.health_label.text(),
        }


def test_a_dead_document_job_is_a_notice_everywhere_not_a_degraded_app(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    document_id, job_id = dead_document(pane_context)
    verdict = judge(read_facts(pane_context.service, "default"))
    assert verdict.state == "healthy" and verdict.failed == 1
    [item] = verdict.notices
    assert (item.job_id, item.document_id, item.document) == (job_id, document_id, URL)

    shown = Surfaces(qtbot, pane_context, qt_loop)
    said = shown.said()
    assert shown.tray.state.state == "healthy"
    assert shown.tray.notices == []  # nothing pops at launch for a failed document
    assert said["tray"] == "Ready · 0 memories · 1 failed item"
    assert said["bar"].startswith("Ready ") and "1 failed item" in said["bar"]
    assert shown.bar.dot_label.property("state") == "ok"
    assert said["health"].startswith("Ready · ") and said["health"].endswith(" · 1 failed item")
    assert said["queue"] == "Ready · 1 failed item"
    assert shown.health.report is not None and shown.health.report.verdict == verdict
    for pane in (shown.health, shown.queue):  # the notice names the document, with Retry
        assert pane.failed.isVisibleTo(pane) and pane.failed.items == (item,)
        assert len(pane.failed.retry_buttons) == 1

    shown.queue.failed.retry_buttons[0].click()  # the queue's own requeue of that one job
    settle(qt_loop, pane_context, until=lambda: "Retrying" in shown.queue.notice.text())
    job = pane_context.service.pipeline.queue.jobs("default", job_type="document_ingest")[0]
    assert (job.id, job.status, job.attempts) == (job_id, "pending", 0)
    shown.read()
    said = shown.said()
    assert shown.tray.state.state == "working"
    assert said["tray"] == "1 job queued… · 0 memories"
    assert said["bar"].startswith("1 job queued… ") and shown.bar.failed_label.isHidden()
    assert said["health"].startswith("1 job queued… · ")
    assert said["queue"] == "1 job queued…"
    assert shown.health.failed.isHidden() and shown.queue.failed.isHidden()


def test_a_second_retry_inside_the_cooldown_says_when_and_changes_nothing(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    _, first = dead_document(pane_context)
    shown = Surfaces(qtbot, pane_context, qt_loop)
    shown.queue.failed.retry_buttons[0].click()
    settle(qt_loop, pane_context, until=lambda: "Retrying" in shown.queue.notice.text())
    set_row(database_of(pane_context.service), first, status="dead", attempts=3, error=ERROR)
    shown.read()
    shown.queue.failed.retry_buttons[0].click()
    settle(qt_loop, pane_context, until=lambda: bool(shown.queue.banner.text))
    assert shown.queue.banner.text.startswith("Not retried yet: requeue refused by its cooldown")
    job = pane_context.service.pipeline.queue.jobs("default", status="dead")
    assert [j.id for j in job] == [first]
