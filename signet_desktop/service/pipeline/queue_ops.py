"""Queue diagnostics and repair for one agent: counts, health, the jobs table, dry-run repair.

Backs `GET /api/diagnostics/queue`, `POST /api/diagnostics/queue/repair`, `signet repair
queue` and the inspector's Queue pane. Retired job types (`extract` in old databases) are
kept in the table but left out of every count, listing and repair here. A repair is a dry run
unless the request says otherwise; an applied repair that changes rows spends the action's
budget (Signet's `repair.requeueCooldownMs` between runs and `requeueHourlyBudget` per hour)
and publishes `queue.repaired`; a refused one changes nothing and says when to retry.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from signet_desktop.config.pipeline import RepairConfig
from signet_desktop.domain import scope
from signet_desktop.domain.events import DiscardEvents, EventSink
from signet_desktop.queue import inspection, jobs, repair
from signet_desktop.queue.repair import QueueRepaired, RepairOutcome, RepairRequest
from signet_desktop.storage.handle import DatabaseHandle

# Signet's queue health signals (docs/DIAGNOSTICS.md "queue"): deductions from 1.0.
DEPTH_THRESHOLD = 50
DEAD_RATE_THRESHOLD = 0.01
OLDEST_PENDING_THRESHOLD_S = 300
LEASE_ANOMALY_AGE_S = 600
DEAD_RATE_WINDOW_S = 86_400
OLDEST_DEAD_LIMIT = 10
MAX_LIST_LIMIT = 500
HOUR_S = 3600.0
HISTORY_WINDOW_S = 600
HISTORY_STEP_S = 20
HISTORY_ROWS = 5000  # bounded read; beyond it the oldest changes are left out
CHARTED = ("pending", "leased", "dead")


@dataclass(frozen=True, slots=True)
class Thresholds:
    """Where each queue signal starts to cost health."""

    depth: int = DEPTH_THRESHOLD
    dead_rate: float = DEAD_RATE_THRESHOLD
    oldest_pending_s: int = OLDEST_PENDING_THRESHOLD_S
    lease_anomaly_age_s: int = LEASE_ANOMALY_AGE_S
    dead_rate_window_s: int = DEAD_RATE_WINDOW_S


@dataclass(frozen=True, slots=True)
class QueueDiagnostics:
    """One agent's queue: counts per state (all and per type), signals, score, oldest dead."""

    agent_id: str
    counts: Mapping[str, int]
    job_types: Mapping[str, Mapping[str, int]]
    depth: int
    oldest_pending_age_s: float | None
    dead_rate: float
    lease_anomalies: int
    score: float
    status: str  # healthy | degraded | unhealthy
    oldest_dead: tuple[jobs.Job, ...]
    thresholds: Thresholds
    retired_job_types: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RepairResult:
    """A repair's outcome; `refused` (with `retry_after_s`) when its budget said no."""

    outcome: RepairOutcome
    message: str
    refused: bool = False
    retry_after_s: float = 0.0

    @property
    def success(self) -> bool:
        return not self.refused


class RepairBudget:
    """Per (agent, action): a cooldown between applied repairs and a budget per hour."""

    def __init__(self, config: RepairConfig, clock: Callable[[], float]) -> None:
        self._cooldown_s = config.requeue_cooldown_ms / 1000.0
        self._per_hour = config.requeue_hourly_budget
        self._clock = clock
        self._runs: dict[tuple[str, str], deque[float]] = {}
        self._lock = threading.Lock()

    def reserve(self, agent_id: str, action: str) -> tuple[float, str]:
        """Take one run of `action` now: (0, "") when allowed (call `refund` if it changed
        nothing), else the seconds until it may run and why. Check and take are one step,
        so two applies at once cannot both slip under the cooldown."""
        now = self._clock()
        with self._lock:
            runs = self._runs.setdefault((agent_id, action), deque())
            while runs and now - runs[0] >= HOUR_S:
                runs.popleft()
            if runs and now - runs[-1] < self._cooldown_s:
                return self._cooldown_s - (now - runs[-1]), "cooldown"
            if len(runs) >= self._per_hour:
                return HOUR_S - (now - runs[0]), "hourly budget"
            runs.append(now)
        return 0.0, ""

    def refund(self, agent_id: str, action: str) -> None:
        """Give back the run `reserve` took (the apply changed nothing, or failed)."""
        with self._lock:
            runs = self._runs.get((agent_id, action))
            if runs:
                runs.pop()


class QueueOps:
    """Diagnostics, listing and repair of the queue, always one agent's jobs."""

    def __init__(
        self,
        db: DatabaseHandle,
        *,
        config: RepairConfig | None = None,
        events: EventSink | None = None,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        clock: Callable[[], float] = time.monotonic,
        thresholds: Thresholds = Thresholds(),
    ) -> None:
        self._db = db
        self._events = events or DiscardEvents()
        self._now = now
        self._budget = RepairBudget(config or RepairConfig(), clock)
        self.thresholds = thresholds

    def diagnostics(self, agent_id: str) -> QueueDiagnostics:
        """Counts per state and type, the health signals and the oldest dead jobs."""
        scope.check_agent_id(agent_id)
        limits, now = self.thresholds, self._now()
        conn = self._db.reader()
        by_type = jobs.counts_by_type(conn, agent_id)
        facts = inspection.queue_facts(
            conn,
            agent_id,
            now=now,
            anomaly_age_s=limits.lease_anomaly_age_s,
            window_s=limits.dead_rate_window_s,
        )
        dead = inspection.oldest_dead(conn, agent_id, OLDEST_DEAD_LIMIT)
        total = {s: sum(c[s] for c in by_type.values()) for s in jobs.STATUSES}
        age = None
        if facts.oldest_pending_at is not None:
            started = datetime.fromisoformat(facts.oldest_pending_at.replace("Z", "+00:00"))
            age = max(0.0, round((now - started).total_seconds(), 3))
        finished = facts.dead_recent + facts.completed_recent
        dead_rate = round(facts.dead_recent / finished, 4) if finished else 0.0
        score = 1.0
        score -= 0.3 if total["pending"] > limits.depth else 0.0
        score -= 0.3 if dead_rate > limits.dead_rate else 0.0
        score -= 0.2 if age is not None and age > limits.oldest_pending_s else 0.0
        score -= 0.2 if facts.lease_anomalies else 0.0
        score = round(min(1.0, max(0.0, score)), 2)
        return QueueDiagnostics(
            agent_id=agent_id,
            counts=total,
            job_types=by_type,
            depth=total["pending"],
            oldest_pending_age_s=age,
            dead_rate=dead_rate,
            lease_anomalies=facts.lease_anomalies,
            score=score,
            status="healthy" if score >= 0.8 else "degraded" if score >= 0.5 else "unhealthy",
            oldest_dead=tuple(dead),
            thresholds=limits,
            retired_job_types=jobs.RETIRED_JOB_TYPES,
        )

    def jobs(
        self,
        agent_id: str,
        *,
        status: str | None = None,
        job_type: str | None = None,
        limit: int = 100,
    ) -> list[jobs.Job]:
        """The agent's jobs, most recently changed first (the inspector's jobs table)."""
        scope.check_agent_id(agent_id)
        limit = max(1, min(limit, MAX_LIST_LIMIT))
        return inspection.list_jobs(
            self._db.reader(), agent_id, status=status, job_type=job_type, limit=limit
        )

    def history(
        self,
        agent_id: str,
        *,
        window_s: int = HISTORY_WINDOW_S,
        step_s: int = HISTORY_STEP_S,
    ) -> list[tuple[float, dict[str, int]]]:
        """Pending, leased and dead counts every `step_s` over the last `window_s`, rebuilt
        from the jobs' timestamps: `[(seconds ago, counts)]`, oldest first. Approximate for a
        job that was retried (only its last lease is known) and for rows past HISTORY_ROWS."""
        scope.check_agent_id(agent_id)
        now = self._now()
        conn = self._db.reader()
        rows = inspection.timeline(conn, agent_id, now - timedelta(seconds=window_s), HISTORY_ROWS)
        dead_now = jobs.counts_by_type(conn, agent_id)
        dead_before = sum(c["dead"] for c in dead_now.values())
        dead_before -= sum(row.status == "dead" for row in rows)  # dead all window long
        parsed = [_moments(row) for row in rows]
        samples = []
        for ago in range(window_s, -1, -step_s):
            at = now - timedelta(seconds=ago)
            counts = dict.fromkeys(CHARTED, 0)
            counts["dead"] = max(0, dead_before)
            for status, moments in parsed:
                state = _state_at(status, moments, at)
                if state in counts:
                    counts[state] += 1
            samples.append((float(ago), counts))
        return samples

    def repair(self, agent_id: str, request: RepairRequest) -> RepairResult:
        """Plan (dry run, the default) or apply `request` to the agent's jobs."""
        scope.check_agent_id(agent_id)
        if request.dry_run:
            outcome = repair.plan(self._db.reader(), agent_id, request, self._now())
            return RepairResult(outcome, _message(outcome))
        wait, why = self._budget.reserve(agent_id, request.action)
        if wait > 0:
            refused = RepairOutcome(request.action, False, ())
            message = f"{request.action} refused by its {why}; retry in {wait:.0f} s"
            return RepairResult(refused, message, refused=True, retry_after_s=wait)
        try:
            with self._db.write() as conn:
                outcome = repair.apply(conn, agent_id, request, self._now())
        except BaseException:
            self._budget.refund(agent_id, request.action)
            raise
        if not outcome.affected:
            self._budget.refund(agent_id, request.action)  # a no-op spends nothing
        else:
            self._events.publish(
                QueueRepaired(agent_id=agent_id, action=request.action, affected=outcome.affected)
            )
        return RepairResult(outcome, _message(outcome))


Moments = tuple[datetime, datetime | None, datetime | None, datetime | None, datetime]


def _when(stamp: str | None) -> datetime | None:
    return None if stamp is None else datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def _moments(row: inspection.TimelineRow) -> tuple[str, Moments]:
    created, updated = _when(row.created_at), _when(row.updated_at)
    assert created is not None and updated is not None
    return row.status, (
        created,
        _when(row.leased_at),
        _when(row.completed_at),
        _when(row.failed_at),
        updated,
    )


def _state_at(status: str, moments: Moments, at: datetime) -> str | None:
    """What the job was at `at`, as far as its timestamps tell."""
    created, leased, completed, failed, updated = moments
    if at < created:
        return None
    if status == "dead" and failed is not None and failed <= at:
        return "dead"
    if status == "completed" and completed is not None and completed <= at:
        return "completed"
    if status == "cancelled" and updated <= at:
        return "cancelled"
    if leased is None or at < leased:
        return "pending"
    if status == "leased":
        return "leased"
    # The last lease ended when the job completed, failed, or was given back (updated_at).
    ended = completed if status == "completed" else failed or updated
    return "leased" if ended is None or at < ended else "pending"


VERBS = {
    "requeue": "requeued to pending",
    "release": "released from an expired lease",
    "cancel": "cancelled",
    "prune": "pruned",
}


def _message(outcome: RepairOutcome) -> str:
    verb = VERBS[outcome.action]
    n = outcome.affected
    noun = "job" if n == 1 else "jobs"
    if outcome.dry_run:
        return f"dry run: {n} {noun} would be {verb}; nothing changed"
    return f"{n} {noun} {verb}" if n else "nothing to do: no job matched; nothing changed"
