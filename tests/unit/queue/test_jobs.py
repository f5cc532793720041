"""The durable job queue: enqueue, lease, complete, fail with backoff, dead, stale leases."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from signet_desktop.queue import jobs
from signet_desktop.storage.database import Database, open_database

JOB = "embedding_backfill"


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(tmp_path / "q.db", with_vec=False)
    yield database
    database.close()


def enqueue(db: Database, memory_id: str | None = None, **kw: object) -> jobs.Job:
    with db.write() as conn:
        job, _ = jobs.enqueue(conn, JOB, agent_id="default", memory_id=memory_id, **kw)  # type: ignore[arg-type]
    return job


def lease(db: Database, limit: int = 1, **kw: object) -> list[jobs.Job]:
    with db.write() as conn:
        return jobs.lease(conn, JOB, limit=limit, **kw)  # type: ignore[arg-type]


def test_enqueue_creates_a_pending_job_with_payload(db: Database) -> None:
    job = enqueue(db, "m1", payload={"why": "test"}, max_attempts=5)
    assert (job.status, job.attempts, job.max_attempts) == ("pending", 0, 5)
    assert job.payload == {"why": "test"}
    assert jobs.counts(db.reader(), JOB)["pending"] == 1


def test_dedupe_on_memory_returns_the_open_job(db: Database) -> None:
    first = enqueue(db, "m1", dedupe_memory=True)
    with db.write() as conn:
        again, created = jobs.enqueue(
            conn, JOB, agent_id="default", memory_id="m1", dedupe_memory=True
        )
    assert (again.id, created) == (first.id, False)
    other = enqueue(db, "m2", dedupe_memory=True)
    assert other.id != first.id


def test_dedupe_ignores_finished_jobs(db: Database) -> None:
    first = enqueue(db, "m1", dedupe_memory=True)
    [leased] = lease(db)
    with db.write() as conn:
        assert jobs.complete(conn, leased)
    second = enqueue(db, "m1", dedupe_memory=True)
    assert second.id != first.id


def test_lease_takes_the_oldest_pending_and_marks_it(db: Database) -> None:
    first = enqueue(db, "m1")
    enqueue(db, "m2")
    [job] = lease(db)
    assert job.id == first.id
    assert job.status == "leased" and job.attempts == 1
    assert job.lease_token and job.lease_expires_at and job.leased_at
    [second] = lease(db)
    assert second.memory_id == "m2"
    assert lease(db) == []


def test_lease_respects_limit_and_job_type(db: Database) -> None:
    for i in range(5):
        enqueue(db, f"m{i}")
    with db.write() as conn:
        jobs.enqueue(conn, "document_ingest", agent_id="default")
    assert len(lease(db, limit=3)) == 3
    assert len(lease(db, limit=10)) == 2
    with db.write() as conn:
        assert [j.job_type for j in jobs.lease(conn, "document_ingest")] == ["document_ingest"]


def test_complete_needs_the_current_lease(db: Database) -> None:
    enqueue(db, "m1")
    [job] = lease(db)
    stolen = jobs.Job(**{**_fields(job), "lease_token": "someone-else"})
    with db.write() as conn:
        assert not jobs.complete(conn, stolen)
        assert jobs.complete(conn, job, {"ok": True})
        done = jobs.get_job(conn, job.id)
    assert done is not None and done.status == "completed" and done.result == '{"ok": true}'
    assert done.lease_token is None


def test_fail_retries_with_backoff_then_dies(db: Database) -> None:
    enqueue(db, "m1", max_attempts=2)
    now = datetime(2030, 1, 1, tzinfo=UTC)
    [job] = lease(db, now=now)
    with db.write() as conn:
        assert jobs.fail(conn, job, "embedder down", now=now) == "pending"
        retried = jobs.get_job(conn, job.id)
    assert retried is not None and retried.error == "embedder down"
    assert retried.run_after == "2030-01-01T00:00:30.000Z"
    assert lease(db, now=now + timedelta(seconds=29)) == []  # still backing off
    [again] = lease(db, now=now + timedelta(seconds=31))
    assert again.attempts == 2
    with db.write() as conn:
        assert jobs.fail(conn, again, "still down", now=now) == "dead"
    assert jobs.counts(db.reader(), JOB)["dead"] == 1
    assert lease(db, now=now + timedelta(days=1)) == []


def test_backoff_doubles_and_is_capped() -> None:
    assert [jobs.backoff_seconds(n) for n in (1, 2, 3)] == [30.0, 60.0, 120.0]
    assert jobs.backoff_seconds(50) == jobs.BACKOFF_MAX_S


def test_release_stale_returns_expired_leases(db: Database) -> None:
    enqueue(db, "m1", max_attempts=3)
    enqueue(db, "m2", max_attempts=1)
    start = datetime(2030, 1, 1, tzinfo=UTC)
    leased = lease(db, limit=2, now=start, lease_ms=1000)
    assert len(leased) == 2
    with db.write() as conn:
        assert jobs.release_stale(conn, now=start) == jobs.ReleaseReport(0, 0)
        report = jobs.release_stale(conn, now=start + timedelta(seconds=2))
    assert report == jobs.ReleaseReport(released=1, dead=1)
    assert [j.memory_id for j in report.dead_jobs] == ["m2"]
    counts = jobs.counts(db.reader(), JOB)
    assert (counts["pending"], counts["dead"], counts["leased"]) == (1, 1, 0)
    # A worker that lost its lease cannot complete the job any more.
    with db.write() as conn:
        assert not jobs.complete(conn, leased[0])


def test_mutations_refuse_to_run_outside_a_write_transaction(db: Database) -> None:
    conn = db.reader()
    with pytest.raises(RuntimeError, match=r"db\.write"):
        jobs.enqueue(conn, JOB, agent_id="default")
    with pytest.raises(RuntimeError, match=r"db\.write"):
        jobs.lease(conn, JOB)


def test_a_rolled_back_transaction_leaves_the_job_pending(db: Database) -> None:
    enqueue(db, "m1")
    with pytest.raises(RuntimeError, match="boom"), db.write() as conn:
        assert len(jobs.lease(conn, JOB)) == 1
        raise RuntimeError("boom")
    assert jobs.counts(db.reader(), JOB)["pending"] == 1


def _fields(job: jobs.Job) -> dict[str, object]:
    return {name: getattr(job, name) for name in job.__slots__}  # type: ignore[attr-defined]
