"""Hosting declared workers for the daemon's lifetime: threads headless, QThreads in the app.

`HostedWorkers` is the one state machine both hosts share; it only needs a way to start a
thread (`spawn`), so the headless host (`WorkerThreads`, plain `threading`) and the Qt one
(`ui/worker_host.py`, QThreads) differ in nothing else. Each declared worker gets
`concurrency` instances, each looping in its own thread: `run_forever(stop)` until the
instance is paused or the host stops, then waiting for `resume`. Pausing sets the instance's
stop event, so a running job finishes (a long one that checks `check_stop()` between steps,
an ingest, goes back to pending and resumes later) and a leased, unstarted one goes back to
pending. Stopping tells every instance at once (`request_stop`, with the first stop request)
and then waits out a short budget (`stop`). A
worker that raises is reported `crashed`; the daemon keeps serving. One that raises
`Unavailable` (the database server is down or restarting) is started again after
`UNAVAILABLE_RETRY_S`, its state `running` with the reason as its error until then. Every
state change is published as a `worker.state` event (the status board turns them into
/api/status's `workers` block).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Protocol

from signet_desktop.domain.errors import Unavailable
from signet_desktop.domain.events import EventSink, WorkerStateChanged
from signet_desktop.embedding.priority import lower_current_thread
from signet_desktop.service.workers import (
    Worker,
    WorkerDeclaration,
    WorkerHost,
    WorkerSnapshot,
    WorkerState,
)

log = logging.getLogger(__name__)

UNAVAILABLE_RETRY_S = 2.0  # a worker stopped by an unreachable database starts again after this

HostFactory = Callable[[Sequence[WorkerDeclaration], EventSink], WorkerHost]


class Runner(Protocol):
    """A started thread of some kind (threading.Thread, a QThread adapter)."""

    def join(self, timeout: float) -> None: ...

    def is_alive(self) -> bool: ...


Spawn = Callable[[str, Callable[[], None]], Runner]


@dataclass
class _Instance:
    """One running copy of a declared worker (mutable; guarded by the host's condition)."""

    worker: Worker
    state: WorkerState = "pending"
    error: str | None = None
    paused: bool = False
    run_stop: threading.Event = field(default_factory=threading.Event)
    runner: Runner | None = None


def _aggregate(instances: Sequence[_Instance]) -> tuple[WorkerState, str | None]:
    """One state for a worker's instances: crashed > running > paused > stopped > pending."""
    states = {i.state for i in instances}
    if "crashed" in states:
        return "crashed", next((i.error for i in instances if i.state == "crashed"), None)
    if "running" in states:  # an error here: waiting to start again (the database is down)
        return "running", next(
            (i.error for i in instances if i.state == "running" and i.error), None
        )
    if states == {"paused"}:
        return "paused", None
    if "stopped" in states:
        return "stopped", None
    return ("paused", None) if "paused" in states else ("pending", None)


class HostedWorkers:
    """The declared workers, their instances and states; threads come from `spawn`."""

    def __init__(
        self, declarations: Sequence[WorkerDeclaration], events: EventSink, spawn: Spawn
    ) -> None:
        self._declarations = {d.name: d for d in declarations}
        if len(self._declarations) != len(declarations):
            raise ValueError("worker names must be unique")
        self._events = events
        self._spawn = spawn
        self._cond = threading.Condition()
        self._instances = {
            d.name: [_Instance(d.factory()) for _ in range(d.concurrency)] for d in declarations
        }
        self._published: dict[str, tuple[WorkerState, str | None]] = {}
        self._started = False
        self._closing = False
        with self._cond:
            for name in self._instances:
                self._publish_locked(name)

    def start(self) -> None:
        """Start every instance (idempotent); paused workers start paused."""
        with self._cond:
            if self._started or self._closing:
                return
            self._started = True
            todo = [
                (n, i, inst) for n, insts in self._instances.items() for i, inst in enumerate(insts)
            ]
        for name, index, instance in todo:
            label = name if len(self._instances[name]) == 1 else f"{name}-{index}"
            instance.runner = self._spawn(f"worker-{label}", partial(self._loop, name, instance))

    def pause(self, name: str | None = None) -> None:
        """Take no new jobs; a running job finishes or yields between steps (all, or one)."""
        with self._cond:
            for instance in self._select(name):
                instance.paused = True
                instance.run_stop.set()
            self._cond.notify_all()

    def resume(self, name: str | None = None) -> None:
        """Take jobs again (all workers, or the one named)."""
        with self._cond:
            for instance in self._select(name):
                instance.paused = False
            self._cond.notify_all()

    def request_stop(self) -> None:
        """Tell every instance to stop (returns at once; `stop` waits for them)."""
        with self._cond:
            self._closing = True
            for insts in self._instances.values():
                for instance in insts:
                    instance.run_stop.set()
            self._cond.notify_all()

    def stop(self, timeout: float) -> bool:
        """End every instance within `timeout` s in total; True if all ended.

        An instance still running a job after the timeout gives its lease back, so the job
        is retried later and the handler's late result is refused.
        """
        self.request_stop()
        with self._cond:
            instances = [i for insts in self._instances.values() for i in insts]
        deadline = time.monotonic() + timeout
        stuck = []
        for instance in instances:
            if instance.runner is None:
                continue
            instance.runner.join(max(0.0, deadline - time.monotonic()))
            if instance.runner.is_alive():
                stuck.append(instance)
        for instance in stuck:
            log.warning("a worker did not stop within %.1f s; releasing its lease", timeout)
            try:
                instance.worker.release_leases()
            except Exception:  # shutting down: the next start's stale-lease check recovers it
                log.exception("releasing a stuck worker's lease failed")
        with self._cond:
            for name, insts in self._instances.items():
                for instance in insts:
                    if instance.runner is None and instance.state == "pending":
                        instance.state = "stopped"
                self._publish_locked(name)
        return not stuck

    def snapshot(self) -> Mapping[str, WorkerSnapshot]:
        """Every declared worker's state now."""
        with self._cond:
            return {name: self._snapshot_locked(name) for name in self._instances}

    # -- the instance loop ----------------------------------------------------------------

    def _loop(self, name: str, instance: _Instance) -> None:
        lower_current_thread()  # queue work yields the CPU to requests someone waits on
        log.info("worker %s started", name)
        while True:
            with self._cond:
                while instance.paused and not self._closing:
                    self._set_locked(name, instance, "paused")
                    self._cond.wait()
                if self._closing:
                    break
                instance.run_stop = threading.Event()
                self._set_locked(name, instance, "running")
            try:
                instance.worker.run_forever(instance.run_stop)
            except Unavailable as exc:  # the database is down for now: start again later
                if self._closing:
                    break
                log.warning(
                    "worker %s: %s; starting it again in %g s",
                    name,
                    exc.message,
                    UNAVAILABLE_RETRY_S,
                )
                with self._cond:
                    self._set_locked(name, instance, "running", exc.message)
                instance.run_stop.wait(UNAVAILABLE_RETRY_S)
                continue
            except Exception as exc:  # a crashed worker is reported; the daemon keeps serving
                if self._closing:  # past its stop budget: the database may be closed already
                    log.info("worker %s abandoned at shutdown (%s)", name, exc)
                    break
                log.exception("worker %s crashed", name)
                with self._cond:
                    self._set_locked(name, instance, "crashed", f"{type(exc).__name__}: {exc}")
                return
            with self._cond:
                if self._closing or not instance.run_stop.is_set():
                    break  # stopping, or the worker ended by itself
                # Paused (and maybe resumed already): wait, or run again.
        with self._cond:
            self._set_locked(name, instance, "stopped")
        log.info("worker %s stopped", name)

    def _select(self, name: str | None) -> list[_Instance]:
        if name is None:
            return [i for insts in self._instances.values() for i in insts]
        if name not in self._instances:
            raise KeyError(f"no worker named {name!r}")
        return list(self._instances[name])

    def _set_locked(
        self, name: str, instance: _Instance, state: WorkerState, error: str | None = None
    ) -> None:
        instance.state, instance.error = state, error
        self._publish_locked(name)

    def _snapshot_locked(self, name: str) -> WorkerSnapshot:
        declaration, instances = self._declarations[name], self._instances[name]
        state, error = _aggregate(instances)
        return WorkerSnapshot(
            name=name,
            state=state,
            job_types=declaration.job_types,
            concurrency=declaration.concurrency,
            paused=all(i.paused for i in instances),
            error=error,
        )

    def _publish_locked(self, name: str) -> None:
        # Under the lock, so state changes reach the bus in the order they happened.
        current = _aggregate(self._instances[name])
        if self._published.get(name) == current:
            return
        self._published[name] = current
        self._events.publish(WorkerStateChanged(worker=name, state=current[0], error=current[1]))


def _spawn_thread(name: str, target: Callable[[], None]) -> Runner:
    thread = threading.Thread(target=target, name=name, daemon=True)
    thread.start()
    return thread


class WorkerThreads(HostedWorkers):
    """The headless host: one daemon thread per worker instance."""

    def __init__(self, declarations: Sequence[WorkerDeclaration], events: EventSink) -> None:
        super().__init__(declarations, events, _spawn_thread)
