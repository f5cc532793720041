"""The log bridge delivers ring lines as a Qt signal and lets go of the ring when it is gone."""

from __future__ import annotations

import logging
import threading

import pytest
import shiboken6
from PySide6.QtWidgets import QApplication

from signet_desktop.daemon.logring import LogLine, LogRing
from signet_desktop.ui.log_bridge import LogBridge

pytestmark = pytest.mark.gui


def record(message: str) -> logging.LogRecord:
    return logging.LogRecord("signet_desktop.test", logging.INFO, __file__, 1, message, (), None)


def test_lines_from_another_thread_arrive_on_the_gui_thread(qapp: QApplication) -> None:
    ring = LogRing()
    bridge = LogBridge(ring)
    heard: list[tuple[str, bool]] = []
    bridge.line_logged.connect(
        lambda line: heard.append(
            (line.message, threading.current_thread() is threading.main_thread())
        )
    )
    worker = threading.Thread(target=ring.handle, args=(record("from a worker"),))
    worker.start()
    worker.join()
    assert heard == []  # queued for the GUI thread, not delivered on the worker
    qapp.processEvents()
    assert heard == [("from a worker", True)]
    bridge.close()
    ring.handle(record("after close"))
    qapp.processEvents()
    assert len(heard) == 1


def test_a_deleted_bridge_unsubscribes_instead_of_failing(qapp: QApplication) -> None:
    ring = LogRing()
    bridge = LogBridge(ring)
    shiboken6.delete(bridge)  # the pane went away without calling close()
    ring.handle(record("nobody listens"))  # must not raise or print a logging error
    assert ring.lines()[-1].message == "nobody listens"
    assert ring.listener_count == 0  # the bridge let go
    unused: list[LogLine] = []
    ring.subscribe(unused.append)
    ring.handle(record("still works"))
    assert [line.message for line in unused] == ["still works"]
