"""Worker declarations: what a capability hands the daemon so it can host its workers.

A capability (embeddings today; ingest, retention, hints and Dreaming later) declares each of
its workers as a frozen `WorkerDeclaration`; `build_service` collects them into the pipeline
service's registry and the daemon's `WorkerHost` starts, pauses, resumes and stops them
without knowing what they are. A worker is plain Python (`run_once()` / `run_forever(stop)`,
see `queue/worker.py`); the host decides whether it runs in a thread or a QThread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal, Protocol

WorkerState = Literal["pending", "running", "paused", "stopped", "crashed"]


class Worker(Protocol):
    """A hosted loop: returns soon after `stop` is set; gives back a stuck job's lease."""

    def run_once(self) -> bool: ...

    def run_forever(self, stop: threading.Event) -> None: ...

    def release_leases(self) -> int: ...


@dataclass(frozen=True, slots=True)
class WarmUp:
    """Background start-up work of a worker (`name` as /api/status `startup` shows it)."""

    name: str
    run: Callable[[], object]


@dataclass(frozen=True, slots=True)
class WorkerDeclaration:
    """One worker of a capability.

    `factory` builds one instance per `concurrency` slot (each runs on its own thread);
    `warm_up` (loading an in-process model, say) runs once in the background after the
    server listens, reported under `startup` in /api/status.
    """

    name: str
    job_types: tuple[str, ...]
    factory: Callable[[], Worker]
    concurrency: int = 1
    warm_up: WarmUp | None = None

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError(f"worker {self.name!r}: concurrency must be at least 1")


@dataclass(frozen=True, slots=True)
class WorkerSnapshot:
    """A hosted worker as the host sees it now (`paused` is the request, `state` the fact)."""

    name: str
    state: WorkerState
    job_types: tuple[str, ...]
    concurrency: int
    paused: bool = False
    error: str | None = None


class WorkerHost(Protocol):
    """Hosts declared workers: threads headless (`daemon/`), QThreads in the app (`ui/`).

        `pause` lets a running job finish (a leased, unstarted one goes back to pending) and
        takes no new ones until `resume`; `request_stop()` tells every worker to stop and returns
    at once; `stop(timeout)` ends every worker and gives back the
        leases of jobs still running after `timeout` seconds. State changes are published as
        `worker.state` events.
    """

    def start(self) -> None: ...

    def pause(self, name: str | None = None) -> None: ...

    def resume(self, name: str | None = None) -> None: ...

    def request_stop(self) -> None: ...

    def stop(self, timeout: float) -> bool: ...

    def snapshot(self) -> Mapping[str, WorkerSnapshot]: ...


def repeat(
    stop: threading.Event,
    interval_s: float,
    step: Callable[[], object],
    *,
    log: logging.Logger,
    failed: str,
) -> None:
    """Call `step` every `interval_s` until `stop` is set; a failed step is logged (as
    `failed`) and tried again at the next interval."""
    while not stop.is_set():
        try:
            step()
        except Exception as exc:  # a periodic worker must outlive one bad step
            if stop.is_set():  # stopping: the database may be closed under it already
                log.info("%s: abandoned at shutdown (%s)", failed, exc)
                return
            log.exception(failed)
        if stop.wait(interval_s):
            return
