"""Background start-up tasks: they wait for the server, run in threads, report their state."""

from __future__ import annotations

import threading

import pytest

from signet_desktop.daemon.startup import StartupTasks
from signet_desktop.service.status import StatusBoard


def test_tasks_wait_for_start_then_report_done_and_failed() -> None:
    board = StatusBoard()
    tasks = StartupTasks(board)
    ran = threading.Event()

    def boom() -> None:
        raise OSError("model file missing")

    tasks.add("model", ran.set)
    tasks.add("broken", boom)
    assert board.snapshot()["startup"] == {
        "model": {"state": "pending", "error": None, "durationMs": None},
        "broken": {"state": "pending", "error": None, "durationMs": None},
    }
    assert not ran.wait(0.05)  # nothing runs before start()
    tasks.start()
    assert tasks.join(10)
    assert ran.is_set()
    view = board.snapshot()["startup"]
    assert view["model"]["state"] == "done"
    assert view["model"]["durationMs"] >= 0
    assert view["broken"] == {
        "state": "failed",
        "error": "OSError: model file missing",
        "durationMs": view["broken"]["durationMs"],
    }


def test_running_state_is_visible_while_the_task_works() -> None:
    board = StatusBoard()
    tasks = StartupTasks(board)
    release = threading.Event()
    entered = threading.Event()

    def slow() -> None:
        entered.set()
        release.wait(10)

    tasks.start()
    tasks.add("slow", slow)  # added after start: runs at once
    assert entered.wait(10)
    assert board.snapshot()["startup"]["slow"]["state"] == "running"
    assert not tasks.join(0.01)
    release.set()
    assert tasks.join(10)
    assert board.snapshot()["startup"]["slow"]["state"] == "done"


def test_duplicate_names_are_refused() -> None:
    tasks = StartupTasks(StatusBoard())
    tasks.add("a", lambda: None)
    with pytest.raises(ValueError, match="already registered"):
        tasks.add("a", lambda: None)
