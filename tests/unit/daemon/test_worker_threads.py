"""The threads host: start, pause, resume, stop; states on the bus; crashes reported, not fatal."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from signet_desktop.daemon import workers as hosted
from signet_desktop.daemon.workers import WorkerThreads
from signet_desktop.domain.errors import Unavailable
from signet_desktop.domain.events import Event, WorkerStateChanged
from signet_desktop.queue import jobs
from signet_desktop.queue.worker import QueueWorker, WorkerSettings
from signet_desktop.service.events import EventBus
from signet_desktop.service.status import StatusBoard
from signet_desktop.service.workers import WorkerDeclaration
from signet_desktop.storage.database import Database, open_database

JOB = "test_job"
FAST = WorkerSettings(poll_s=0.01, retry_in_s=lambda attempts: 0.0)


class CountingWorker:
    """A real `run_forever(stop)` loop that counts its steps."""

    def __init__(self) -> None:
        self.steps = 0
        self.started = threading.Event()
        self.released = 0

    def run_once(self) -> bool:
        self.steps += 1
        return False

    def run_forever(self, stop: threading.Event) -> None:
        self.started.set()
        while not stop.is_set():
            self.run_once()
            stop.wait(0.01)

    def release_leases(self) -> int:
        self.released += 1
        return 0


class CrashingWorker(CountingWorker):
    def run_forever(self, stop: threading.Event) -> None:
        raise RuntimeError("bad step")


class DownThenUpWorker(CountingWorker):
    """Raises `Unavailable` (the database server is down) on its first `fails` starts."""

    def __init__(self, fails: int) -> None:
        super().__init__()
        self.fails = fails

    def run_forever(self, stop: threading.Event) -> None:
        if self.fails:
            self.fails -= 1
            raise Unavailable("database unavailable, retry shortly (connection refused)")
        super().run_forever(stop)


class StuckWorker(CountingWorker):
    """Ignores its stop event for half a second (a handler that hangs at shutdown)."""

    def run_forever(self, stop: threading.Event) -> None:
        self.started.set()
        time.sleep(0.5)


def declare(name: str, worker: object, concurrency: int = 1) -> WorkerDeclaration:
    return WorkerDeclaration(name, ("x",), factory=lambda: worker, concurrency=concurrency)  # type: ignore[arg-type,return-value]


def wait_for(check: Callable[[], bool], timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.005)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(tmp_path / "w.db", with_vec=False)
    yield database
    database.close()


def test_workers_run_until_stopped_and_report_state() -> None:
    bus = EventBus()
    board = StatusBoard(bus)
    board.follow(bus.connect)
    seen: list[Event] = []
    bus.connect(seen.append)
    counting = CountingWorker()
    host = WorkerThreads([declare("count", counting), declare("crash", CrashingWorker())], bus)
    assert board.snapshot()["workers"]["count"] == {"state": "pending", "error": None}
    assert not counting.started.wait(0.05)  # nothing runs before start()
    host.start()
    assert counting.started.wait(10)
    wait_for(lambda: host.snapshot()["crash"].state == "crashed")
    assert host.snapshot()["count"].state == "running"
    assert host.stop(10)
    assert counting.steps >= 1
    workers = board.snapshot()["workers"]
    assert workers["count"] == {"state": "stopped", "error": None}
    assert workers["crash"] == {"state": "crashed", "error": "RuntimeError: bad step"}
    states = [(e.worker, e.state) for e in seen if isinstance(e, WorkerStateChanged)]
    assert [s for w, s in states if w == "count"] == ["pending", "running", "stopped"]


def test_a_worker_stopped_by_an_unreachable_database_starts_again_not_crashed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(hosted, "UNAVAILABLE_RETRY_S", 0.05)
    worker = DownThenUpWorker(fails=2)
    bus = EventBus()
    board = StatusBoard(bus)
    board.follow(bus.connect)
    seen: list[Event] = []
    bus.connect(seen.append)
    host = WorkerThreads([declare("down", worker)], bus)
    host.start()
    assert worker.started.wait(10), "the worker was not started again"
    wait_for(lambda: worker.steps >= 1)
    assert host.snapshot()["down"].state == "running"
    assert board.snapshot()["workers"]["down"] == {"state": "running", "error": None}
    assert host.stop(10)
    reasons = [e.error for e in seen if isinstance(e, WorkerStateChanged) and e.error]
    assert reasons and "database unavailable" in reasons[0]  # said while it waited
    assert all(e.state != "crashed" for e in seen if isinstance(e, WorkerStateChanged))


def test_pause_and_resume_one_worker_or_all() -> None:
    one, two = CountingWorker(), CountingWorker()
    host = WorkerThreads([declare("one", one), declare("two", two)], EventBus())
    host.start()
    wait_for(lambda: one.started.is_set() and two.started.is_set())
    host.pause("one")
    wait_for(lambda: host.snapshot()["one"].state == "paused")
    steps = one.steps
    time.sleep(0.05)
    assert one.steps == steps, "a paused worker takes no steps"
    assert host.snapshot()["two"].state == "running"
    host.pause()
    wait_for(lambda: host.snapshot()["two"].state == "paused")
    assert host.snapshot()["one"].paused and host.snapshot()["two"].paused
    host.resume()
    wait_for(lambda: one.steps > steps and host.snapshot()["one"].state == "running")
    with pytest.raises(KeyError):
        host.pause("nope")
    assert host.stop(10)
    assert {s.state for s in host.snapshot().values()} == {"stopped"}


def test_paused_before_start_starts_paused_and_stop_ends_it() -> None:
    counting = CountingWorker()
    host = WorkerThreads([declare("count", counting)], EventBus())
    host.pause()
    host.start()
    wait_for(lambda: host.snapshot()["count"].state == "paused")
    assert not counting.started.is_set()
    assert host.stop(10)
    assert host.snapshot()["count"].state == "stopped"


def test_a_stop_that_times_out_releases_the_stuck_workers_lease() -> None:
    stuck = StuckWorker()
    host = WorkerThreads([declare("stuck", stuck)], EventBus())
    host.start()
    assert stuck.started.wait(10)
    assert not host.stop(0.05)
    assert stuck.released == 1


def test_concurrency_runs_that_many_instances() -> None:
    made: list[CountingWorker] = []

    def factory() -> CountingWorker:
        made.append(CountingWorker())
        return made[-1]

    declaration = WorkerDeclaration("many", ("x",), factory=factory, concurrency=3)
    host = WorkerThreads([declaration], EventBus())
    host.start()
    wait_for(lambda: all(w.started.is_set() for w in made))
    assert len(made) == 3 and host.snapshot()["many"].concurrency == 3
    assert host.stop(10)


def test_pause_during_a_job_lets_it_finish_and_leases_no_more(db: Database) -> None:
    started, release = threading.Event(), threading.Event()
    ran: list[str] = []

    def handler(job: jobs.Job) -> None:
        ran.append(job.id)
        started.set()
        release.wait(10)

    with db.write() as conn:
        first, _ = jobs.enqueue(conn, JOB, agent_id="default")
        second, _ = jobs.enqueue(conn, JOB, agent_id="default")
    worker = QueueWorker(db, name="q", job_types=(JOB,), handler=handler, settings=FAST)
    host = WorkerThreads([declare("q", worker)], EventBus())
    host.start()
    assert started.wait(10)
    host.pause()
    assert host.snapshot()["q"].state == "running", "the job in progress is still running"
    release.set()
    wait_for(lambda: host.snapshot()["q"].state == "paused")
    assert jobs.get_job(db.reader(), first.id).status == "completed"  # type: ignore[union-attr]
    time.sleep(0.05)
    assert jobs.get_job(db.reader(), second.id).status == "pending"  # type: ignore[union-attr]
    assert ran == [first.id]
    host.resume()
    wait_for(lambda: jobs.counts(db.reader(), JOB)["completed"] == 2)
    assert host.stop(10)


def test_stop_gives_back_the_lease_of_a_job_still_running(db: Database) -> None:
    started, release = threading.Event(), threading.Event()

    def handler(job: jobs.Job) -> None:
        started.set()
        release.wait(10)

    with db.write() as conn:
        job, _ = jobs.enqueue(conn, JOB, agent_id="default")
    worker = QueueWorker(db, name="q", job_types=(JOB,), handler=handler, settings=FAST)
    host = WorkerThreads([declare("q", worker)], EventBus())
    host.start()
    assert started.wait(10)
    assert not host.stop(0.05)
    back = jobs.get_job(db.reader(), job.id)
    assert back is not None and (back.status, back.lease_token) == ("pending", None)
    release.set()
    wait_for(lambda: host.snapshot()["q"].state == "stopped")
    assert jobs.get_job(db.reader(), job.id).status == "pending"  # type: ignore[union-attr]
