"""The Overview over the real facade: cards that link to their panes, the first pane on a
first launch, and a live activity feed in words."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from signet_desktop.domain.documents import DocumentRequest
from signet_desktop.domain.events import StatusChanged
from signet_desktop.domain.memory import Actor
from signet_desktop.domain.sessions import Turn
from signet_desktop.harness.installers import claude_code
from signet_desktop.harness.installers.files import Locations, apply
from signet_desktop.service.memories.service import RememberRequest
from signet_desktop.ui.event_bridge import EventBridge
from signet_desktop.ui.main_window import MainWindow
from signet_desktop.ui.pane import PaneContext, discover_panes
from signet_desktop.ui.panes.overview import PANE, OverviewPane
from signet_desktop.ui.settings import ShellSettings
from tests.ui.conftest import RecordingNavigator
from tests.ui.memory_support import ELSEWHERE, settle

pytestmark = pytest.mark.gui

TURNS = [
    Turn("t0", "user", "Why is billing slow on the analytics replica?", "2026-12-06T10:02:11Z"),
    Turn("t1", "assistant", "max_wal_senders dropped to 4, so the replica waits.", None),
]


def open_pane(
    qtbot: QtBot, context: PaneContext, loop: asyncio.AbstractEventLoop, home: Path
) -> OverviewPane:
    pane = OverviewPane(context)
    pane.env = {"HOME": str(home)}
    qtbot.addWidget(pane)
    pane.resize(1200, 800)
    pane.show()
    pane.activated()
    settle(loop, context, until=lambda: pane.report is not None)
    return pane


def test_the_pane_registers_itself_first_in_the_rail() -> None:
    specs = discover_panes()
    assert specs[0] == PANE and PANE.key == "overview"


def test_a_first_launch_opens_on_the_overview(
    qtbot: QtBot, pane_context: PaneContext, tmp_path: Path, qt_loop: asyncio.AbstractEventLoop
) -> None:
    bridge = EventBridge(pane_context.service.events)
    window = MainWindow(
        pane_context.service, events=bridge, settings=ShellSettings.at(tmp_path / "first.ini")
    )
    qtbot.addWidget(window)
    assert window.current_key == "overview"
    assert window.rail.item(0).text() == "Overview"
    window.shutdown()
    bridge.close()


def test_cards_say_what_is_there_and_link_to_their_panes(
    qtbot: QtBot,
    qt_loop: asyncio.AbstractEventLoop,
    pane_context: PaneContext,
    navigator: RecordingNavigator,
    tmp_path: Path,
) -> None:
    service = pane_context.service
    home = tmp_path / "home"
    locations = Locations.from_env({"HOME": str(home)})
    apply(claude_code.plan_install(locations, claude_code.Options("http://127.0.0.1:3850")))
    service.memories.remember(RememberRequest(content="billing runs on Postgres 16"), ELSEWHERE)
    old = RememberRequest(content="an old decision", created_at="2025-01-02T03:04:05.000Z")
    service.memories.remember(old, Actor())
    service.transcripts.capture("default", "cc-billing", "claude-code", TURNS)
    pane = open_pane(qtbot, pane_context, qt_loop, home)
    cards = {key: (card.value.text(), card.detail.text()) for key, card in pane.cards.items()}
    assert cards["memories"] == ("2 memories", "1 today")
    assert cards["sessions"] == ("1 session", "1 today")
    agents_value, agents_detail = cards["agents"]
    assert agents_value == "1 of 3 connected"
    assert "● Claude Code: connected · last session just now" in agents_detail.splitlines()
    assert "○ Codex: not installed" in agents_detail.splitlines()
    assert cards["daemon"][0] == "Running"
    assert cards["dreaming"][0] == "No pass yet" and "off" in cards["dreaming"][1]
    assert cards["queue"] == ("Ready", "nothing waiting · 0 done")
    assert pane.state_label.text() == "Ready"
    # The newest memories open the feed, in words, with who stored them.
    assert pane.feed.texts()[0] == "Claude Code remembered “billing runs on Postgres 16”"
    pane.cards["memories"].link.linkActivated.emit("memories")
    pane.cards["dreaming"].link.linkActivated.emit("dreaming")
    pane.feed.line_chosen.emit(pane.feed.item(0).data(256))
    assert [key for key, _ in navigator.panes] == ["memories", "dreaming", "memories"]
    assert navigator.panes[-1][1]["memory_id"]


def test_the_feed_says_live_events_in_words_and_skips_bookkeeping(
    qtbot: QtBot,
    qt_loop: asyncio.AbstractEventLoop,
    pane_context: PaneContext,
    tmp_path: Path,
) -> None:
    service = pane_context.service
    pane = open_pane(qtbot, pane_context, qt_loop, tmp_path / "home")
    assert pane.feed.count() == 0 and pane.feed_empty.isVisibleTo(pane)
    service.events.publish(StatusChanged(key="workers"))  # bookkeeping: no line
    service.memories.remember(
        RememberRequest(content="Use idempotency keys on every card retry"), ELSEWHERE
    )
    service.documents.submit(
        "default", DocumentRequest("text", content="runbook text", title="Billing runbook")
    )
    service.transcripts.capture("default", "cc-1", "claude-code", TURNS, complete=True)
    settle(qt_loop, pane_context, until=lambda: pane.feed.count() >= 2)
    texts = pane.feed.texts()
    assert "Claude Code remembered “Use idempotency keys on every card retry”" in texts
    assert "Claude Code finished a session" in texts
    assert not any("." in text.split(" ")[0] for text in texts)  # no `memory.created` names
    assert not pane.feed_empty.isVisibleTo(pane)
    settle(qt_loop, pane_context, until=lambda: pane.cards["memories"].value.text() == "1 memory")


def test_a_hidden_pane_keeps_events_and_describes_them_when_shown(
    qtbot: QtBot,
    qt_loop: asyncio.AbstractEventLoop,
    pane_context: PaneContext,
    tmp_path: Path,
) -> None:
    pane = open_pane(qtbot, pane_context, qt_loop, tmp_path / "home")
    pane.hide()
    pane.deactivated()
    for n in range(30):  # a burst: twenty described, the rest counted
        pane_context.service.memories.remember(RememberRequest(content=f"fact {n}"), Actor())
    qt_loop.run_until_complete(asyncio.sleep(0.5))
    assert pane.feed.count() == 0  # nothing read while hidden
    pane.show()
    pane.activated()
    settle(qt_loop, pane_context, until=lambda: pane.feed.count() >= 21)
    texts = pane.feed.texts()
    assert texts[0] == "… and 10 more memories stored"
    assert "You remembered “fact 19”" in texts


def test_day_start_is_the_local_midnight_in_stored_form() -> None:
    from signet_desktop.ui.overview_report import day_start

    stamp = day_start(datetime(2026, 12, 6, 15, 0, tzinfo=UTC))
    assert stamp.endswith(".000Z") and stamp <= "2026-12-06T15:00:00.000Z"
    assert stamp > "2026-12-05T09:00:00.000Z"


def test_activated_before_the_window_shows_it_reads_once_shown(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext, tmp_path: Path
) -> None:
    """The first pane is activated while the window is still hidden (the launch, the
    screenshot script): it must read when it is shown, not wait for an event."""
    pane = OverviewPane(pane_context)
    pane.env = {"HOME": str(tmp_path / "home")}
    qtbot.addWidget(pane)
    pane.activated()
    qt_loop.run_until_complete(asyncio.sleep(0.3))
    assert pane.report is None  # hidden: nothing read
    pane.show()
    settle(qt_loop, pane_context, until=lambda: pane.report is not None)
    assert pane.state_label.text() == "Ready"
