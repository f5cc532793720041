"""The dialog that says why the app did not start, and still quits on Ctrl-C or SIGTERM.

A modal dialog runs Qt's own event loop in C, so Python signal handlers would wait until the
user clicks OK: a `kill` from a terminal or a session manager would hang. A short timer lets
Python run between Qt events, and SIGINT/SIGTERM close the dialog.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QMessageBox, QWidget

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
SIGNAL_POLL_MS = 200  # how soon a signal closes the dialog


def show_startup_error(
    title: str,
    message: str,
    *,
    parent: QWidget | None = None,
    on_shown: Callable[[], Any] | None = None,
) -> None:
    """Show `message` until OK is clicked or a stop signal arrives."""
    box = QMessageBox(QMessageBox.Icon.Critical, title, message, QMessageBox.StandardButton.Ok)
    if parent is not None:
        box.setParent(parent)

    def close(signum: int, frame: object) -> None:
        box.done(0)

    previous = {sig: signal.signal(sig, close) for sig in STOP_SIGNALS}
    tick = QTimer(box)
    tick.timeout.connect(lambda: None)  # returning to Python is what runs the handlers
    tick.start(SIGNAL_POLL_MS)
    if on_shown is not None:
        QTimer.singleShot(0, on_shown)
    try:
        box.exec()
    finally:
        tick.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
