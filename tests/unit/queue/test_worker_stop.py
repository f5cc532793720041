"""Stopping a queue worker mid-job: the handler yields between steps and the job resumes later;
work abandoned past the stop budget meets a closed database with one log line, no traceback."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import pytest

from signet_desktop.daemon.workers import WorkerThreads
from signet_desktop.queue import jobs
from signet_desktop.queue.worker import QueueWorker, WorkerSettings, check_stop, run_interruptibly
from signet_desktop.service.events import EventBus
from signet_desktop.service.workers import WorkerDeclaration
from signet_desktop.storage.database import open_database

JOB = "stop_job"
FAST = WorkerSettings(poll_s=0.01)


def test_check_stop_outside_a_worker_does_nothing() -> None:
    check_stop()  # a request thread, a test calling a handler: no worker, no stop


def test_request_stop_interrupts_a_stepping_handler_and_the_job_resumes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = open_database(tmp_path / "q.db", with_vec=False)
    in_step = threading.Event()
    steps: list[int] = []

    def handler(job: jobs.Job) -> dict[str, int]:
        for n in range(10_000):  # bounded steps, checking the stop between them
            check_stop()
            steps.append(n)
            in_step.set()
            threading.Event().wait(0.005)  # one step's work
        return {"steps": len(steps)}

    with db.write() as conn:
        job_id = jobs.enqueue(conn, JOB, agent_id="default")[0].id
    worker = QueueWorker(db, name="q", job_types=(JOB,), handler=handler, settings=FAST)
    host = WorkerThreads([WorkerDeclaration("q", (JOB,), factory=lambda: worker)], EventBus())
    host.start()
    assert in_step.wait(10)
    with caplog.at_level(logging.INFO):
        host.request_stop()  # returns at once; the handler ends at its next step
        assert host.stop(10) is True
    job = jobs.get_job(db.reader(), job_id)
    assert job is not None
    assert (job.status, job.attempts, job.lease_token) == ("pending", 0, None)  # refunded
    assert len(steps) < 10_000
    assert not [r for r in caplog.records if r.exc_info]
    assert any("interrupted at shutdown" in r.getMessage() for r in caplog.records)

    again = QueueWorker(db, name="q", job_types=(JOB,), handler=lambda j: {"ok": 1})
    assert again.run_once()  # the next start runs it to the end
    assert jobs.counts(db.reader(), JOB)["completed"] == 1
    db.close()


def test_a_handler_abandoned_past_the_budget_meets_the_closed_database_quietly(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = open_database(tmp_path / "q.db", with_vec=False)
    started, gate, ended = threading.Event(), threading.Event(), threading.Event()

    def handler(job: jobs.Job) -> None:
        started.set()
        gate.wait(10)  # one long step, past the stop budget
        try:
            db.reader().execute("SELECT 1")  # its next step: the database is closed by now
        finally:
            ended.set()

    with db.write() as conn:
        jobs.enqueue(conn, JOB, agent_id="default")
    worker = QueueWorker(db, name="q", job_types=(JOB,), handler=handler, settings=FAST)
    host = WorkerThreads([WorkerDeclaration("q", (JOB,), factory=lambda: worker)], EventBus())
    host.start()
    assert started.wait(10)
    with caplog.at_level(logging.INFO):
        assert host.stop(0.05) is False  # the budget ran out: lease released, not waited for
        db.close()
        gate.set()
        assert ended.wait(10)
        deadline = time.monotonic() + 10
        while host.snapshot()["q"].state != "stopped":  # its thread ran to its end
            assert time.monotonic() < deadline
            threading.Event().wait(0.01)
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records]
    said = [r.getMessage() for r in caplog.records]
    assert sum("did not stop" in m for m in said) == 1, said  # the host released its lease
    assert sum("abandoned at shutdown" in m for m in said) == 1, said  # and its late call


def test_run_interruptibly_off_a_worker_is_a_plain_call() -> None:
    caller = threading.current_thread()
    assert run_interruptibly(lambda: threading.current_thread() is caller) is True
    with pytest.raises(ValueError, match="bad batch"):
        run_interruptibly(lambda: (_ for _ in ()).throw(ValueError("bad batch")))


def test_a_worker_stops_without_waiting_for_an_uninterruptible_call(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """One long provider call (an embedder batch on a busy machine) does not hold the stop:
    the job goes back within the budget, the call ends in the background, nothing is lost."""
    db = open_database(tmp_path / "q.db", with_vec=False)
    in_call, release, call_ended = threading.Event(), threading.Event(), threading.Event()
    results: list[str] = []

    def slow_call() -> str:
        in_call.set()
        release.wait(30)  # native code that cannot see the stop
        call_ended.set()
        return "vectors"

    def handler(job: jobs.Job) -> None:
        results.append(run_interruptibly(slow_call))  # never reached: the worker stops first

    with db.write() as conn:
        job_id = jobs.enqueue(conn, JOB, agent_id="default")[0].id
    worker = QueueWorker(db, name="q", job_types=(JOB,), handler=handler, settings=FAST)
    host = WorkerThreads([WorkerDeclaration("q", (JOB,), factory=lambda: worker)], EventBus())
    host.start()
    assert in_call.wait(10)
    with caplog.at_level(logging.INFO):
        assert host.stop(10) is True  # within the budget although the call still runs
    assert not call_ended.is_set()
    job = jobs.get_job(db.reader(), job_id)
    assert job is not None
    assert (job.status, job.attempts, job.lease_token) == ("pending", 0, None)
    assert any("interrupted at shutdown" in r.getMessage() for r in caplog.records)
    release.set()
    assert call_ended.wait(10)
    assert results == []  # its result was dropped
    db.close()


def test_run_interruptibly_on_a_worker_returns_and_raises_as_the_call_does(tmp_path: Path) -> None:
    db = open_database(tmp_path / "q.db", with_vec=False)
    seen: list[object] = []

    def handler(job: jobs.Job) -> dict[str, str]:
        worker_thread = threading.current_thread()
        seen.append(run_interruptibly(lambda: threading.current_thread() is not worker_thread))
        try:
            run_interruptibly(lambda: (_ for _ in ()).throw(KeyError("missing")))
        except KeyError as exc:
            seen.append(exc.args[0])
        return {"done": "yes"}

    with db.write() as conn:
        jobs.enqueue(conn, JOB, agent_id="default")
    worker = QueueWorker(db, name="q", job_types=(JOB,), handler=handler, settings=FAST)
    assert worker.step(threading.Event()).did_work  # as the worker loop runs it, stop unset
    assert seen == [True, "missing"]  # the call ran on its own thread; its error came back
    assert jobs.counts(db.reader(), JOB)["completed"] == 1
    db.close()
