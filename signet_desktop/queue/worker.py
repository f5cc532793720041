"""The generic queue worker: lease one job, run its handler outside any transaction, settle it.

One step leases the oldest eligible pending job of the worker's types in a short write
transaction, runs `handler(job)` with no transaction open (providers refuse to run inside
one), then completes it, or records the failure (retry after a bounded backoff, dead once its
attempts are spent), in a second short transaction that needs the lease token: a handler that
outlived its lease cannot overwrite what happened to the job since. Stale leases are released
every `stale_check_s`; the first step also releases orphans (leases no worker here holds,
left by a daemon killed mid-job). When nothing is queued the optional `idle` step
runs (the embedding tracker's scan). A handler raising one of `unavailable` (its provider is
down) fails the attempt and backs the whole worker off, so a dead provider costs nothing.

Jobs whose handlers are still running in this process are never leased again, even after
stale-lease recovery released them: the workspace lock makes this process the only runner,
so "not in `running_jobs(db)`" is "not running anywhere".

On PostgreSQL that last step does not hold: several daemons share the queue, and a lease no
worker here holds may be a live daemon's. There the lease token, leases that skip rows other
daemons hold locked (`jobs.LEASE_PG`) and the lease expiry carry the rule instead: the first
step's orphan release is skipped (`jobs.release_stale` ignores `orphans` there), a killed
daemon's jobs come back once their leases expire (`lease_ms`, on the server's clock), and a
handler that outlives its lease has its result refused by the token. A long handler renews
its lease (`jobs.renew`) so that expiry means "its daemon is gone".

Stopping: a long handler calls `check_stop()` between bounded steps; once the worker's stop
is set it raises `JobInterrupted` and the job goes back to pending with its attempt refunded
(the next start resumes it). A step that cannot be split (one embedder call over a batch, which
may take seconds on a busy machine) runs through `run_interruptibly`: the worker stops without
waiting for it. Anything a handler or step raises while stopping (the database closed under a
worker whose stop budget ran out) is one log line, never a traceback.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Callable, Collection, Iterator, Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from signet_desktop.domain.errors import Unavailable
from signet_desktop.domain.events import (
    DiscardEvents,
    EventSink,
    JobCompleted,
    JobDead,
    JobFailed,
    JobLeased,
)
from signet_desktop.queue import jobs
from signet_desktop.storage.store import DatabaseHandle

log = logging.getLogger(__name__)

DEFAULT_POLL_S = 2.0
DEFAULT_MAX_BACKOFF_S = 300.0
DEFAULT_STALE_CHECK_S = 60.0
UNEXPECTED = "unexpected error; see the log"
INTERRUPT_POLL_S = 0.05

T = TypeVar("T")

Handler = Callable[[jobs.Job], Mapping[str, Any] | None]
Settled = Literal["completed", "pending", "dead", "lost", "released", "idle"]

_current = threading.local()  # the stop event of the job running on this thread, if any


class JobInterrupted(Exception):
    """The worker running this job is stopping: the handler ended between two steps."""


def current_stop() -> threading.Event | None:
    """The stop event of the queue worker running on this thread (None off a worker)."""
    stop: threading.Event | None = getattr(_current, "stop", None)
    return stop


def stopping() -> bool:
    """Is the queue worker running a job on this thread stopping? (False off a worker.)"""
    stop: threading.Event | None = getattr(_current, "stop", None)
    return stop is not None and stop.is_set()


def check_stop() -> None:
    """Raise `JobInterrupted` if the queue worker running on this thread is stopping.

    Handlers call it between bounded steps (a batch of chunks, a file); elsewhere (a request
    thread, a test calling the handler directly) it does nothing.
    """
    if stopping():
        raise JobInterrupted


@contextmanager
def stopped_by(stop: threading.Event) -> Iterator[None]:
    """Run the block as a queue worker runs a job: on this thread `run_interruptibly`,
    `stopping` and `check_stop` answer `stop` (for a thread of its own that is not a queue
    worker, such as the remember path's vector batcher)."""
    previous = getattr(_current, "stop", None)
    _current.stop = stop
    try:
        yield
    finally:
        _current.stop = previous


def run_interruptibly(call: Callable[[], T]) -> T:
    """`call()`, except that a stopping queue worker does not wait for it to end.

    On a queue worker's thread the call runs on a thread of its own while this one waits,
    raising `JobInterrupted` as soon as the worker is asked to stop: the call ends in the
    background and its result is dropped. So `call` must write nothing (a provider call); what
    the job wrote before it stays, and the job resumes from there. Elsewhere a plain call.
    """
    stop: threading.Event | None = getattr(_current, "stop", None)
    if stop is None:
        return call()
    outcome: Future[T] = Future()

    def run() -> None:
        try:
            outcome.set_result(call())
        except BaseException as exc:  # handed to the waiting thread, raised there
            outcome.set_exception(exc)

    name = f"{threading.current_thread().name}-call"
    threading.Thread(target=run, name=name, daemon=True).start()
    while True:
        try:
            return outcome.result(timeout=INTERRUPT_POLL_S)
        except FutureTimeout:
            if stop.is_set():
                raise JobInterrupted from None


@dataclass(frozen=True, slots=True)
class IdleStep:
    """What an idle step did: work, nothing, or nothing because its provider is down."""

    did_work: bool = False
    unavailable: bool = False
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Outcome:
    """One step: the job's new state (or `idle`), and whether the worker should back off."""

    status: Settled
    job: jobs.Job | None = None
    result: Mapping[str, Any] | None = None
    error: str | None = None
    unavailable: bool = False
    did_work: bool = True


@dataclass(frozen=True, slots=True)
class WorkerSettings:
    """Lease length, idle poll, provider-down backoff cap, stale-lease check period."""

    lease_ms: int = jobs.DEFAULT_LEASE_MS
    poll_s: float = DEFAULT_POLL_S
    max_backoff_s: float = DEFAULT_MAX_BACKOFF_S
    stale_check_s: float = DEFAULT_STALE_CHECK_S
    retry_in_s: Callable[[int], float] = field(default=jobs.backoff_seconds)


class RunningJobs:
    """Ids of jobs whose handlers are running now (one set per database)."""

    def __init__(self) -> None:
        self._ids: set[str] = set()
        self._lock = threading.Lock()

    def add(self, job_id: str) -> None:
        with self._lock:
            self._ids.add(job_id)

    def discard(self, job_id: str) -> None:
        with self._lock:
            self._ids.discard(job_id)

    def snapshot(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._ids)


_RUNNING: weakref.WeakKeyDictionary[DatabaseHandle, RunningJobs] = weakref.WeakKeyDictionary()
_RUNNING_LOCK = threading.Lock()


def running_jobs(db: DatabaseHandle) -> RunningJobs:
    """The running-job set every worker over `db` shares."""
    with _RUNNING_LOCK:
        found = _RUNNING.get(db)
        if found is None:
            found = _RUNNING[db] = RunningJobs()
        return found


class QueueWorker:
    """Runs jobs of `job_types` through `handler`; `run_once()` / `run_forever(stop)`."""

    def __init__(
        self,
        db: DatabaseHandle,
        *,
        name: str,
        job_types: Collection[str],
        handler: Handler,
        events: EventSink | None = None,
        settings: WorkerSettings | None = None,
        idle: Callable[[], IdleStep] | None = None,
        unavailable: tuple[type[BaseException], ...] = (),
        permanent: tuple[type[BaseException], ...] = (),
        expected: tuple[type[BaseException], ...] = (),
        released: Callable[[jobs.Job], None] | None = None,
    ) -> None:
        if not job_types:
            raise ValueError("a queue worker needs at least one job type")
        self.name = name
        self.job_types = tuple(dict.fromkeys(job_types))
        self._db = db
        self._handler = handler
        self._events: EventSink = events or DiscardEvents()
        self.settings = settings or WorkerSettings()
        self._idle = idle
        self._unavailable = unavailable
        self._permanent = permanent  # failures a retry cannot fix: dead at once
        self._expected = expected  # failures a retry may fix, told whole by their message
        self._released = released  # a job given back mid-run: its handler tidies its state
        self._running = running_jobs(db)
        self._held: jobs.Job | None = None
        self._held_lock = threading.Lock()
        self._last_stale_check: float | None = None
        self._backoff_s = 0.0
        self.last_outcome: Outcome | None = None
        self.last_error: str | None = None

    # -- steps ----------------------------------------------------------------------------

    def run_once(self) -> bool:
        """One step (a job, else the idle step); True when it did work."""
        return self.step().did_work

    def step(self, stop: threading.Event | None = None) -> Outcome:
        """Release stale leases when due, then run one job or the idle step."""
        self._check_stale()
        outcome = self.run_job(stop)
        if outcome is None:
            outcome = self._run_idle(stop)
        self.last_outcome, self.last_error = outcome, outcome.error
        return outcome

    def run_job(self, stop: threading.Event | None = None) -> Outcome | None:
        """Lease and run one job; None when none is eligible. A set `stop` releases it."""
        job = self._lease()
        if job is None:
            return None
        try:
            if stop is not None and stop.is_set():
                with self._db.write() as conn:
                    jobs.release(conn, job, started=False)
                return Outcome("released", job, did_work=False)
            return self._execute(job, stop)
        finally:
            with self._held_lock:
                self._held = None
            self._running.discard(job.id)

    def run_forever(self, stop: threading.Event) -> None:
        """Loop until `stop` is set: busy while there is work, sleeping when idle or backing off.

        A job already running when `stop` is set finishes; one leased but not started goes
        back to pending with its attempt refunded.
        """
        while not stop.is_set():
            try:
                outcome = self.step(stop)
            except JobInterrupted:  # an idle step left a provider call to end on its own
                log.info("worker %s: step interrupted at shutdown", self.name)
                return
            except Exception as exc:  # a worker must outlive one bad step; the next one retries
                if stop.is_set():  # stopping: the database may be closed already
                    log.info("worker %s: step abandoned at shutdown (%s)", self.name, exc)
                    return
                if isinstance(exc, Unavailable):  # the database is down: said once a step
                    log.warning("worker %s: step failed: %s", self.name, exc.message)
                else:
                    log.exception("worker %s: step failed", self.name)
                outcome = Outcome("idle", error=UNEXPECTED, did_work=False)
                self.last_outcome, self.last_error = outcome, UNEXPECTED
            delay = self._next_delay(outcome)
            if delay:
                stop.wait(delay)

    def release_leases(self) -> int:
        """Give back the lease of a job still running (a stop that timed out); 1 if released.

        The job returns to pending (dead if its attempts are spent); the handler's late
        result is refused by the lease token.
        """
        with self._held_lock:
            job = self._held
        if job is None:
            return 0
        with self._db.write() as conn:
            status = jobs.release(conn, job, started=True, error="released at shutdown")
        if status == "dead":
            self._events.publish(self._dead(job, "released at shutdown"))
        if status is not None:
            self._tidy(job)
        return 0 if status is None else 1

    def release_stale(self, *, orphans: bool = False) -> jobs.ReleaseReport:
        """Return expired leases of this worker's types to pending (or dead).

        With `orphans` (the first step), also leases no worker in this process is running:
        the jobs of a daemon that was killed mid-job, retried now instead of at lease expiry
        (SQLite only: on PostgreSQL another daemon may hold them, see the module's docstring).
        """
        released, died = 0, list[jobs.Job]()
        with self._db.write() as conn:
            running = self._running.snapshot()
            for job_type in self.job_types:
                report = jobs.release_stale(
                    conn, job_type=job_type, orphans=orphans, exclude=running
                )
                released, died = released + report.released, [*died, *report.dead_jobs]
        for job in died:  # after the commit: a lease that expired on the last attempt
            self._events.publish(self._dead(job, job.error or "lease expired"))
        if released or died:
            log.info(
                "worker %s: released %d stale leases (%d dead)", self.name, released, len(died)
            )
        return jobs.ReleaseReport(released, len(died), tuple(died))

    # -- internals ------------------------------------------------------------------------

    def _check_stale(self) -> None:
        now = time.monotonic()
        last = self._last_stale_check
        if last is None or now - last >= self.settings.stale_check_s:
            self._last_stale_check = now
            self.release_stale(orphans=last is None)

    def _lease(self) -> jobs.Job | None:
        with self._db.write() as conn:
            leased = jobs.lease(
                conn,
                self.job_types,
                lease_ms=self.settings.lease_ms,
                exclude=self._running.snapshot(),
            )
            if not leased:
                return None
            job = leased[0]
            # Inside the lease transaction: the next lease (serialised behind it) sees it.
            self._running.add(job.id)
        with self._held_lock:
            self._held = job
        self._events.publish(
            JobLeased(
                agent_id=job.agent_id,
                job_id=job.id,
                job_type=job.job_type,
                worker=self.name,
                attempt=job.attempts,
            )
        )
        return job

    def _execute(self, job: jobs.Job, stop: threading.Event | None = None) -> Outcome:
        started = time.perf_counter()
        outer = current_stop()  # a job run from an idle step (the tracker's) keeps its stop
        _current.stop = stop
        try:
            result = dict(self._handler(job) or {})
        except Exception as exc:
            if stop is not None and stop.is_set():
                return self._interrupted(job, exc)
            return self._handler_failed(job, exc)
        finally:
            _current.stop = outer
        return self._complete(job, result, started)

    def _interrupted(self, job: jobs.Job, exc: Exception) -> Outcome:
        """Stopping mid-job: back to pending, attempt refunded; the next start resumes it."""
        why = "stopped between steps" if isinstance(exc, JobInterrupted) else str(exc)
        try:
            with self._db.write() as conn:
                released = jobs.release(conn, job, started=False)
        except Exception as late:  # the stop budget ran out and the database is closed
            log.info("worker %s: job %s abandoned at shutdown (%s)", self.name, job.id, late)
            return Outcome("lost", job, error=why, did_work=False)
        log.info("worker %s: job %s interrupted at shutdown (%s); resumes later", self.name,
                 job.id, why)  # fmt: skip
        if released:
            self._tidy(job)
        return Outcome("released" if released else "lost", job, error=why, did_work=False)

    def _tidy(self, job: jobs.Job) -> None:
        """Tell the handler's side its job was given back mid-run (a document -> queued)."""
        if self._released is None:
            return
        try:
            self._released(job)
        except Exception as exc:  # shutting down: the next start's own checks still resume it
            log.info("worker %s: tidying released job %s failed (%s)", self.name, job.id, exc)

    def _handler_failed(self, job: jobs.Job, exc: Exception) -> Outcome:
        if isinstance(exc, self._unavailable):
            return self._fail(job, str(exc) or type(exc).__name__, unavailable=True)
        if isinstance(exc, self._permanent):
            log.info("worker %s: job %s failed for good: %s", self.name, job.id, exc)
            return self._fail(job, str(exc) or type(exc).__name__, unavailable=False, final=True)
        # A failing handler fails its job, never the worker. A failure the handler expects
        # (a fetch that timed out) is its message; only a surprise carries its traceback.
        surprise = None if isinstance(exc, self._expected) else exc
        log.warning("worker %s: job %s failed: %s", self.name, job.id, exc, exc_info=surprise)
        return self._fail(job, f"{type(exc).__name__}: {exc}", unavailable=False)

    def _complete(self, job: jobs.Job, result: Mapping[str, Any], started: float) -> Outcome:
        with self._db.write() as conn:
            done = jobs.complete(conn, job, result)
        if not done:
            log.warning("worker %s: job %s lost its lease; result discarded", self.name, job.id)
            return Outcome("lost", job, result, error="lease lost")
        self._events.publish(
            JobCompleted(
                agent_id=job.agent_id,
                job_id=job.id,
                job_type=job.job_type,
                worker=self.name,
                duration_ms=(time.perf_counter() - started) * 1000,
            )
        )
        return Outcome("completed", job, result)

    def _fail(
        self, job: jobs.Job, error: str, *, unavailable: bool, final: bool = False
    ) -> Outcome:
        delay = self.settings.retry_in_s(job.attempts)
        with self._db.write() as conn:
            status = jobs.fail(conn, job, error, retry_in_s=delay, final=final)
            after = jobs.get_job(conn, job.id) if status == "pending" else None
        if status is None:
            log.warning("worker %s: job %s lost its lease before failing", self.name, job.id)
            return Outcome("lost", job, error=error, unavailable=unavailable)
        if status == "dead":
            self._events.publish(self._dead(job, error))
        else:
            self._events.publish(
                JobFailed(
                    agent_id=job.agent_id,
                    job_id=job.id,
                    job_type=job.job_type,
                    worker=self.name,
                    attempt=job.attempts,
                    error=error,
                    retry_at=None if after is None else after.run_after,
                )
            )
        settled: Settled = "dead" if status == "dead" else "pending"
        return Outcome(settled, job, error=error, unavailable=unavailable)

    def _dead(self, job: jobs.Job, error: str) -> JobDead:
        return JobDead(
            agent_id=job.agent_id,
            job_id=job.id,
            job_type=job.job_type,
            worker=self.name,
            error=error,
        )

    def _run_idle(self, stop: threading.Event | None = None) -> Outcome:
        if self._idle is None:
            return Outcome("idle", did_work=False)
        outer = current_stop()
        _current.stop = stop  # an idle step's provider calls stop with the worker too
        try:
            step = self._idle()
        finally:
            _current.stop = outer
        return Outcome(
            "idle",
            error=step.error,
            unavailable=step.unavailable,
            did_work=step.did_work and not step.unavailable,
        )

    def _next_delay(self, outcome: Outcome) -> float:
        settings = self.settings
        if outcome.unavailable:
            self._backoff_s = min(settings.max_backoff_s, max(settings.poll_s, self._backoff_s * 2))
            return self._backoff_s
        self._backoff_s = 0.0
        return 0.0 if outcome.did_work else settings.poll_s
