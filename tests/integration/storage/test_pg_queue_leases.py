"""The job queue on PostgreSQL with several daemons: two `PgDatabase` handles on one database
stand for two daemons (each with its own in-process write lock and running-job set).

A job is leased by exactly one of them (`FOR UPDATE SKIP LOCKED`), a daemon's first step
does not release another live daemon's leases, a dead daemon's lease comes back only once it
expired, and the lifecycle, inspection and repair statements all run there."""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from support.queue_jobs import add, fill_queue

from signet_desktop.queue import inspection, jobs, repair
from signet_desktop.queue.worker import QueueWorker, WorkerSettings
from signet_desktop.storage.postgres.connect import connect_postgres
from signet_desktop.storage.postgres.database import PgDatabase

pytestmark = pytest.mark.postgres

JOB = "test_job"
FAST = WorkerSettings(poll_s=0.01, max_backoff_s=0.05, retry_in_s=lambda attempts: 0.0)


def test_two_daemons_racing_lease_every_job_exactly_once(
    daemons: tuple[PgDatabase, PgDatabase],
) -> None:
    """Two workers per daemon drain 60 jobs; no job runs twice, none is left behind. Each
    worker's first step is the start-up orphan release, taken while the others hold leases."""
    a, b = daemons
    ids = [add(a, JOB, payload={"n": n}) for n in range(60)]
    runs: Counter[str] = Counter()
    counted = threading.Lock()

    def handler(job: jobs.Job) -> dict[str, int]:
        with counted:
            runs[job.id] += 1
        time.sleep(0.005)  # hold the lease while the other workers step
        return {"n": int(job.payload["n"])}

    def drain(db: PgDatabase, name: str) -> None:
        worker = QueueWorker(db, name=name, job_types=[JOB], handler=handler, settings=FAST)
        idle = 0
        while idle < 3:
            idle = 0 if worker.run_once() else idle + 1

    threads = [
        threading.Thread(target=drain, args=(db, f"{label}{n}"))
        for n in range(2)
        for db, label in ((a, "a"), (b, "b"))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(runs) == sorted(ids)
    assert set(runs.values()) == {1}
    assert jobs.counts(a.reader(), JOB)["completed"] == 60
    attempts = {r["attempts"] for r in a.reader().execute("SELECT attempts FROM memory_jobs")}
    assert attempts == {1}


def test_a_lease_skips_a_row_another_daemon_holds_locked(
    daemons: tuple[PgDatabase, PgDatabase], pg_url: str
) -> None:
    """The oldest job is locked by another transaction: the lease takes the next one at once
    instead of waiting for it, and never the locked one."""
    a, b = daemons
    first, second = add(a, JOB), add(a, JOB)
    other = connect_postgres(pg_url)
    try:
        other.execute("BEGIN")
        other.execute("SELECT id FROM memory_jobs WHERE id = :id FOR UPDATE", {"id": first})
        started = time.monotonic()
        with b.write() as conn:
            leased = jobs.lease(conn, JOB, limit=2)
        assert time.monotonic() - started < 2
        assert [job.id for job in leased] == [second]
        other.execute("ROLLBACK")
    finally:
        other.close()
    with a.write() as conn:
        assert [job.id for job in jobs.lease(conn, JOB)] == [first]


def test_a_killed_daemons_lease_comes_back_only_after_it_expired(
    daemons: tuple[PgDatabase, PgDatabase],
) -> None:
    """A leases and dies mid-job (its connections closed, the lease left). B's first step (the
    orphan release that SQLite does at start-up) leaves it alone: on PostgreSQL it may be a
    live daemon's. Once the lease expired on the server's clock, B releases and leases it."""
    a, b = daemons
    job_id = add(a, JOB)
    with a.write() as conn:
        (held,) = jobs.lease(conn, JOB, lease_ms=1_500)
    a.close()  # killed: nothing settles the job

    ran: list[str] = []

    def handler(job: jobs.Job) -> None:
        ran.append(job.id)

    settings = WorkerSettings(poll_s=0.01, stale_check_s=0.0)
    worker = QueueWorker(b, name="b", job_types=[JOB], handler=handler, settings=settings)
    assert not worker.run_once()  # first step: orphans released here on SQLite, not on PG
    assert ran == []
    row = jobs.get_job(b.reader(), job_id)
    assert row is not None and row.status == "leased" and row.lease_token == held.lease_token

    time.sleep(1.6)
    assert worker.run_once()
    assert ran == [job_id]
    done = jobs.get_job(b.reader(), job_id)
    assert done is not None and done.status == "completed" and done.attempts == 2


def test_stale_release_skips_a_lease_being_renewed(
    daemons: tuple[PgDatabase, PgDatabase], pg_url: str
) -> None:
    """A renewal holds the row's lock: a release running meanwhile passes over it, and the
    renewed lease stays its holder's."""
    a, b = daemons
    add(a, JOB)
    with a.write() as conn:
        (held,) = jobs.lease(conn, JOB, lease_ms=60_000)
    renewing = connect_postgres(pg_url)
    try:
        renewing.execute("BEGIN")
        far = "9999-01-01T00:00:00.000Z"
        params = {"id": held.id, "token": held.lease_token, "expires": far, "now": far}
        assert renewing.execute(jobs.RENEW, params).rowcount == 1
        later = datetime.now(UTC) + timedelta(hours=1)
        with b.write() as conn:
            report = jobs.release_stale(conn, job_type=JOB, now=later)
        assert report == jobs.ReleaseReport(0, 0)
        renewing.execute("COMMIT")
    finally:
        renewing.close()
    with a.write() as conn:
        assert jobs.complete(conn, held, {"ok": True})


def test_the_lifecycle_runs_on_postgres(daemons: tuple[PgDatabase, PgDatabase]) -> None:
    """Enqueue (deduplicated), lease across types in age order, renew, fail with a retry,
    release, complete, count; a lost token settles nothing."""
    db, _ = daemons
    with db.write() as conn:
        first, created = jobs.enqueue(conn, "a", agent_id="ag", memory_id="m1", dedupe_memory=True)
        again, created_again = jobs.enqueue(conn, "a", agent_id="ag", memory_id="m1",
                                            dedupe_memory=True)  # fmt: skip
        second, _ = jobs.enqueue(conn, "b", agent_id="ag", payload={"k": "v"})
    assert created and not created_again and again.id == first.id
    with db.write() as conn:
        leased = jobs.lease(conn, ["b", "a"], limit=5, exclude=[second.id])
        assert [job.id for job in leased] == [first.id]
        assert jobs.renew(conn, leased[0], lease_ms=10_000)
        assert jobs.fail(conn, leased[0], "boom", retry_in_s=0) == "pending"
        (b_job,) = jobs.lease(conn, "b")
        assert b_job.payload == {"k": "v"} and b_job.attempts == 1
        assert jobs.release(conn, b_job, started=False) == "pending"
        (b_job,) = jobs.lease(conn, "b")
        assert b_job.attempts == 1  # refunded
        assert not jobs.complete(conn, replace(b_job, lease_token="x"))
        assert jobs.complete(conn, b_job, {"done": 1})
    assert jobs.counts(db.reader(), "b")["completed"] == 1
    assert jobs.counts_by_type(db.reader(), "ag")["a"]["pending"] == 1


def test_inspection_and_repair_run_on_postgres(daemons: tuple[PgDatabase, PgDatabase]) -> None:
    """The diagnostics reads and every repair action, retired rows left out as on SQLite."""
    db, _ = daemons
    now = datetime.now(UTC)
    rows = fill_queue(db, "ag", now=now)
    reader = db.reader()
    listed = inspection.list_jobs(reader, "ag")
    assert {job.id for job in listed}.isdisjoint(rows.retired)
    assert len(listed) == 7
    assert {job.id for job in inspection.oldest_dead(reader, "ag")} == set(rows.dead)
    facts = inspection.queue_facts(reader, "ag", now=now, anomaly_age_s=600, window_s=86_400)
    assert facts.lease_anomalies == 1 and facts.dead_recent == 2
    assert len(inspection.timeline(reader, "ag", now - timedelta(days=1), 100)) == 7

    plans = {
        action: repair.plan(reader, "ag", repair.RepairRequest(action), now)
        for action in repair.ACTIONS
    }
    assert set(plans["requeue"].ids) == set(rows.dead)
    assert plans["release"].ids == rows.leased_expired
    assert set(plans["cancel"].ids) == set(rows.pending)
    pattern = repair.RepairRequest("requeue", ids=rows.dead[:1], error_pattern="TIME")
    assert repair.plan(reader, "ag", pattern, now).ids == rows.dead[:1]
    for action in ("cancel", "release", "requeue"):  # each plan still exact when applied
        with db.write() as conn:
            done = repair.apply(conn, "ag", repair.RepairRequest(action, dry_run=False), now)
        assert set(done.ids) == set(plans[action].ids)
    later = jobs.iso(now + timedelta(days=1))
    with db.write() as conn:
        assert jobs.prune_terminal(conn, "cancelled", later, 10) == 2
        pruned = repair.apply(conn, "ag", repair.RepairRequest("prune", dry_run=False), now)
    assert set(pruned.ids) == set(rows.completed)
    assert jobs.counts(db.reader()) == {**dict.fromkeys(jobs.STATUSES, 0), "pending": 3}
