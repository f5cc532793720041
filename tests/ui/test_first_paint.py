"""`wait_for_first_paint`: the desktop starts its heavy work only once the window painted."""

from __future__ import annotations

from PySide6.QtGui import QPaintEvent
from PySide6.QtWidgets import QLabel, QMainWindow
from pytestqt.qtbot import QtBot

from signet_desktop.ui.first_paint import wait_for_first_paint


class CountingLabel(QLabel):
    def __init__(self) -> None:
        super().__init__("hello")
        self.paints = 0

    def paintEvent(self, event: QPaintEvent) -> None:
        self.paints += 1
        super().paintEvent(event)


def test_returns_once_the_shown_window_has_painted(qtbot: QtBot) -> None:
    window = QMainWindow()
    label = CountingLabel()
    window.setCentralWidget(label)
    qtbot.addWidget(window)
    window.show()
    assert label.paints == 0  # show() alone paints nothing: the event loop does
    assert wait_for_first_paint(window, timeout_s=10.0)
    assert label.paints >= 1


def test_a_hidden_window_is_not_waited_for(qtbot: QtBot) -> None:
    window = QMainWindow()
    qtbot.addWidget(window)
    assert not wait_for_first_paint(window, timeout_s=10.0)
