"""The Health pane's log wraps its lines, and "Last job" shows what ran before it was opened."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator

import pytest
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from signet_desktop.daemon.logring import log_ring
from signet_desktop.domain.documents import DocumentRequest
from signet_desktop.ui.health_cards import LogView
from signet_desktop.ui.health_report import read_health
from signet_desktop.ui.log_bridge import LogBridge
from signet_desktop.ui.pane import PaneContext
from signet_desktop.ui.panes.health import HealthPane
from tests.ui.test_documents_pane import run_document_worker
from tests.ui.test_health_pane import open_pane, wait_until

pytestmark = pytest.mark.gui

LONG = "queue worker documents leased job " + "0123456789abcdef" * 12 + " for agent default"


@pytest.fixture
def ring_log() -> Iterator[logging.Logger]:
    logger = logging.getLogger("signet_desktop.test.health_basics")
    ring = log_ring()
    ring.clear()
    logger.addHandler(ring)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    yield logger
    logger.removeHandler(ring)
    ring.clear()


def test_the_log_wraps_long_lines_instead_of_scrolling_sideways(
    qtbot: QtBot, ring_log: logging.Logger
) -> None:
    holder = QWidget()
    qtbot.addWidget(holder)
    view = LogView(LogBridge(log_ring(), holder))
    view.setParent(holder)
    ring_log.info(LONG)
    ring_log.info("short line")
    holder.resize(480, 300)
    view.resize(480, 300)
    holder.show()
    qtbot.waitUntil(lambda: any("short line" in line for line in view.shown()))
    qtbot.waitExposed(holder)
    text = view.text
    assert text.horizontalScrollBar().maximum() == 0  # nothing to scroll to
    first = text.document().firstBlock()
    qtbot.waitUntil(lambda: first.layout().lineCount() > 1)  # the long line wraps
    assert first.layout().lineCount() > 1
    view.bridge.close()


def test_last_job_shows_what_ran_before_the_pane_was_opened(
    qt_loop: asyncio.AbstractEventLoop, qtbot: QtBot, pane_context: PaneContext
) -> None:
    service = pane_context.service
    service.documents.submit("default", DocumentRequest("text", content="Billing runs on PG."))
    assert run_document_worker(service) >= 1  # finished: its event went by before the pane
    report = read_health(service, pane_context.workspace, "default")
    assert report.last_runs["documents"].outcome == "completed"
    pane: HealthPane = open_pane(qtbot, pane_context)
    row = pane.workers._row_of("documents")
    assert row is not None
    last = pane.workers.table.item(row, 2)
    wait_until(lambda: last.text().endswith(" completed"))
    assert last.toolTip().startswith("document_ingest job completed at")
    timers = [w.name for w in report.workers if not w.job_types]
    assert timers  # e.g. transcript TTL: takes no queued jobs, so has no last job
    timer_row = pane.workers._row_of(timers[0])
    assert timer_row is not None
    assert pane.workers.table.item(timer_row, 2).text() == "no queued jobs"


def test_another_agents_jobs_are_not_this_agents_last_job(pane_context: PaneContext) -> None:
    service = pane_context.service
    service.documents.submit("other", DocumentRequest("text", content="Other agent's note."))
    run_document_worker(service)
    assert "documents" not in read_health(service, pane_context.workspace, "default").last_runs
    assert "documents" in read_health(service, pane_context.workspace, "other").last_runs


def test_a_long_last_job_never_pushes_the_error_out_of_sight(
    qt_loop: asyncio.AbstractEventLoop, qtbot: QtBot, pane_context: PaneContext
) -> None:
    service = pane_context.service
    service.documents.submit("default", DocumentRequest("url", url="https://docs.invalid/x"))
    run_document_worker(service)  # the fetch fails: a failed (or dead) last job with its error
    pane = open_pane(qtbot, pane_context)
    table = pane.workers.table
    row = pane.workers._row_of("documents")
    assert row is not None
    wait_until(lambda: table.item(row, 3) is not None and table.item(row, 3).text() != "")
    error = table.item(row, 3)
    assert error.toolTip() == error.text()  # elided in place, whole on hover
    table.doItemsLayout()
    assert table.horizontalScrollBar().maximum() == 0
    right = table.columnViewportPosition(3) + table.columnWidth(3)
    assert right <= table.viewport().width()


def test_the_newest_line_stays_in_sight_when_lines_rewrap_unless_scrolled_up(
    qtbot: QtBot, ring_log: logging.Logger
) -> None:
    for n in range(30):
        ring_log.info("worker %d started", n)
    ring_log.warning(LONG)
    holder = QWidget()
    qtbot.addWidget(holder)
    view = LogView(LogBridge(log_ring(), holder))  # filled before it has its size
    view.setParent(holder)
    holder.resize(420, 260)
    view.resize(420, 260)
    holder.show()
    qtbot.waitExposed(holder)
    scroll = view.text.verticalScrollBar()
    qtbot.waitUntil(lambda: scroll.maximum() > 0)
    assert scroll.value() == scroll.maximum()  # re-wrapped at its width, still at the end
    scroll.setValue(0)  # the reader scrolls up to read
    ring_log.info("one more")
    qtbot.waitUntil(lambda: any("one more" in line for line in view.shown()))
    assert scroll.value() == 0 and not view.following
    view.bridge.close()
