"""Retention and maintenance: expired tombstones purged, old history and finished jobs pruned.

A run walks the steps in Signet's order (maintenance/retention.py), each in batches of
`batchLimit` rows (500), every batch its own short write transaction, at most
`MAX_BATCHES_PER_STEP` batches per step per run; a step that hit the cap marks the run
`more` and the worker comes back after `CATCH_UP_S` instead of the full interval. Then the
maintained counters (storage/counters.py) are checked against the tables and repaired if they
drifted. Each run is a `maintenance_runs` row, the `maintenance` block of /api/status and a
`maintenance.finished` event. No provider call, no queue jobs: one hosted loop.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from signet_desktop.config.pipeline import RetentionConfig
from signet_desktop.domain.errors import Conflict, InvalidInput
from signet_desktop.domain.events import DiscardEvents, EventSink, MaintenanceFinished
from signet_desktop.domain.maintenance import MaintenanceRun
from signet_desktop.maintenance import retention as steps
from signet_desktop.service.workers import WorkerDeclaration
from signet_desktop.storage import counters, maintenance_runs
from signet_desktop.storage.handle import DatabaseHandle

log = logging.getLogger(__name__)

NAME = "retention"
STATUS_KEY = "maintenance"
MAX_BATCHES_PER_STEP = 20
CATCH_UP_S = 60.0
FIRST_RUN_DELAY_S = 60.0
KEEP_RUNS = 200
MAX_RECENT = 100
JOB_STATUSES = (("completed", "completed_job_retention_ms"), ("dead", "dead_job_retention_ms"))


@dataclass(slots=True)
class _Tally:
    steps: dict[str, dict[str, Any]] = field(default_factory=dict)
    more: bool = False

    def add(self, step: str, **counts: int) -> None:
        into = self.steps.setdefault(step, {})
        for name, value in counts.items():
            into[name] = int(into.get(name, 0)) + value


@dataclass(frozen=True, slots=True)
class MaintenanceReport:
    """A finished run: its record plus whether a step left work for the next run."""

    run: MaintenanceRun
    more: bool
    elapsed_s: float


class RetentionService:
    """Runs the sweep (scheduled by the worker, or on request) and reports the runs."""

    def __init__(
        self,
        db: DatabaseHandle,
        config: RetentionConfig | None = None,
        *,
        events: EventSink | None = None,
        status: Callable[[str, Any], None] | None = None,
    ) -> None:
        self._db = db
        self.config = config or RetentionConfig()
        self._events: EventSink = events or DiscardEvents()
        self._status = status
        self._running = threading.Lock()
        self._last: MaintenanceReport | None = None
        self.next_run_at: float | None = None

    def recover(self) -> int:
        """Runs a killed process left `running` become `interrupted` (start-up)."""
        with self._db.write() as conn:
            return maintenance_runs.interrupt_running(conn)

    def run(self, trigger: str = "manual") -> MaintenanceReport:
        """One sweep now; Conflict when one is already running."""
        if trigger not in ("manual", "schedule"):
            raise InvalidInput("trigger must be manual or schedule", code="bad_trigger")
        if not self._running.acquire(blocking=False):
            raise Conflict("a maintenance run is in progress", code="maintenance_running")
        try:
            return self._run(trigger)
        finally:
            self._running.release()

    def recent(self, limit: int = 20) -> list[MaintenanceRun]:
        """The newest recorded runs."""
        if not 1 <= limit <= MAX_RECENT:
            raise InvalidInput(f"limit must be 1..{MAX_RECENT}", code="bad_limit")
        return maintenance_runs.recent_runs(self._db.reader(), limit)

    @property
    def last(self) -> MaintenanceReport | None:
        """This process's latest run."""
        return self._last

    @property
    def running(self) -> bool:
        return self._running.locked()

    def _run(self, trigger: str) -> MaintenanceReport:
        started = time.monotonic()
        run_id = f"mnt_{uuid.uuid4().hex[:16]}"
        with self._db.write() as conn:
            maintenance_runs.start_run(conn, run_id, trigger=trigger)
        tally, error = _Tally(), None
        try:
            self._tombstones(tally)
            self._history(tally)
            self._jobs(tally)
            self._counters(tally)
        except Exception as exc:  # recorded on the run; the worker tries again next interval
            log.exception("maintenance run %s failed", run_id)
            error = f"{type(exc).__name__}: {exc}"[:2000]
        with self._db.write() as conn:
            maintenance_runs.finish_run(
                conn,
                run_id,
                status="failed" if error else "completed",
                steps=tally.steps,
                error=error,
            )
            maintenance_runs.prune_runs(conn, KEEP_RUNS)
        run = maintenance_runs.recent_runs(self._db.reader(), 1)[0]
        report = MaintenanceReport(run, tally.more, time.monotonic() - started)
        self._last = report
        self._publish(report)
        return report

    def _batches(self, tally: _Tally, step: Callable[[], int]) -> None:
        for _ in range(MAX_BATCHES_PER_STEP):
            if step() < self.config.batch_limit:
                return
        tally.more = True

    def _tombstones(self, tally: _Tally) -> None:
        before = steps.cutoff(self.config.tombstone_retention_ms)
        tally.add(
            "tombstones",
            memories=0,
            vectors=0,
            safety_decisions=0,
            mentioned_entities=0,
            entities=0,
            claims_unsupported=0,
        )

        def batch() -> int:
            with self._db.write() as conn:
                done = steps.purge_tombstones(conn, before, self.config.batch_limit)
            tally.add(
                "tombstones",
                memories=done.memories,
                vectors=done.vectors,
                safety_decisions=done.safety_decisions,
                mentioned_entities=done.mentioned_entities,
                entities=done.entities,
                claims_unsupported=done.claims_unsupported,
            )
            return done.memories

        self._batches(tally, batch)

    def _history(self, tally: _Tally) -> None:
        before = steps.cutoff(self.config.history_retention_ms)
        tally.add("history", events=0)

        def batch() -> int:
            with self._db.write() as conn:
                done = steps.prune_history(conn, before, self.config.batch_limit)
            tally.add("history", events=done)
            return done

        self._batches(tally, batch)

    def _jobs(self, tally: _Tally) -> None:
        for status, setting in JOB_STATUSES:
            before = steps.cutoff(getattr(self.config, setting))
            tally.add("jobs", **{status: 0})

            def batch(status: str = status, before: str = before) -> int:
                with self._db.write() as conn:
                    done = steps.prune_jobs(conn, status, before, self.config.batch_limit)
                tally.add("jobs", **{status: done})
                return done

            self._batches(tally, batch)

    def _counters(self, tally: _Tally) -> None:
        found = counters.recount(self._db.reader(), repair=False)
        if found.drifted:
            with self._db.write() as conn:
                found = counters.recount(conn, repair=True)
            log.warning("maintained counters drifted, repaired: %s", ", ".join(found.drifted))
        tally.add("counters", drifted=len(found.drifted))

    def _publish(self, report: MaintenanceReport) -> None:
        steps_ = report.run.steps
        self._events.publish(
            MaintenanceFinished(
                run_id=report.run.id,
                trigger=report.run.trigger,
                status=report.run.status,
                purged_memories=int(steps_.get("tombstones", {}).get("memories", 0)),
                pruned_history=int(steps_.get("history", {}).get("events", 0)),
                pruned_jobs=sum(int(n) for n in steps_.get("jobs", {}).values()),
                more=report.more,
                elapsed_s=round(report.elapsed_s, 3),
                error=report.run.error,
            )
        )
        self.post_status()

    def post_status(self) -> None:
        """Put the `maintenance` block on the status board."""
        if self._status is not None:
            self._status(STATUS_KEY, self.status_fact())

    def status_fact(self) -> Mapping[str, Any]:
        """/api/status `maintenance`: interval, windows, the last run, the next one."""
        last = self._last
        next_at = None
        if self.next_run_at is not None:
            wait = max(0.0, self.next_run_at - time.monotonic())
            next_at = _iso_in(wait)
        return {
            "intervalMs": self.config.interval_ms,
            "batchLimit": self.config.batch_limit,
            "tombstoneRetentionMs": self.config.tombstone_retention_ms,
            "historyRetentionMs": self.config.history_retention_ms,
            "completedJobRetentionMs": self.config.completed_job_retention_ms,
            "deadJobRetentionMs": self.config.dead_job_retention_ms,
            "running": self.running,
            "nextRunAt": next_at,
            "lastRun": None if last is None else run_fact(last.run, more=last.more),
        }


def run_fact(run: MaintenanceRun, *, more: bool | None = None) -> dict[str, Any]:
    """A run in its wire shape (status board and routes)."""
    fact: dict[str, Any] = {
        "id": run.id,
        "trigger": run.trigger,
        "status": run.status,
        "startedAt": run.started_at,
        "finishedAt": run.finished_at,
        "steps": dict(run.steps),
        "error": run.error,
    }
    if more is not None:
        fact["more"] = more
    return fact


def _iso_in(seconds: float) -> str:
    moment = datetime.now(UTC) + timedelta(seconds=seconds)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class MaintenanceWorker:
    """Runs the sweep every `interval` (first one shortly after start; sooner while a step
    has a backlog). A hosted `Worker` with no job leases."""

    def __init__(self, service: RetentionService, *, first_delay_s: float = FIRST_RUN_DELAY_S):
        self._service = service
        self._first_delay_s = first_delay_s

    def run_once(self) -> bool:
        """One scheduled sweep; True when it removed anything."""
        try:
            report = self._service.run("schedule")
        except Conflict:  # a manual run is in progress: that one counts
            return False
        removed = report.run.steps
        return report.more or any(
            int(v) for name, step in removed.items() if name != "counters" for v in step.values()
        )

    def run_forever(self, stop: threading.Event) -> None:
        if not self._service.running:
            self._service.recover()
        self._schedule(self._first_delay_s)
        if stop.wait(self._first_delay_s):
            return
        while not stop.is_set():
            wait = self._service.config.interval_ms / 1000
            try:
                self.run_once()
                last = self._service.last
                if last is not None and last.more:
                    wait = CATCH_UP_S
            except Exception:  # recorded on the run; tried again next interval
                log.exception("maintenance sweep failed")
            self._schedule(wait)
            stop.wait(wait)

    def _schedule(self, wait: float) -> None:
        self._service.next_run_at = time.monotonic() + wait
        self._service.post_status()

    def release_leases(self) -> int:
        return 0  # holds no job leases


def declaration(worker: MaintenanceWorker) -> WorkerDeclaration:
    return WorkerDeclaration(name=NAME, job_types=(), factory=lambda: worker)
