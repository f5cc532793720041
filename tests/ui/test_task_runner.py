"""`TaskRunner.call` off the GUI thread, including a first step Qt delivers outside the loop.

qasync's `run_until_complete` ends with one more `processEvents` after the loop stopped (the
tests' `settle` between two checks, the app's last run at quit): a task spawned just before
starts there, with no running loop. Its call must still run and report, not fail with
"no running event loop" (a Transcripts refresh lost that way left the list empty).
"""

from __future__ import annotations

import asyncio
import threading

from PySide6.QtCore import QEventLoop
from PySide6.QtWidgets import QApplication

from signet_desktop.ui.tasks import TaskRunner


def test_a_call_runs_in_a_thread_and_reports_on_the_loop(
    qapp: QApplication, qt_loop: asyncio.AbstractEventLoop
) -> None:
    tasks = TaskRunner()
    results: list[tuple[str, bool]] = []
    tasks.call(
        threading.current_thread,
        done=lambda t: results.append((t.name, t is threading.main_thread())),
    )
    qt_loop.run_until_complete(tasks.wait_idle())
    ((name, on_main),) = results
    assert not on_main and name != threading.main_thread().name


def test_a_first_step_delivered_outside_the_running_loop_still_runs_the_call(
    qapp: QApplication, qt_loop: asyncio.AbstractEventLoop
) -> None:
    tasks = TaskRunner()
    done: list[int] = []
    errors: list[BaseException] = []
    tasks.call(lambda: 41 + 1, done=done.append, failed=errors.append)
    # What qasync's run_until_complete does once its loop stopped: Qt delivers the task's
    # first step with no running loop.
    qapp.eventDispatcher().processEvents(QEventLoop.ProcessEventsFlag.AllEvents)
    qt_loop.run_until_complete(tasks.wait_idle())
    assert errors == [] and done == [42]
