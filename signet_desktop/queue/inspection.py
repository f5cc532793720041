"""Bounded reads of the queue for diagnostics and the inspector (retired job types left out).

`queue/jobs.py` owns the queue's lifecycle; these only look: one agent's jobs, its oldest
dead ones, the facts its health is judged by (`QueueFacts`) and the state changes over a
window the Queue pane's chart is rebuilt from (`timeline`).

Each statement has a PostgreSQL twin (`_PG`): the retired types as a text array instead of
json_each, and the job id where SQLite breaks ties by rowid.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from signet_desktop.queue.jobs import (
    JOB_COLUMNS,
    Job,
    iso,
    job_from_row,
    retired_param,
)
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres

AGENT_JOBS = f"""
SELECT {JOB_COLUMNS} FROM memory_jobs
WHERE agent_id = :agent_id AND job_type NOT IN (SELECT value FROM json_each(:retired))
  AND (:status IS NULL OR status = :status) AND (:job_type IS NULL OR job_type = :job_type)
ORDER BY updated_at DESC, rowid DESC
LIMIT :limit
"""

AGENT_JOBS_PG = f"""
SELECT {JOB_COLUMNS} FROM memory_jobs
WHERE agent_id = :agent_id AND job_type <> ALL(CAST(:retired AS text[]))
  AND (:status IS NULL OR status = :status) AND (:job_type IS NULL OR job_type = :job_type)
ORDER BY updated_at DESC, id DESC
LIMIT :limit
"""

OLDEST_DEAD = f"""
SELECT {JOB_COLUMNS} FROM memory_jobs
WHERE agent_id = :agent_id AND status = 'dead'
  AND job_type NOT IN (SELECT value FROM json_each(:retired))
ORDER BY COALESCE(failed_at, updated_at), rowid
LIMIT :limit
"""

OLDEST_DEAD_PG = f"""
SELECT {JOB_COLUMNS} FROM memory_jobs
WHERE agent_id = :agent_id AND status = 'dead' AND job_type <> ALL(CAST(:retired AS text[]))
ORDER BY COALESCE(failed_at, updated_at), id
LIMIT :limit
"""

QUEUE_FACTS = """
SELECT
  (SELECT MIN(created_at) FROM memory_jobs
   WHERE agent_id = :agent_id AND status = 'pending'
     AND job_type NOT IN (SELECT value FROM json_each(:retired))) AS oldest_pending,
  (SELECT COUNT(*) FROM memory_jobs
   WHERE agent_id = :agent_id AND status = 'leased'
     AND job_type NOT IN (SELECT value FROM json_each(:retired))
     AND (lease_expires_at < :now OR leased_at < :anomaly_before)) AS lease_anomalies,
  (SELECT COUNT(*) FROM memory_jobs
   WHERE agent_id = :agent_id AND status = 'dead'
     AND COALESCE(failed_at, updated_at) >= :since
     AND job_type NOT IN (SELECT value FROM json_each(:retired))) AS dead_recent,
  (SELECT COUNT(*) FROM memory_jobs
   WHERE agent_id = :agent_id AND status = 'completed'
     AND COALESCE(completed_at, updated_at) >= :since
     AND job_type NOT IN (SELECT value FROM json_each(:retired))) AS completed_recent
"""

QUEUE_FACTS_PG = """
SELECT
  (SELECT MIN(created_at) FROM memory_jobs
   WHERE agent_id = :agent_id AND status = 'pending'
     AND job_type <> ALL(CAST(:retired AS text[]))) AS oldest_pending,
  (SELECT COUNT(*) FROM memory_jobs
   WHERE agent_id = :agent_id AND status = 'leased'
     AND job_type <> ALL(CAST(:retired AS text[]))
     AND (lease_expires_at < :now OR leased_at < :anomaly_before)) AS lease_anomalies,
  (SELECT COUNT(*) FROM memory_jobs
   WHERE agent_id = :agent_id AND status = 'dead'
     AND COALESCE(failed_at, updated_at) >= :since
     AND job_type <> ALL(CAST(:retired AS text[]))) AS dead_recent,
  (SELECT COUNT(*) FROM memory_jobs
   WHERE agent_id = :agent_id AND status = 'completed'
     AND COALESCE(completed_at, updated_at) >= :since
     AND job_type <> ALL(CAST(:retired AS text[]))) AS completed_recent
"""


@dataclass(frozen=True, slots=True)
class QueueFacts:
    """What the queue's health is judged by, for one agent (retired types left out)."""

    oldest_pending_at: str | None
    lease_anomalies: int  # leases expired, or held longer than the anomaly age
    dead_recent: int  # dead in the recent window
    completed_recent: int  # completed in the recent window


def list_jobs(
    conn: Connection,
    agent_id: str,
    *,
    status: str | None = None,
    job_type: str | None = None,
    limit: int = 100,
) -> list[Job]:
    """One agent's jobs, most recently changed first (at most `limit`)."""
    params = {"agent_id": agent_id, "status": status, "job_type": job_type, "limit": limit}
    sql = AGENT_JOBS_PG if is_postgres(conn) else AGENT_JOBS
    return [job_from_row(r) for r in conn.execute(sql, {**params, "retired": retired_param(conn)})]


def oldest_dead(conn: Connection, agent_id: str, limit: int = 10) -> list[Job]:
    """The agent's dead jobs that died first (at most `limit`)."""
    params = {"agent_id": agent_id, "limit": limit, "retired": retired_param(conn)}
    sql = OLDEST_DEAD_PG if is_postgres(conn) else OLDEST_DEAD
    return [job_from_row(r) for r in conn.execute(sql, params)]


def queue_facts(
    conn: Connection, agent_id: str, *, now: datetime, anomaly_age_s: float, window_s: float
) -> QueueFacts:
    """The oldest pending job, lease anomalies and the recent dead / completed counts."""
    row = conn.execute(
        QUEUE_FACTS_PG if is_postgres(conn) else QUEUE_FACTS,
        {
            "agent_id": agent_id,
            "retired": retired_param(conn),
            "now": iso(now),
            "anomaly_before": iso(now - timedelta(seconds=anomaly_age_s)),
            "since": iso(now - timedelta(seconds=window_s)),
        },
    ).fetchone()
    return QueueFacts(
        oldest_pending_at=row["oldest_pending"],
        lease_anomalies=int(row["lease_anomalies"]),
        dead_recent=int(row["dead_recent"]),
        completed_recent=int(row["completed_recent"]),
    )


TIMELINE = """
SELECT status, created_at, leased_at, completed_at, failed_at, updated_at FROM memory_jobs
WHERE agent_id = :agent_id AND job_type NOT IN (SELECT value FROM json_each(:retired))
  AND (status IN ('pending', 'leased') OR updated_at >= :since)
ORDER BY updated_at DESC, rowid DESC
LIMIT :limit
"""


TIMELINE_PG = """
SELECT status, created_at, leased_at, completed_at, failed_at, updated_at FROM memory_jobs
WHERE agent_id = :agent_id AND job_type <> ALL(CAST(:retired AS text[]))
  AND (status IN ('pending', 'leased') OR updated_at >= :since)
ORDER BY updated_at DESC, id DESC
LIMIT :limit
"""


@dataclass(frozen=True, slots=True)
class TimelineRow:
    """A job's state and the moments it changed, for rebuilding counts over a window."""

    status: str
    created_at: str
    leased_at: str | None
    completed_at: str | None
    failed_at: str | None
    updated_at: str


def timeline(conn: Connection, agent_id: str, since: datetime, limit: int) -> list[TimelineRow]:
    """The agent's open jobs and those changed since `since` (at most `limit`, newest first)."""
    params = {
        "agent_id": agent_id,
        "retired": retired_param(conn),
        "since": iso(since),
        "limit": limit,
    }
    sql = TIMELINE_PG if is_postgres(conn) else TIMELINE
    return [TimelineRow(**dict(r)) for r in conn.execute(sql, params)]
