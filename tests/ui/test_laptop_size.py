"""The window fits a 1024×640 laptop screen: every pane, with data, nothing cut off."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSize
from PySide6.QtWidgets import QApplication, QHBoxLayout, QLabel, QPushButton, QWidget
from pytestqt.qtbot import QtBot

from signet_desktop.domain.documents import DocumentRequest
from signet_desktop.domain.sessions import Turn
from signet_desktop.service.facade import SignetService
from signet_desktop.ui.clipping import clipped
from signet_desktop.ui.event_bridge import EventBridge
from signet_desktop.ui.main_window import MIN_SIZE, MainWindow
from signet_desktop.ui.pane import discover_panes
from signet_desktop.ui.panes.dreaming import DreamingPane
from signet_desktop.ui.settings import ShellSettings
from signet_desktop.ui.style import apply_style
from tests.ui.memory_support import fill
from tests.ui.test_dreaming_pane import FakeDreaming, Shim, two_agents

pytestmark = pytest.mark.gui

PROMPT = "Why does the billing replica lag behind the primary after the nightly vacuum?"


def seed(service: SignetService) -> list[str]:
    """Memories and a long-worded session, so the panes show rows and details, not empties."""
    turns = [
        Turn("u0", "user", PROMPT, "2026-11-02T09:14:00Z"),
        Turn("a0", "assistant", "The vacuum holds a lock the replica waits on. " * 8, None),
    ]
    service.transcripts.capture(
        "default", "cc-billing-replica-lag", "claude-code", turns, project="billing"
    )
    documents = service.documents
    for title in ("Billing database runbook", "Incident reviews, autumn 2026"):
        text = f"# {title}\n\n" + "Billing runs on Postgres 16 with a replica. " * 20
        documents.submit("default", DocumentRequest("text", content=text, title=title))
    return fill(service, 40)


@pytest.fixture
def styled(qapp: QApplication) -> Iterator[None]:
    """The app's own stylesheet and type scale (what sizes every widget), undone after."""
    font, sheet = qapp.font(), qapp.styleSheet()
    apply_style(qapp)
    yield
    qapp.setStyleSheet(sheet)
    qapp.setFont(font)


@pytest.fixture
def window(
    qtbot: QtBot, service: SignetService, tmp_path: Path, qt_loop: Any, styled: None
) -> Iterator[MainWindow]:
    bridge = EventBridge(service.events)
    shown = MainWindow(
        service,
        events=bridge,
        settings=ShellSettings.at(tmp_path / "settings.ini"),
        url="http://127.0.0.1:3850",
        workspace=tmp_path / "ws",
    )
    memory_ids = seed(service)
    shown.reveals = {  # type: ignore[attr-defined]
        "memories": {"memory_id": memory_ids[0]},
        "transcripts": {"session_key": "cc-billing-replica-lag"},
        "recall": {"query": "billing"},
        "documents": {"document_id": service.documents.list("default")[0].id},
    }
    qtbot.addWidget(shown)
    shown.show()
    yield shown
    shown.shutdown()
    bridge.close()


def settle(loop: asyncio.AbstractEventLoop, window: MainWindow, qapp: QApplication) -> None:
    """Run the loop until no task of the window is pending (a loaded machine: up to 30 s)."""

    async def run() -> None:
        deadline = loop.time() + 30
        while loop.time() < deadline:
            await window.tasks.wait_idle()
            await asyncio.sleep(0.05)
            if not window.tasks.pending:
                return

    loop.run_until_complete(run())
    qapp.processEvents()


def test_every_pane_fits_1024_by_640_with_nothing_cut_off(
    window: MainWindow, qt_loop: asyncio.AbstractEventLoop, qapp: QApplication
) -> None:
    problems: dict[str, list[str]] = {}
    for spec in window.specs:
        window.show_pane(spec.key, **window.reveals.get(spec.key, {}))  # type: ignore[attr-defined]
        settle(qt_loop, window, qapp)
        window.resize(MIN_SIZE)
        qapp.processEvents()
        hint = window.minimumSizeHint()
        found = clipped(window)
        if hint.width() > MIN_SIZE.width() or hint.height() > MIN_SIZE.height():
            found.insert(0, f"the window needs {hint.width()}×{hint.height()}")
        if window.size() != MIN_SIZE:
            found.insert(0, f"the window is {window.width()}×{window.height()}")
        if found:
            problems[spec.key] = found
    assert problems == {}, "\n".join(f"{k}: {p}" for k, found in problems.items() for p in found)


def test_the_live_status_bar_fits_1024_wide(
    qtbot: QtBot,
    service: SignetService,
    tmp_path: Path,
    qt_loop: asyncio.AbstractEventLoop,
    qapp: QApplication,
    styled: None,
) -> None:
    bridge = EventBridge(service.events)
    window = MainWindow(
        service,
        events=bridge,
        settings=ShellSettings.at(tmp_path / "status.ini"),
        url="http://127.0.0.1:3850",
        specs=[],
    )
    qtbot.addWidget(window)
    window.show()
    window.start_refreshing()
    try:
        seed(service)  # its events reach the status bar ("last: …")
        settle(qt_loop, window, qapp)
        window.resize(MIN_SIZE)
        qapp.processEvents()
        assert window.status.last_text()
        assert window.size() == MIN_SIZE
        assert clipped(window) == []
    finally:
        window.shutdown()
        bridge.close()


def test_a_dreaming_pass_fits_1024_by_640_in_words_and_in_detail(
    qtbot: QtBot,
    service: SignetService,
    tmp_path: Path,
    qt_loop: asyncio.AbstractEventLoop,
    qapp: QApplication,
    styled: None,
) -> None:
    """The audit of a pass with calls, operations and quotes, in the real window. The pane is
    the one the window restores before it is shown: it reads once shown (`showEvent`)."""
    dreaming = next(s for s in discover_panes() if s.key == "dreaming")
    shim = Shim(FakeDreaming(two_agents()))
    spec = dataclasses.replace(
        dreaming,
        factory=lambda context: DreamingPane(dataclasses.replace(context, service=shim)),  # type: ignore[arg-type]
    )
    bridge = EventBridge(service.events)
    window = MainWindow(
        service,
        events=bridge,
        settings=ShellSettings.at(tmp_path / "dreaming.ini"),
        specs=[spec],
    )
    qtbot.addWidget(window)
    window.show()
    try:
        pane = window.panes["dreaming"]
        assert isinstance(pane, DreamingPane)
        for _ in range(20):  # the list, then the pass's detail: two reads
            settle(qt_loop, window, qapp)
            if pane.detail is not None:
                break
        assert pane.detail is not None
        for details in (False, True):
            if pane.audit.details != details:
                pane.audit.details_button.click()
            settle(qt_loop, window, qapp)
            window.resize(MIN_SIZE)
            qapp.processEvents()
            assert window.size() == MIN_SIZE
            assert clipped(window) == []
            # a whole sentence of the timeline shows, not "1 se…"
            calls = pane.audit.calls
            first = calls.topLevelItem(0)
            needed = calls.fontMetrics().horizontalAdvance(first.text(0))
            assert calls.columnWidth(0) >= min(needed, 300), first.text(0)
    finally:
        window.shutdown()
        bridge.close()


def test_the_check_finds_a_label_cut_off_and_a_widget_outside_its_parent(qtbot: QtBot) -> None:
    """The check itself can fail: a row too narrow for its label, a child placed outside."""
    row = QWidget()
    qtbot.addWidget(row)
    layout = QHBoxLayout(row)
    label = QLabel("a label much longer than the row it sits in can ever show")
    layout.addWidget(label)
    layout.addWidget(QPushButton("Apply"))
    row.setFixedSize(QSize(120, 60))  # under the layout's minimum: Qt squeezes the label
    stray = QPushButton("Outside", row)
    stray.setGeometry(100, 8, 110, 36)
    row.show()
    found = clipped(row)
    assert any(p.startswith('QLabel "a label much') and "squeezed" in p for p in found), found
    assert any(p.startswith('QPushButton "Outside"') and "outside" in p for p in found), found
    row.setFixedSize(QSize(700, 60))
    stray.setGeometry(560, 8, 110, 36)
    assert clipped(row) == []
