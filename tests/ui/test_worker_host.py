"""The QThread worker host: a real queue worker in a QThread, started, paused, resumed, stopped."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QThread
from pytestqt.qtbot import QtBot

from signet_desktop.domain.events import Event, WorkerStateChanged
from signet_desktop.queue import jobs
from signet_desktop.queue.worker import QueueWorker, WorkerSettings
from signet_desktop.service.events import EventBus
from signet_desktop.service.workers import WorkerDeclaration
from signet_desktop.storage.database import Database, open_database
from signet_desktop.ui import worker_host
from signet_desktop.ui.worker_host import QtWorkerHost

pytestmark = pytest.mark.gui

JOB = "test_job"


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(tmp_path / "qt.db", with_vec=False)
    yield database
    database.close()


def wait_for(check: Callable[[], bool], timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.005)


def test_jobs_run_in_a_qthread_and_pause_resume_stop(qtbot: QtBot, db: Database) -> None:
    threads: list[str] = []
    gate = threading.Event()

    def handler(job: jobs.Job) -> None:
        threads.append(QThread.currentThread().objectName())  # ours are named, adopted ones not
        gate.wait(10)

    for _ in range(2):
        with db.write() as conn:
            jobs.enqueue(conn, JOB, agent_id="default")
    worker = QueueWorker(
        db, name="q", job_types=(JOB,), handler=handler, settings=WorkerSettings(poll_s=0.01)
    )
    bus = EventBus()
    seen: list[Event] = []
    bus.connect(seen.append)
    host = QtWorkerHost([WorkerDeclaration("q", (JOB,), factory=lambda: worker)], bus)
    host.start()
    wait_for(lambda: len(threads) == 1)
    host.pause()
    gate.set()  # the job in progress finishes; no new one starts while paused
    wait_for(lambda: host.snapshot()["q"].state == "paused")
    assert jobs.counts(db.reader(), JOB)["completed"] == 1
    assert jobs.counts(db.reader(), JOB)["pending"] == 1
    host.resume()
    wait_for(lambda: jobs.counts(db.reader(), JOB)["completed"] == 2)
    assert host.stop(10)
    assert host.snapshot()["q"].state == "stopped"
    assert threads == ["worker-q", "worker-q"]
    states = [e.state for e in seen if isinstance(e, WorkerStateChanged)]
    assert states == ["pending", "running", "paused", "running", "stopped"]


def test_stop_never_leaves_a_qthread_running(qtbot: QtBot, db: Database) -> None:
    """A job that outlives the stop timeout is waited for: Qt aborts on a running QThread."""
    started, gate = threading.Event(), threading.Event()

    def handler(job: jobs.Job) -> None:
        started.set()
        gate.wait(10)

    with db.write() as conn:
        jobs.enqueue(conn, JOB, agent_id="default")
    worker = QueueWorker(
        db, name="q", job_types=(JOB,), handler=handler, settings=WorkerSettings(poll_s=0.01)
    )
    host = QtWorkerHost([WorkerDeclaration("q", (JOB,), factory=lambda: worker)], EventBus())
    host.start()
    wait_for(started.is_set)
    threading.Timer(0.5, gate.set).start()  # the job ends well after the stop's timeout
    assert host.stop(0.05) is False  # it did not end in time: its lease was given back
    assert not any(t.isRunning() for t in host._threads)


def test_a_thread_still_in_a_long_call_is_kept_not_waited_for(qtbot: QtBot, db: Database) -> None:
    """Past the stop budget and the linger, the quit goes on: the QThread is kept referenced
    (never destroyed while it runs) and its job was given back to the queue."""
    started, gate = threading.Event(), threading.Event()

    def handler(job: jobs.Job) -> None:
        started.set()
        gate.wait(30)  # one native call that does not look at the stop

    with db.write() as conn:
        jobs.enqueue(conn, JOB, agent_id="default")
    worker = QueueWorker(
        db, name="q", job_types=(JOB,), handler=handler, settings=WorkerSettings(poll_s=0.01)
    )
    host = QtWorkerHost([WorkerDeclaration("q", (JOB,), factory=lambda: worker)], EventBus())
    host.start()
    wait_for(started.is_set)
    assert host.stop(0.05) is False
    (thread,) = host._threads
    assert thread.isRunning() and thread in worker_host._LEFT_RUNNING
    assert jobs.counts(db.reader(), JOB)["pending"] == 1  # given back: the next start runs it
    gate.set()
    assert thread.wait(10_000)
