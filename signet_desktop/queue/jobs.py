"""A durable, generic job queue over `memory_jobs`.

Lifecycle: pending -> leased -> completed; a failed attempt goes back to pending after a
backoff, or to dead once `max_attempts` is spent. Leasing happens in the caller's write
transaction (oldest eligible pending first, marked leased, attempts + 1, a fresh lease token
and expiry), so two workers can never hold the same job. The work itself (provider calls)
happens outside any transaction; `complete` / `fail` then need the lease token, so a worker
whose lease expired and was released cannot overwrite the job's newer state.

On PostgreSQL several daemons lease from one table. The lease is one statement (`LEASE_PG`):
the oldest eligible rows are locked `FOR UPDATE SKIP LOCKED` and marked leased, so a second
daemon's concurrent lease passes over them, and under READ COMMITTED a row another daemon
leased meanwhile no longer matches `status = 'pending'` when it is re-checked. Lease moments
(lease, renew, expiry checks, retry times) come from the server's clock there, so daemons
with skewed clocks still agree on when a lease expired. Stale-lease recovery locks the rows
it releases the same way (a heartbeat and a release cannot cross), and releases only expired
leases: "orphans" (held by no worker here) may be another live daemon's.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from signet_desktop.domain.memory import utc_now
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres, lock_until_commit
from signet_desktop.storage.guard import in_write_transaction

DEFAULT_LEASE_MS = 300_000
DEFAULT_MAX_ATTEMPTS = 3
BACKOFF_BASE_S = 30.0
BACKOFF_MAX_S = 3600.0
MAX_ERROR_CHARS = 2000
STATUSES = ("pending", "leased", "completed", "failed", "dead", "cancelled")
TERMINAL_STATUSES = ("completed", "failed", "dead", "cancelled")
# Job types no worker consumes any more: Signet's semantic `extract` stage was retired. Old
# databases keep their rows (never deleted, released or requeued here); bounded diagnostics,
# counts and repairs leave them out.
RETIRED_JOB_TYPES = ("extract",)
_RETIRED = json.dumps(list(RETIRED_JOB_TYPES))

JOB_COLUMNS = (
    "id, agent_id, job_type, status, memory_id, document_id, payload, result, attempts, "
    "max_attempts, lease_token, leased_at, lease_expires_at, run_after, completed_at, "
    "failed_at, error, created_at, updated_at"
)

INSERT_JOB = """
INSERT INTO memory_jobs (id, agent_id, job_type, status, memory_id, document_id, payload,
                         max_attempts, run_after, created_at, updated_at)
VALUES (:id, :agent_id, :job_type, 'pending', :memory_id, :document_id, :payload,
        :max_attempts, :run_after, :now, :now)
"""

# PostgreSQL: daemons sharing the queue may enqueue for the same memory at once (one noticed
# the write, another's backfill scan found it); under READ COMMITTED both would see no open
# job and insert. A transaction-level advisory lock per job type, taken before the check and
# held until the enqueuing transaction ends, makes the second see the first's job. One key
# per type, not per memory: a batch enqueue then cannot deadlock with another.
DEDUPE_LOCK_PREFIX = "signet.memory_jobs.dedupe:"

OPEN_JOB_FOR_MEMORY = f"""
SELECT {JOB_COLUMNS} FROM memory_jobs
WHERE job_type = :job_type AND memory_id = :memory_id AND status IN ('pending', 'leased')
ORDER BY created_at LIMIT 1
"""

# One job type at a time, so the (job_type, status, created_at) index yields them in order;
# `exclude` holds the ids whose handlers are still running in this process (see lease()).
ELIGIBLE = """
SELECT id, created_at, rowid AS seq FROM memory_jobs
WHERE job_type = :job_type AND status = 'pending' AND (run_after IS NULL OR run_after <= :now)
  AND id NOT IN (SELECT value FROM json_each(:exclude))
ORDER BY created_at, rowid
LIMIT :limit
"""

# PostgreSQL: choose and mark in one statement, skipping rows another daemon holds locked.
# MATERIALIZED: the choice is made once; a subquery the planner re-scanned would skip
# different rows each time and lease more than `limit`.
LEASE_PG = f"""
WITH picked AS MATERIALIZED (
    SELECT id FROM memory_jobs
    WHERE job_type = ANY(CAST(:types AS text[])) AND status = 'pending'
      AND (run_after IS NULL OR run_after <= :now)
      AND NOT (id = ANY(CAST(:exclude AS text[])))
    ORDER BY created_at, id
    LIMIT :limit
    FOR UPDATE SKIP LOCKED)
UPDATE memory_jobs
SET status = 'leased', attempts = attempts + 1, lease_token = gen_random_uuid()::text,
    leased_at = :now, lease_expires_at = :expires, updated_at = :now
WHERE status = 'pending' AND id IN (SELECT id FROM picked)
RETURNING {JOB_COLUMNS}
"""

SERVER_NOW_PG = "SELECT statement_timestamp() AS now"

MARK_LEASED = f"""
UPDATE memory_jobs
SET status = 'leased', attempts = attempts + 1, lease_token = :token, leased_at = :now,
    lease_expires_at = :expires, updated_at = :now
WHERE id = :id AND status = 'pending'
RETURNING {JOB_COLUMNS}
"""

COMPLETE = """
UPDATE memory_jobs
SET status = 'completed', result = :result, completed_at = :now, lease_token = NULL,
    lease_expires_at = NULL, error = NULL, updated_at = :now
WHERE id = :id AND status = 'leased' AND lease_token = :token
"""

RETRY = """
UPDATE memory_jobs
SET status = :status, error = :error, failed_at = :now, run_after = :run_after,
    lease_token = NULL, lease_expires_at = NULL, updated_at = :now
WHERE id = :id AND status = 'leased' AND lease_token = :token
"""

STALE = f"""
SELECT {JOB_COLUMNS} FROM memory_jobs
WHERE status = 'leased'
  AND (job_type = :job_type
       OR (:job_type IS NULL AND job_type NOT IN (SELECT value FROM json_each(:retired))))
  AND (lease_expires_at < :now
       OR (:orphans AND id NOT IN (SELECT value FROM json_each(:exclude))))
"""

STALE_PG = f"""
SELECT {JOB_COLUMNS} FROM memory_jobs
WHERE status = 'leased'
  AND (job_type = :job_type
       OR (:job_type IS NULL AND job_type <> ALL(CAST(:retired AS text[]))))
  AND lease_expires_at < :now
ORDER BY created_at, id
FOR UPDATE SKIP LOCKED
"""

RELEASE = """
UPDATE memory_jobs
SET status = :status, lease_token = NULL, lease_expires_at = NULL, updated_at = :now,
    error = COALESCE(error, :error),
    failed_at = CASE WHEN :status = 'dead' THEN :now ELSE failed_at END
WHERE id = :id AND status = 'leased'
"""

RELEASE_HELD = """
UPDATE memory_jobs
SET status = :status, attempts = attempts - :refund, lease_token = NULL, lease_expires_at = NULL,
    error = COALESCE(:error, error),
    failed_at = CASE WHEN :status = 'dead' THEN :now ELSE failed_at END, updated_at = :now
WHERE id = :id AND status = 'leased' AND lease_token = :token
"""

COUNTS_BY_TYPE = """
SELECT job_type, status, COUNT(*) AS n FROM memory_jobs
WHERE (:agent_id IS NULL OR agent_id = :agent_id)
  AND job_type NOT IN (SELECT value FROM json_each(:retired))
GROUP BY job_type, status
"""

COUNTS = """
SELECT status, COUNT(*) AS n FROM memory_jobs
WHERE (job_type = :job_type
       OR (:job_type IS NULL AND job_type NOT IN (SELECT value FROM json_each(:retired))))
GROUP BY status
"""

COUNTS_BY_TYPE_PG = """
SELECT job_type, status, COUNT(*) AS n FROM memory_jobs
WHERE (:agent_id IS NULL OR agent_id = :agent_id)
  AND job_type <> ALL(CAST(:retired AS text[]))
GROUP BY job_type, status
"""

COUNTS_PG = """
SELECT status, COUNT(*) AS n FROM memory_jobs
WHERE (job_type = :job_type
       OR (:job_type IS NULL AND job_type <> ALL(CAST(:retired AS text[]))))
GROUP BY status
"""


@dataclass(frozen=True, slots=True)
class Job:
    """One row of the queue."""

    id: str
    agent_id: str
    job_type: str
    status: str
    memory_id: str | None
    document_id: str | None
    payload: Mapping[str, Any]
    result: str | None
    attempts: int
    max_attempts: int
    lease_token: str | None
    leased_at: str | None
    lease_expires_at: str | None
    run_after: str | None
    completed_at: str | None
    failed_at: str | None
    error: str | None
    created_at: str
    updated_at: str


@dataclass(frozen=True, slots=True)
class ReleaseReport:
    """Stale leases found: how many went back to pending and how many are now dead
    (`dead_jobs`: those jobs as they were, for their `job.dead` events; not compared)."""

    released: int
    dead: int
    dead_jobs: tuple[Job, ...] = field(default=(), compare=False)


def _job(row: Any) -> Job:
    values = {name.strip(): row[name.strip()] for name in JOB_COLUMNS.split(",")}
    values["payload"] = json.loads(values["payload"] or "{}")
    return Job(**values)


def job_from_row(row: Any) -> Job:
    """A `SELECT {JOB_COLUMNS}` row as a Job (for queue modules that select their own rows)."""
    return _job(row)


def iso(moment: datetime) -> str:
    """A moment as the queue stores it (UTC, milliseconds, `Z`)."""
    return _iso(moment)


def retired_param(conn: Connection) -> str | list[str]:
    """The retired job types as `:retired` is bound: JSON text for SQLite's json_each, a
    text array on PostgreSQL."""
    return list(RETIRED_JOB_TYPES) if is_postgres(conn) else _RETIRED


def moment_of(conn: Connection, now: datetime | None = None) -> datetime:
    """`now` if given; else the server's clock on PostgreSQL (every daemon reads the same
    one), this machine's on SQLite."""
    if now is not None:
        return now
    if is_postgres(conn):
        found: datetime = conn.execute(SERVER_NOW_PG).fetchone()["now"]
        return found.astimezone(UTC)
    return datetime.now(UTC)


def _require_write(conn: Connection) -> None:
    if not in_write_transaction():
        raise RuntimeError("queue mutations must run inside db.write()")


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def lock_dedupe(conn: Connection, job_type: str) -> None:
    """On PostgreSQL, serialise deduplicating enqueues of `job_type` across daemons until the
    caller's write transaction ends (`lock_until_commit`); on SQLite the write lock does it.
    Take it before any check the enqueue depends on; taking it again is free."""
    _require_write(conn)
    lock_until_commit(conn, DEDUPE_LOCK_PREFIX + job_type)


def enqueue(
    conn: Connection,
    job_type: str,
    *,
    agent_id: str,
    memory_id: str | None = None,
    document_id: str | None = None,
    payload: Mapping[str, Any] | None = None,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    dedupe_memory: bool = False,
    run_after: str | None = None,
) -> tuple[Job, bool]:
    """Queue a job; with `dedupe_memory`, return the open job of that memory instead.

    Returns (job, created).
    """
    _require_write(conn)
    if max_attempts < 1:
        raise ValueError("max_attempts must be at least 1")
    if dedupe_memory and memory_id is not None:
        lock_dedupe(conn, job_type)
        row = conn.execute(
            OPEN_JOB_FOR_MEMORY, {"job_type": job_type, "memory_id": memory_id}
        ).fetchone()
        if row is not None:
            return _job(row), False
    job_id = str(uuid.uuid4())
    conn.execute(
        INSERT_JOB,
        {
            "id": job_id,
            "agent_id": agent_id,
            "job_type": job_type,
            "memory_id": memory_id,
            "document_id": document_id,
            "payload": json.dumps(dict(payload or {}), ensure_ascii=False),
            "max_attempts": max_attempts,
            "run_after": run_after,
            "now": utc_now(),
        },
    )
    job = get_job(conn, job_id)
    assert job is not None
    return job, True


def lease(
    conn: Connection,
    job_type: str | Sequence[str],
    *,
    limit: int = 1,
    lease_ms: int = DEFAULT_LEASE_MS,
    now: datetime | None = None,
    exclude: Collection[str] = (),
) -> list[Job]:
    """Lease up to `limit` of the oldest eligible pending jobs of `job_type` (one or several).

    Jobs whose ids are in `exclude` are skipped: a worker passes the jobs whose handlers are
    still running here, so a job released by stale-lease recovery while its first handler
    hangs is never run twice at the same time. On PostgreSQL, rows another daemon is leasing
    right now are skipped too (`LEASE_PG`).
    """
    _require_write(conn)
    types = [job_type] if isinstance(job_type, str) else list(dict.fromkeys(job_type))
    moment = moment_of(conn, now)
    stamp = _iso(moment)
    expires = _iso(moment + timedelta(milliseconds=lease_ms))
    if is_postgres(conn):
        params = {"types": types, "exclude": sorted(exclude), "limit": limit}
        rows = conn.execute(LEASE_PG, {**params, "now": stamp, "expires": expires}).fetchall()
        return sorted((_job(r) for r in rows), key=lambda job: (job.created_at, job.id))
    skip = json.dumps(sorted(exclude))
    found = [
        (str(r["created_at"]), int(r["seq"]), str(r["id"]))
        for kind in types
        for r in conn.execute(
            ELIGIBLE, {"job_type": kind, "now": stamp, "limit": limit, "exclude": skip}
        ).fetchall()
    ]
    leased = []
    for _, _, job_id in sorted(found)[:limit]:
        token = str(uuid.uuid4())
        row = conn.execute(
            MARK_LEASED, {"id": job_id, "token": token, "now": stamp, "expires": expires}
        ).fetchone()
        if row is not None:
            leased.append(_job(row))
    return leased


def complete(conn: Connection, job: Job, result: Mapping[str, Any] | None = None) -> bool:
    """Mark a leased job completed; False when the lease was lost meanwhile."""
    _require_write(conn)
    cursor = conn.execute(
        COMPLETE,
        {
            "id": job.id,
            "token": job.lease_token,
            "result": json.dumps(dict(result or {}), ensure_ascii=False),
            "now": utc_now(),
        },
    )
    return int(cursor.rowcount) == 1


def backoff_seconds(attempts: int) -> float:
    """Delay before retry number `attempts` (30 s, 60 s, 120 s, ... capped at an hour)."""
    return float(min(BACKOFF_MAX_S, BACKOFF_BASE_S * 2.0 ** max(0, attempts - 1)))


def fail(
    conn: Connection,
    job: Job,
    error: str,
    *,
    now: datetime | None = None,
    retry_in_s: float | None = None,
    final: bool = False,
) -> str | None:
    """Record a failed attempt: back to pending after a backoff, or dead at max attempts (or
    at once when `final`: a failure no retry can fix).

    The delay is `retry_in_s` when given, else `backoff_seconds(job.attempts)`. Returns the
    new status, or None when the lease was lost meanwhile.
    """
    _require_write(conn)
    moment = moment_of(conn, now)
    dead = final or job.attempts >= job.max_attempts
    status = "dead" if dead else "pending"
    delay = backoff_seconds(job.attempts) if retry_in_s is None else retry_in_s
    run_after = None if dead else _iso(moment + timedelta(seconds=delay))
    cursor = conn.execute(
        RETRY,
        {
            "id": job.id,
            "token": job.lease_token,
            "status": status,
            "error": error[:MAX_ERROR_CHARS],
            "run_after": run_after,
            "now": _iso(moment),
        },
    )
    return status if int(cursor.rowcount) == 1 else None


def release_stale(
    conn: Connection,
    *,
    job_type: str | None = None,
    now: datetime | None = None,
    orphans: bool = False,
    exclude: Collection[str] = (),
) -> ReleaseReport:
    """Return expired leases to pending, or to dead when their attempts are spent.

    With `orphans`, every lease not in `exclude` is stale too, expired or not: at start-up
    the workspace lock guarantees that no other process holds one, so a leased job that no
    worker here is running was orphaned by a process that died mid-job. Not on PostgreSQL:
    other daemons share the queue, so a lease no worker here holds may be running elsewhere;
    there a dead daemon's leases come back when they expire, and `orphans` is ignored.
    """
    _require_write(conn)
    stamp = _iso(moment_of(conn, now))
    released = 0
    died: list[Job] = []
    postgres = is_postgres(conn)
    params = {
        "now": stamp,
        "job_type": job_type,
        "orphans": int(orphans and not postgres),
        "exclude": json.dumps(sorted(exclude)),
        "retired": retired_param(conn),
    }
    for job in [_job(r) for r in conn.execute(STALE_PG if postgres else STALE, params)]:
        status = "dead" if job.attempts >= job.max_attempts else "pending"
        cursor = conn.execute(
            RELEASE,
            {"id": job.id, "status": status, "now": stamp, "error": "lease expired"},
        )
        if int(cursor.rowcount) != 1:
            continue
        if status == "dead":
            died.append(job)
        released += status == "pending"
    return ReleaseReport(released, len(died), tuple(died))


def release(conn: Connection, job: Job, *, started: bool, error: str | None = None) -> str | None:
    """Give a held lease back: to pending, or to dead when a started job spent its attempts.

    A job that was leased but never `started` gets its attempt back. Needs the lease token,
    so it does nothing (returns None) once the lease was lost; else returns the new status.
    """
    _require_write(conn)
    dead = started and job.attempts >= job.max_attempts
    status = "dead" if dead else "pending"
    cursor = conn.execute(
        RELEASE_HELD,
        {
            "id": job.id,
            "token": job.lease_token,
            "status": status,
            "refund": 0 if started else 1,
            "error": None if error is None else error[:MAX_ERROR_CHARS],
            "now": utc_now(),
        },
    )
    return status if int(cursor.rowcount) == 1 else None


RENEW = """
UPDATE memory_jobs SET lease_expires_at = :expires, updated_at = :now
WHERE id = :id AND status = 'leased' AND lease_token = :token
"""


def renew(conn: Connection, job: Job, *, lease_ms: int = DEFAULT_LEASE_MS) -> bool:
    """Extend a held lease by `lease_ms` from now (a long handler's heartbeat); False if lost."""
    _require_write(conn)
    moment = moment_of(conn)
    params = {
        "id": job.id,
        "token": job.lease_token,
        "expires": _iso(moment + timedelta(milliseconds=lease_ms)),
        "now": _iso(moment),
    }
    return int(conn.execute(RENEW, params).rowcount) == 1


def get_job(conn: Connection, job_id: str) -> Job | None:
    """One job by id."""
    row = conn.execute(
        f"SELECT {JOB_COLUMNS} FROM memory_jobs WHERE id = :id", {"id": job_id}
    ).fetchone()
    return _job(row) if row else None


def counts(conn: Connection, job_type: str | None = None) -> dict[str, int]:
    """Jobs per status (every status present, zero when none); without `job_type`, every
    type but the retired ones."""
    params = {"job_type": job_type, "retired": retired_param(conn)}
    sql = COUNTS_PG if is_postgres(conn) else COUNTS
    found = {str(r["status"]): int(r["n"]) for r in conn.execute(sql, params)}
    return {status: found.get(status, 0) for status in STATUSES}


def counts_by_type(conn: Connection, agent_id: str | None = None) -> dict[str, dict[str, int]]:
    """`{job_type: {status: n}}` over the queue (one agent's jobs, or all), every status
    present; retired job types are left out."""
    found: dict[str, dict[str, int]] = {}
    params = {"agent_id": agent_id, "retired": retired_param(conn)}
    sql = COUNTS_BY_TYPE_PG if is_postgres(conn) else COUNTS_BY_TYPE
    for row in conn.execute(sql, params):
        found.setdefault(str(row["job_type"]), dict.fromkeys(STATUSES, 0))[str(row["status"])] = (
            int(row["n"])
        )
    return found


# -- repair mutations (queue/repair.py chooses the rows; these change only those) ----------

REQUEUE = """
UPDATE memory_jobs
SET status = 'pending', attempts = 0, run_after = NULL, lease_token = NULL,
    lease_expires_at = NULL, updated_at = :now
WHERE id = :id AND status IN ('dead', 'failed')
"""

CANCEL = """
UPDATE memory_jobs
SET status = 'cancelled', completed_at = :now, run_after = NULL, updated_at = :now,
    result = :result
WHERE id = :id AND status = 'pending'
"""

DELETE_TERMINAL = """
DELETE FROM memory_jobs
WHERE id = :id AND status IN ('completed', 'failed', 'dead', 'cancelled')
"""


def requeue(conn: Connection, job_id: str, *, now: datetime) -> bool:
    """A dead (or failed) job back to pending with its attempts reset; False if it is not."""
    _require_write(conn)
    return int(conn.execute(REQUEUE, {"id": job_id, "now": _iso(now)}).rowcount) == 1


def release_expired(conn: Connection, job: Job, *, now: datetime) -> str | None:
    """An expired lease given back: pending, or dead when its attempts are spent."""
    _require_write(conn)
    status = "dead" if job.attempts >= job.max_attempts else "pending"
    params = {"id": job.id, "status": status, "now": _iso(now), "error": "lease expired"}
    return status if int(conn.execute(RELEASE, params).rowcount) == 1 else None


def cancel(conn: Connection, job_id: str, *, now: datetime, reason: str | None = None) -> bool:
    """A pending job cancelled (terminal; kept until pruned); False if it is not pending."""
    _require_write(conn)
    result = json.dumps({"cancelled": (reason or "cancelled")[:MAX_ERROR_CHARS]})
    params = {"id": job_id, "now": _iso(now), "result": result}
    return int(conn.execute(CANCEL, params).rowcount) == 1


def delete_terminal(conn: Connection, job_id: str) -> bool:
    """Remove one finished job (completed, failed, dead or cancelled); False otherwise."""
    _require_write(conn)
    return int(conn.execute(DELETE_TERMINAL, {"id": job_id}).rowcount) == 1


# -- retention (service/retention.py): terminal history older than its window -------------

PRUNE_TERMINAL = """
DELETE FROM memory_jobs WHERE id IN (
    SELECT id FROM memory_jobs
    WHERE status = :status AND COALESCE(completed_at, failed_at, updated_at) < :before
      AND job_type NOT IN (SELECT value FROM json_each(:retired))
    LIMIT :limit)
"""

PRUNE_TERMINAL_PG = """
DELETE FROM memory_jobs WHERE id IN (
    SELECT id FROM memory_jobs
    WHERE status = :status AND COALESCE(completed_at, failed_at, updated_at) < :before
      AND job_type <> ALL(CAST(:retired AS text[]))
    LIMIT :limit)
"""


def prune_terminal(conn: Connection, status: str, before: str, limit: int) -> int:
    """Delete up to `limit` jobs in terminal `status` that ended before `before` (retired
    types are kept, as everywhere here); how many went."""
    _require_write(conn)
    if status not in TERMINAL_STATUSES:
        raise ValueError(f"not a terminal status: {status!r}")
    params = {"status": status, "before": before, "retired": retired_param(conn), "limit": limit}
    sql = PRUNE_TERMINAL_PG if is_postgres(conn) else PRUNE_TERMINAL
    return int(conn.execute(sql, params).rowcount)
