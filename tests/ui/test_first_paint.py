"""`first_paint`: the desktop starts its heavy work only once the window painted."""

from __future__ import annotations

import asyncio

from PySide6.QtGui import QPaintEvent
from PySide6.QtWidgets import QLabel, QMainWindow
from pytestqt.qtbot import QtBot

from signet_desktop.ui.first_paint import first_paint


class CountingLabel(QLabel):
    def __init__(self) -> None:
        super().__init__("hello")
        self.paints = 0

    def paintEvent(self, event: QPaintEvent) -> None:
        self.paints += 1
        super().paintEvent(event)


def test_returns_once_the_shown_window_has_painted(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop
) -> None:
    window = QMainWindow()
    label = CountingLabel()
    window.setCentralWidget(label)
    qtbot.addWidget(window)
    window.show()
    assert label.paints == 0  # show() alone paints nothing: the event loop does
    assert qt_loop.run_until_complete(first_paint(window, timeout_s=10.0))
    assert label.paints >= 1


def test_tasks_started_before_it_run_on_the_running_loop(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop
) -> None:
    """A pane's first read starts before the wait; it needs a running loop (to_thread)."""
    window = QMainWindow()
    window.setCentralWidget(QLabel("hello"))
    qtbot.addWidget(window)
    read = asyncio.ensure_future(asyncio.to_thread(lambda: 42))
    window.show()
    assert qt_loop.run_until_complete(first_paint(window, timeout_s=10.0))
    assert qt_loop.run_until_complete(read) == 42


def test_a_hidden_window_is_not_waited_for(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop
) -> None:
    window = QMainWindow()
    qtbot.addWidget(window)
    assert not qt_loop.run_until_complete(first_paint(window, timeout_s=10.0))
