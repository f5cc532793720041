"""The minimal window: status labels and recall, driven through the real facade."""

from __future__ import annotations

import asyncio

import pytest
from pytestqt.qtbot import QtBot

from signet_desktop.domain.memory import Actor
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories import RememberRequest
from signet_desktop.ui.main_window import MainWindow

pytestmark = pytest.mark.gui


def make_window(qtbot: QtBot, service: SignetService, *, hide_on_close: bool) -> MainWindow:
    window = MainWindow(service, "http://127.0.0.1:3850", "/tmp/ws", hide_on_close=hide_on_close)
    qtbot.addWidget(window)
    return window


def test_status_labels_show_count_and_vectors(
    qtbot: QtBot, service: SignetService, qt_loop: asyncio.AbstractEventLoop
) -> None:
    service.memories.remember(RememberRequest(content="Invoices live in PostgreSQL."), Actor())
    service.memories.remember(RememberRequest(content="The frontend is Svelte."), Actor())
    service.status_board.set("startup", {"embedder": {"state": "running", "error": None}})
    window = make_window(qtbot, service, hide_on_close=False)
    assert window.url_label.text() == "http://127.0.0.1:3850"
    qt_loop.run_until_complete(window.refresh_status())
    assert window.count_label.text() == "2"
    assert window.vector_label.text().startswith("sqlite-vec v")
    assert window.state_label.text() == "ready (warming up: embedder)"


def test_recall_lists_hits_without_blocking_the_loop(
    qtbot: QtBot, service: SignetService, qt_loop: asyncio.AbstractEventLoop
) -> None:
    service.memories.remember(
        RememberRequest(content="[billing]: Invoices live in PostgreSQL 16."), Actor()
    )
    service.memories.remember(RememberRequest(content="The frontend is Svelte."), Actor())
    window = make_window(qtbot, service, hide_on_close=False)
    ticks = 0

    async def heartbeat() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    async def scenario() -> None:
        beat = asyncio.ensure_future(heartbeat())
        await window.run_recall("  where do invoices live  ")
        beat.cancel()

    qt_loop.run_until_complete(scenario())
    assert window.results.count() == 1
    line = window.results.item(0).text()
    assert "Invoices live in PostgreSQL 16." in line and "[billing]" in line
    why = window.results.item(0).toolTip()
    assert why.startswith("score ") and "keyword #1" in why  # why it ranked, on hover
    assert window.message_label.text().startswith("1 memory in ")
    assert window.search_button.isEnabled()
    assert ticks > 0  # the loop kept running while recall ran in a worker thread


def test_empty_query_asks_for_text(
    qtbot: QtBot, service: SignetService, qt_loop: asyncio.AbstractEventLoop
) -> None:
    window = make_window(qtbot, service, hide_on_close=False)
    qt_loop.run_until_complete(window.run_recall("   "))
    assert window.results.count() == 0
    assert window.message_label.text() == "Type something to recall."


def test_search_box_enter_runs_recall(
    qtbot: QtBot, service: SignetService, qt_loop: asyncio.AbstractEventLoop
) -> None:
    service.memories.remember(RememberRequest(content="Deploys go through Kamal."), Actor())
    window = make_window(qtbot, service, hide_on_close=False)
    window.search_box.setText("kamal")

    async def press_enter() -> None:
        finished = asyncio.Event()
        window.recall_finished.connect(finished.set)
        window.search_box.returnPressed.emit()
        await asyncio.wait_for(finished.wait(), 10)

    qt_loop.run_until_complete(press_enter())
    assert window.results.count() == 1


def test_close_hides_with_a_tray_and_quits_without(qtbot: QtBot, service: SignetService) -> None:
    with_tray = make_window(qtbot, service, hide_on_close=True)
    with_tray.show()
    quits: list[bool] = []
    with_tray.quit_requested.connect(lambda: quits.append(True))
    with_tray.close()
    assert not with_tray.isVisible() and quits == []

    alone = make_window(qtbot, service, hide_on_close=False)
    alone.show()
    with qtbot.waitSignal(alone.quit_requested, timeout=1000):
        alone.close()


def test_status_follows_the_event_bus_without_polling(
    qtbot: QtBot, service: SignetService, qt_loop: asyncio.AbstractEventLoop
) -> None:
    """A memory remembered on another thread shows in the count: the bridge pushed it."""
    window = make_window(qtbot, service, hide_on_close=False)

    async def scenario() -> None:
        window.start_refreshing()
        await asyncio.sleep(0.3)  # the first refresh
        assert window.count_label.text() == "0"
        await asyncio.to_thread(
            service.memories.remember, RememberRequest(content="pushed, not polled"), Actor()
        )
        for _ in range(100):
            if window.count_label.text() == "1":
                break
            await asyncio.sleep(0.05)
        window.stop_refreshing()

    qt_loop.run_until_complete(scenario())
    assert window.count_label.text() == "1"


def test_a_query_without_hits_says_no_match(
    qtbot: QtBot, service: SignetService, qt_loop: asyncio.AbstractEventLoop
) -> None:
    service.memories.remember(RememberRequest(content="The frontend is Svelte."), Actor())
    window = make_window(qtbot, service, hide_on_close=False)
    qt_loop.run_until_complete(window.run_recall("kubernetes ingress"))
    assert window.results.count() == 0
    assert window.message_label.text().startswith("No memory matched")
