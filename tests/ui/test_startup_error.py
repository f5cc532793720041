"""The startup-error dialog closes on SIGTERM or Ctrl-C instead of waiting for OK."""

from __future__ import annotations

import os
import signal
import time

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from signet_desktop.ui.startup_error import show_startup_error

pytestmark = pytest.mark.gui


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_closes_the_dialog(qapp: QApplication, sig: signal.Signals) -> None:
    before = signal.getsignal(sig)

    def send_signal() -> None:
        os.kill(os.getpid(), sig)
        # If the signal is not handled the dialog would wait for OK: close it late, and fail.
        QTimer.singleShot(5000, close_any_dialog)

    def close_any_dialog() -> None:
        for widget in qapp.topLevelWidgets():
            if isinstance(widget, QMessageBox):
                widget.done(0)

    started = time.monotonic()
    show_startup_error("did not start", "configuration error", on_shown=send_signal)
    assert time.monotonic() - started < 3
    assert signal.getsignal(sig) is before
