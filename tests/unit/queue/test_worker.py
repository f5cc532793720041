"""The generic queue worker on a real database: retries, dead letters, stale and lost leases."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from signet_desktop.domain.events import Event, JobCompleted, JobDead, JobFailed, JobLeased
from signet_desktop.queue import jobs
from signet_desktop.queue.worker import IdleStep, QueueWorker, WorkerSettings
from signet_desktop.storage.database import Database, open_database
from signet_desktop.storage.guard import in_write_transaction

JOB = "test_job"
FAST = WorkerSettings(poll_s=0.01, max_backoff_s=0.08, retry_in_s=lambda attempts: 0.0)


class Recorder:
    """An event sink that keeps what it was given."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def publish(self, event: Event) -> None:
        self.events.append(event)

    def kinds(self) -> list[str]:
        return [e.kind for e in self.events]


class ProviderDown(Exception):
    """Stands in for a provider's "unavailable" error."""


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(tmp_path / "q.db", with_vec=False)
    yield database
    database.close()


def enqueue(db: Database, job_type: str = JOB, **kw: Any) -> jobs.Job:
    with db.write() as conn:
        job, _ = jobs.enqueue(conn, job_type, agent_id="default", **kw)
    return job


def get(db: Database, job_id: str) -> jobs.Job:
    job = jobs.get_job(db.reader(), job_id)
    assert job is not None
    return job


def worker(db: Database, handler: Any, **kw: Any) -> QueueWorker:
    kw.setdefault("settings", FAST)
    return QueueWorker(db, name="test", job_types=(JOB,), handler=handler, **kw)


def test_a_job_runs_outside_any_transaction_and_completes(db: Database) -> None:
    seen: list[bool] = []

    def handler(job: jobs.Job) -> Mapping[str, Any]:
        seen.append(in_write_transaction())
        return {"echo": job.payload["n"]}

    sink = Recorder()
    job = enqueue(db, payload={"n": 7})
    assert worker(db, handler, events=sink).run_once()
    done = get(db, job.id)
    assert (done.status, done.attempts, done.result) == ("completed", 1, '{"echo": 7}')
    assert seen == [False]
    assert sink.kinds() == ["job.leased", "job.completed"]
    leased, completed = sink.events
    assert isinstance(leased, JobLeased) and leased.attempt == 1 and leased.worker == "test"
    assert isinstance(completed, JobCompleted) and completed.job_id == job.id


def test_a_raising_handler_is_retried_with_backoff_then_dead(db: Database) -> None:
    calls: list[int] = []

    def handler(job: jobs.Job) -> None:
        calls.append(job.attempts)
        raise ValueError("bad payload")

    sink = Recorder()
    backoffs: list[int] = []

    def retry_in(attempts: int) -> float:
        backoffs.append(attempts)
        return 0.0 if attempts < 2 else 3600.0

    settings = WorkerSettings(poll_s=0.01, retry_in_s=retry_in)
    job = enqueue(db, max_attempts=3)
    runner = worker(db, handler, events=sink, settings=settings)
    assert runner.run_once() and runner.run_once()
    waiting = get(db, job.id)
    assert (waiting.status, waiting.attempts) == ("pending", 2)
    assert waiting.error == "ValueError: bad payload"
    assert waiting.run_after is not None and waiting.run_after > jobs.utc_now()
    assert not runner.run_once(), "a job in its backoff is not eligible"
    with db.write() as conn:  # the backoff has passed
        conn.execute("UPDATE memory_jobs SET run_after = NULL WHERE id = :id", {"id": job.id})
    assert runner.run_once()
    dead = get(db, job.id)
    assert (dead.status, dead.attempts, calls, backoffs) == ("dead", 3, [1, 2, 3], [1, 2, 3])
    assert not runner.run_once(), "a dead job never runs again"
    failed = [e for e in sink.events if isinstance(e, JobFailed)]
    assert [e.attempt for e in failed] == [1, 2]
    assert failed[1].retry_at == waiting.run_after
    [dead_event] = [e for e in sink.events if isinstance(e, JobDead)]
    assert dead_event.error == "ValueError: bad payload"


def test_the_default_backoff_is_bounded() -> None:
    delays = [jobs.backoff_seconds(n) for n in range(1, 12)]
    assert delays[:3] == [30.0, 60.0, 120.0]
    assert max(delays) == jobs.BACKOFF_MAX_S


def test_a_hung_handler_is_released_never_run_twice_and_its_late_result_refused(
    db: Database,
) -> None:
    started, release = threading.Event(), threading.Event()
    running = 0
    most = 0
    lock = threading.Lock()

    def handler(job: jobs.Job) -> Mapping[str, Any]:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        try:
            started.set()
            release.wait(10)
            return {"by": threading.current_thread().name}
        finally:
            with lock:
                running -= 1

    short = WorkerSettings(poll_s=0.01, lease_ms=50, stale_check_s=0.0)
    job = enqueue(db)
    first, second = worker(db, handler, settings=short), worker(db, handler, settings=short)
    outcome: list[Any] = []
    thread = threading.Thread(target=lambda: outcome.append(first.step()), name="first")
    thread.start()
    assert started.wait(10)
    time.sleep(0.1)  # past the 50 ms lease
    assert second.release_stale().released == 1
    assert get(db, job.id).status == "pending"
    assert not second.run_once(), "a job whose handler still runs here is not leased again"
    release.set()
    thread.join(10)
    assert outcome[0].status == "lost"
    assert get(db, job.id).status == "pending", "the late completion was refused"
    started.clear()
    assert second.run_once()  # now it runs again, once
    assert get(db, job.id).status == "completed" and most == 1


def test_two_workers_never_hold_the_same_job(db: Database) -> None:
    count = 150
    ids = {enqueue(db, payload={"n": i}).id for i in range(count)}
    handled: list[str] = []
    in_flight: set[str] = set()
    clash: list[str] = []
    lock = threading.Lock()

    def handler(job: jobs.Job) -> None:
        with lock:
            if job.id in in_flight:
                clash.append(job.id)
            in_flight.add(job.id)
        time.sleep(0.0005)
        with lock:
            in_flight.discard(job.id)
            handled.append(job.id)

    workers = [worker(db, handler) for _ in range(3)]
    stop = threading.Event()
    threads = [threading.Thread(target=w.run_forever, args=(stop,)) for w in workers]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 30
    while jobs.counts(db.reader(), JOB)["completed"] < count and time.monotonic() < deadline:
        time.sleep(0.02)
    stop.set()
    for thread in threads:
        thread.join(10)
    assert clash == []
    assert sorted(handled) == sorted(ids), "every job ran exactly once"
    assert jobs.counts(db.reader(), JOB)["completed"] == count


def test_a_stop_before_the_handler_starts_gives_the_job_back(db: Database) -> None:
    calls: list[str] = []
    job = enqueue(db)
    stop = threading.Event()
    stop.set()
    outcome = worker(db, lambda j: calls.append(j.id)).run_job(stop)
    assert outcome is not None and outcome.status == "released"
    back = get(db, job.id)
    assert (back.status, back.attempts, back.lease_token, calls) == ("pending", 0, None, [])


def test_release_leases_gives_back_a_stuck_job_and_refuses_its_result(db: Database) -> None:
    started, release = threading.Event(), threading.Event()

    def handler(job: jobs.Job) -> None:
        started.set()
        release.wait(10)

    job = enqueue(db)
    stuck = worker(db, handler)
    outcome: list[Any] = []
    thread = threading.Thread(target=lambda: outcome.append(stuck.step()))
    thread.start()
    assert started.wait(10)
    assert stuck.release_leases() == 1
    back = get(db, job.id)
    assert (back.status, back.attempts, back.error) == ("pending", 1, "released at shutdown")
    release.set()
    thread.join(10)
    assert outcome[0].status == "lost" and get(db, job.id).status == "pending"
    assert stuck.release_leases() == 0


def test_orphaned_leases_are_released_on_the_first_step(db: Database) -> None:
    """A daemon killed mid-job leaves a lease that has not expired; the next start retries it."""
    job = enqueue(db)
    with db.write() as conn:
        jobs.lease(conn, JOB)  # the killed process's lease (5 minutes left)
    ran: list[str] = []
    runner = worker(db, lambda j: ran.append(j.id))
    assert runner.run_once()
    done = get(db, job.id)
    assert (done.status, done.attempts, ran) == ("completed", 2, [job.id])


def test_a_down_provider_backs_the_worker_off(db: Database) -> None:
    calls: list[float] = []

    def handler(job: jobs.Job) -> None:
        calls.append(time.monotonic())
        raise ProviderDown("connection refused")

    for _ in range(50):
        enqueue(db, max_attempts=10)
    runner = worker(db, handler, unavailable=(ProviderDown,))
    stop = threading.Event()
    thread = threading.Thread(target=runner.run_forever, args=(stop,))
    thread.start()
    time.sleep(0.4)
    stop.set()
    thread.join(5)
    assert 2 <= len(calls) <= 12, "0.01, 0.02, 0.04, 0.08, 0.08 ... s apart, not 50 at once"
    errors = {r[0] for r in db.reader().execute("SELECT error FROM memory_jobs WHERE attempts > 0")}
    assert errors == {"connection refused"}
    assert jobs.counts(db.reader(), JOB)["leased"] == 0


def test_the_idle_step_runs_when_nothing_is_queued(db: Database) -> None:
    steps: list[str] = []

    def idle() -> IdleStep:
        steps.append("idle")
        return IdleStep(did_work=len(steps) == 1)

    runner = worker(db, lambda j: steps.append("job"), idle=idle)
    assert runner.run_once() and not runner.run_once()
    enqueue(db)
    assert runner.run_once()
    assert steps == ["idle", "idle", "job"]


def test_one_worker_leases_the_oldest_job_across_its_types(db: Database) -> None:
    first = enqueue(db, "a")
    enqueue(db, "c")
    second = enqueue(db, "b")
    order: list[str] = []
    runner = QueueWorker(
        db, name="ab", job_types=("b", "a"), handler=lambda j: order.append(j.id), settings=FAST
    )
    while runner.run_once():
        pass
    assert order == [first.id, second.id]
    assert jobs.counts(db.reader(), "c")["pending"] == 1


def test_a_lease_that_expires_on_the_last_attempt_publishes_job_dead(db: Database) -> None:
    """Stale-lease recovery that kills a job says so on the bus, like a failed last attempt."""
    job = enqueue(db, max_attempts=1)
    with db.write() as conn:
        jobs.lease(conn, JOB)  # a killed daemon's last attempt
    sink = Recorder()
    runner = worker(db, lambda j: None, events=sink)
    assert not runner.run_once()
    assert get(db, job.id).status == "dead"
    [dead] = [e for e in sink.events if isinstance(e, JobDead)]
    assert (dead.job_id, dead.worker, dead.error) == (job.id, "test", "lease expired")
    assert dead.agent_id == "default"


class SourceGone(Exception):
    """Stands in for a failure no retry can fix (a 404, an empty document)."""


def test_a_permanent_failure_is_dead_at_once_and_others_keep_their_retries(
    db: Database,
) -> None:
    def handler(job: jobs.Job) -> None:
        raise SourceGone("404") if job.payload["n"] == 1 else RuntimeError("flaky")

    sink = Recorder()
    gone = enqueue(db, payload={"n": 1}, max_attempts=3)
    flaky = enqueue(db, payload={"n": 2}, max_attempts=3)
    runner = worker(db, handler, events=sink, permanent=(SourceGone,))
    assert runner.run_once() and runner.run_once()
    assert (get(db, gone.id).status, get(db, gone.id).attempts) == ("dead", 1)
    assert get(db, gone.id).error == "404"
    assert (get(db, flaky.id).status, get(db, flaky.id).attempts) == ("pending", 1)
    assert "job.dead" in sink.kinds() and "job.failed" in sink.kinds()


class TimedOut(Exception):
    """Stands in for a failure the handler expects (a fetch that timed out)."""


def test_an_expected_failure_is_logged_without_a_traceback_a_surprise_with_one(
    db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    def handler(job: jobs.Job) -> None:
        raise TimedOut("timed out after 10 s") if job.payload["n"] == 1 else KeyError("bug")

    expected = enqueue(db, payload={"n": 1}, max_attempts=3)
    surprise = enqueue(db, payload={"n": 2}, max_attempts=3)
    later = WorkerSettings(poll_s=0.01, retry_in_s=lambda attempts: 3600.0)
    runner = worker(db, handler, expected=(TimedOut,), settings=later)
    with caplog.at_level(logging.WARNING):
        assert runner.run_once() and runner.run_once()
    for job in (expected, surprise):
        assert (get(db, job.id).status, get(db, job.id).attempts) == ("pending", 1)
    assert get(db, expected.id).error == "TimedOut: timed out after 10 s"
    [told, traced] = [r for r in caplog.records if "failed:" in r.getMessage()]
    assert "timed out after 10 s" in told.getMessage() and told.exc_info is None
    assert traced.exc_info is not None and traced.exc_info[0] is KeyError
