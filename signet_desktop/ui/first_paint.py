"""Wait, boundedly, until a window has painted once: start-up work after it no longer hides it.

`show()` only asks the window system for a window; the paint comes from the event loop. The
desktop shell awaits the window's first paint on its (running) qasync loop, or a timeout (a
window manager that never maps it must not stall start-up), then builds the HTTP app and starts
the daemon's warm-ups, which would otherwise keep the GUI thread busy before anything is on
screen. Awaited on the running loop, not by processing events before it runs: tasks the window
started (a pane's first read) need a running loop.
"""

from __future__ import annotations

import asyncio
import contextlib

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QWidget

FIRST_PAINT_TIMEOUT_S = 1.0


class PaintWatch(QObject):
    """Sets `painted` (a future) at the first paint of `window` or of a widget inside it."""

    def __init__(self, window: QWidget, painted: asyncio.Future[None]) -> None:
        super().__init__(window)
        self.window = window
        self.painted = painted
        app = QApplication.instance()
        assert app is not None
        app.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.Paint
            and isinstance(watched, QWidget)
            and watched.window() is self.window
            and not self.painted.done()
        ):
            self.painted.set_result(None)
        return False

    def stop(self) -> None:
        app = QApplication.instance()
        if app is not None:
            app.removeEventFilter(self)


async def first_paint(window: QWidget, timeout_s: float = FIRST_PAINT_TIMEOUT_S) -> bool:
    """True once `window` painted; False after `timeout_s`, or at once if it is hidden."""
    if not window.isVisible():
        return False
    painted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    watch = PaintWatch(window, painted)
    try:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(painted, timeout_s)
    finally:
        watch.stop()
        watch.deleteLater()
    return painted.done() and not painted.cancelled()
