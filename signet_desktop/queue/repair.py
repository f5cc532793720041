"""Queue repair: choose the jobs an action would change, and change exactly those.

Four actions, as Signet names them: `requeue` (dead jobs back to pending, attempts reset),
`release` (expired leases back to pending, or dead when their attempts are spent), `cancel`
(pending jobs to cancelled) and `prune` (finished jobs deleted). Each is narrowed by the
caller's agent and, optionally, ids, a job type, an age (`older_than_ms`, on the job's last
change), a case-insensitive substring of the error, and a batch bound; retired job types are
never touched. `plan` reads the rows an action would change; `apply`, in one write
transaction, selects with the same query and changes each of them, so a plan followed by an
apply with nothing in between changes exactly the planned rows.

On PostgreSQL (`CANDIDATES_PG`) the ids and retired types are text arrays, the substring test
is strpos, ties break by id, and an apply locks the rows it selected (`FOR UPDATE`), so a
lease or release by another daemon cannot change them between the select and the change.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import ClassVar, Literal, get_args

from signet_desktop.domain.events import Event
from signet_desktop.queue import jobs
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres

Action = Literal["requeue", "release", "cancel", "prune"]
ACTIONS: tuple[Action, ...] = get_args(Action)
DEFAULT_MAX_BATCH = 50
MAX_BATCH = 1000
MAX_IDS = 1000
CANCEL_REASON = "cancelled by queue repair"

# The state each action starts from (fixed fragments; values are always parameters).
_STATE = {
    "requeue": "status IN ('dead', 'failed')",
    "release": "status = 'leased' AND lease_expires_at < :now",
    "cancel": "status = 'pending'",
    "prune": "status IN ('completed', 'failed', 'dead', 'cancelled')",
}

CANDIDATES = """
SELECT {columns} FROM memory_jobs
WHERE agent_id = :agent_id AND job_type NOT IN (SELECT value FROM json_each(:retired))
  AND {state}
  AND (:no_ids OR id IN (SELECT value FROM json_each(:ids)))
  AND (:job_type IS NULL OR job_type = :job_type)
  AND (:cutoff IS NULL OR updated_at < :cutoff)
  AND (:pattern IS NULL OR instr(lower(COALESCE(error, '')), lower(:pattern)) > 0)
ORDER BY created_at, rowid
LIMIT :max_batch
"""

CANDIDATES_PG = """
SELECT {columns} FROM memory_jobs
WHERE agent_id = :agent_id AND job_type <> ALL(CAST(:retired AS text[]))
  AND {state}
  AND (:no_ids OR id = ANY(CAST(:ids AS text[])))
  AND (:job_type IS NULL OR job_type = :job_type)
  AND (:cutoff IS NULL OR updated_at < :cutoff)
  AND (:pattern IS NULL OR strpos(lower(COALESCE(error, '')), lower(:pattern)) > 0)
ORDER BY created_at, id
LIMIT :max_batch
"""


@dataclass(frozen=True, slots=True)
class RepairRequest:
    """What to repair; a dry run unless `dry_run` is False."""

    action: Action
    dry_run: bool = True
    ids: tuple[str, ...] = ()
    job_type: str | None = None
    older_than_ms: int | None = None
    error_pattern: str | None = None
    max_batch: int = DEFAULT_MAX_BATCH
    reason: str | None = None

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"unknown repair action {self.action!r}")
        if not 1 <= self.max_batch <= MAX_BATCH:
            raise ValueError(f"max_batch must be within 1..{MAX_BATCH}")
        if len(self.ids) > MAX_IDS:
            raise ValueError(f"at most {MAX_IDS} ids")
        if self.older_than_ms is not None and self.older_than_ms < 0:
            raise ValueError("older_than_ms must not be negative")


@dataclass(frozen=True, slots=True)
class RepairedJob:
    """One job an action changes (or would change): its state before and after."""

    id: str
    job_type: str
    attempts: int
    max_attempts: int
    error: str | None
    updated_at: str
    status: str
    to_status: str  # "deleted" for prune


@dataclass(frozen=True, slots=True)
class RepairOutcome:
    """The jobs changed (applied) or that would change (dry run)."""

    action: Action
    dry_run: bool
    jobs: tuple[RepairedJob, ...]

    @property
    def affected(self) -> int:
        return len(self.jobs)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(job.id for job in self.jobs)


@dataclass(frozen=True, slots=True, kw_only=True)
class QueueRepaired(Event):
    """An applied queue repair changed `affected` jobs of the agent (dry runs publish none)."""

    kind: ClassVar[str] = "queue.repaired"
    action: str
    affected: int


def _target(action: Action, job: jobs.Job) -> str:
    if action == "requeue":
        return "pending"
    if action == "release":
        return "dead" if job.attempts >= job.max_attempts else "pending"
    return "cancelled" if action == "cancel" else "deleted"


def _candidates(
    conn: Connection, agent_id: str, request: RepairRequest, now: datetime, *, lock: bool = False
) -> list[jobs.Job]:
    cutoff = None
    if request.older_than_ms is not None:
        cutoff = jobs.iso(now - timedelta(milliseconds=request.older_than_ms))
    postgres = is_postgres(conn)
    sql = (CANDIDATES_PG if postgres else CANDIDATES).format(
        columns=jobs.JOB_COLUMNS, state=_STATE[request.action]
    )
    if postgres and lock:
        sql += "FOR UPDATE\n"
    rows = conn.execute(
        sql,
        {
            "agent_id": agent_id,
            "retired": jobs.retired_param(conn),
            "now": jobs.iso(now),
            "no_ids": (not request.ids) if postgres else int(not request.ids),
            "ids": list(request.ids) if postgres else json.dumps(list(request.ids)),
            "job_type": request.job_type,
            "cutoff": cutoff,
            "pattern": request.error_pattern or None,
            "max_batch": request.max_batch,
        },
    ).fetchall()
    return [jobs.job_from_row(row) for row in rows]


def _repaired(action: Action, job: jobs.Job, to_status: str) -> RepairedJob:
    return RepairedJob(
        id=job.id,
        job_type=job.job_type,
        attempts=job.attempts,
        max_attempts=job.max_attempts,
        error=job.error,
        updated_at=job.updated_at,
        status=job.status,
        to_status=to_status,
    )


def plan(conn: Connection, agent_id: str, request: RepairRequest, now: datetime) -> RepairOutcome:
    """The jobs `request` would change now; reads only."""
    found = _candidates(conn, agent_id, request, now)
    changes = tuple(_repaired(request.action, job, _target(request.action, job)) for job in found)
    return RepairOutcome(request.action, True, changes)


def apply(conn: Connection, agent_id: str, request: RepairRequest, now: datetime) -> RepairOutcome:
    """Change the jobs `request` selects; call inside `db.write()` (one transaction)."""
    changed: list[RepairedJob] = []
    for job in _candidates(conn, agent_id, request, now, lock=True):
        to_status: str | None = _target(request.action, job)
        if request.action == "requeue":
            to_status = to_status if jobs.requeue(conn, job.id, now=now) else None
        elif request.action == "release":
            to_status = jobs.release_expired(conn, job, now=now)
        elif request.action == "cancel":
            reason = request.reason or CANCEL_REASON
            to_status = to_status if jobs.cancel(conn, job.id, now=now, reason=reason) else None
        else:
            to_status = to_status if jobs.delete_terminal(conn, job.id) else None
        if to_status is not None:
            changed.append(_repaired(request.action, job, to_status))
    return RepairOutcome(request.action, False, tuple(changed))
