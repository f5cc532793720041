"""Wait, boundedly, until a window has painted once: start-up work after it no longer hides it.

`show()` only asks the window system for a window; the paint comes from the event loop. The
desktop shell processes events here until the window's first paint (or a timeout: a window
manager that never maps it must not stall start-up), then builds the HTTP app and starts the
daemon's warm-ups, which would otherwise keep the GUI thread busy before anything is on screen.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QEvent, QEventLoop, QObject
from PySide6.QtWidgets import QApplication, QWidget

FIRST_PAINT_TIMEOUT_S = 1.0
_SLICE_MS = 20


class PaintWatch(QObject):
    """Notes the first paint of `window` or of any widget inside it."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.window = window
        self.painted = False
        app = QApplication.instance()
        assert app is not None
        app.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.Paint
            and isinstance(watched, QWidget)
            and watched.window() is self.window
        ):
            self.painted = True
            self.stop()
        return False

    def stop(self) -> None:
        app = QApplication.instance()
        if app is not None:
            app.removeEventFilter(self)


def wait_for_first_paint(window: QWidget, timeout_s: float = FIRST_PAINT_TIMEOUT_S) -> bool:
    """Process events until `window` painted (True) or `timeout_s` passed (False)."""
    app = QApplication.instance()
    if app is None or not window.isVisible():
        return False
    watch = PaintWatch(window)
    deadline = time.monotonic() + timeout_s
    try:
        while not watch.painted and time.monotonic() < deadline:
            app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, _SLICE_MS)
    finally:
        watch.stop()
        watch.deleteLater()
    return watch.painted
