"""The Qt event bridge delivers bus events on the GUI thread, whatever thread published."""

from __future__ import annotations

import threading

import pytest
from pytestqt.qtbot import QtBot

from signet_desktop.domain.events import Event, WorkerStateChanged
from signet_desktop.service.events import EventBus
from signet_desktop.ui.event_bridge import EventBridge

pytestmark = pytest.mark.gui


def test_events_from_a_worker_thread_arrive_on_the_gui_thread(qtbot: QtBot) -> None:
    bus = EventBus()
    bridge = EventBridge(bus)
    seen: list[tuple[str, bool]] = []

    def on_event(event: Event) -> None:
        seen.append((event.kind, threading.current_thread() is threading.main_thread()))

    bridge.event_published.connect(on_event)
    with qtbot.waitSignal(bridge.event_published, timeout=5000):
        worker = threading.Thread(
            target=bus.publish, args=(WorkerStateChanged(worker="w", state="running"),)
        )
        worker.start()
        worker.join()
    assert seen == [("worker.state", True)]
    bridge.close()
    bus.publish(WorkerStateChanged(worker="w", state="stopped"))
    assert bus.stats().handlers == 0
