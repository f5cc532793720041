"""Queue repair over a real database: each action's rows, filters, plan == apply, retired rows."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from signet_desktop.queue import inspection, jobs, repair
from signet_desktop.queue.repair import RepairRequest
from signet_desktop.storage.database import Database, open_database

NOW = datetime(2030, 1, 1, 12, tzinfo=UTC)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(tmp_path / "q.db", with_vec=False)
    yield database
    database.close()


def add(
    db: Database, job_type: str = "embedding_backfill", agent: str = "default", **kw: Any
) -> str:
    with db.write() as conn:
        job, _ = jobs.enqueue(conn, job_type, agent_id=agent, **kw)
    return job.id


def set_row(db: Database, job_id: str, **values: Any) -> None:
    """Put a row in a state directly (the fixture's old-database shortcut)."""
    assignments = ", ".join(f"{name} = :{name}" for name in values)
    with db.write() as conn:
        conn.execute(
            f"UPDATE memory_jobs SET {assignments} WHERE id = :id", {**values, "id": job_id}
        )


def rows(db: Database) -> dict[str, tuple[Any, ...]]:
    found = db.reader().execute("SELECT * FROM memory_jobs ORDER BY id").fetchall()
    return {str(r["id"]): tuple(r) for r in found}


def kill(db: Database, job_id: str, error: str, at: datetime = NOW) -> None:
    set_row(db, job_id, status="dead", attempts=3, error=error, updated_at=jobs.iso(at),
            failed_at=jobs.iso(at))  # fmt: skip


def plan_apply(db: Database, request: RepairRequest, agent: str = "default") -> tuple[Any, Any]:
    planned = repair.plan(db.reader(), agent, request, NOW)
    before = rows(db)
    with db.write() as conn:
        applied = repair.apply(
            conn, agent, RepairRequest(**{**_fields(request), "dry_run": False}), NOW
        )
    after = rows(db)
    changed = {i for i in before if before[i] != after.get(i)}
    assert planned.ids == applied.ids  # the dry run reported exactly what the apply changed
    assert changed == set(applied.ids)
    assert [j.to_status for j in planned.jobs] == [j.to_status for j in applied.jobs]
    return planned, applied


def _fields(request: RepairRequest) -> dict[str, Any]:
    return {name: getattr(request, name) for name in request.__dataclass_fields__}


def test_requeue_takes_dead_jobs_back_to_pending_with_attempts_reset(db: Database) -> None:
    dead = add(db)
    kill(db, dead, "timeout after 10 s")
    add(db)  # pending: untouched
    _, applied = plan_apply(db, RepairRequest("requeue"))
    assert applied.ids == (dead,)
    job = jobs.get_job(db.reader(), dead)
    assert job is not None and (job.status, job.attempts, job.run_after) == ("pending", 0, None)


def test_filters_ids_error_pattern_age_type_and_batch(db: Database) -> None:
    old = [add(db) for _ in range(3)]
    for n, job_id in enumerate(old):
        kill(db, job_id, "Embedder TIMEOUT" if n else "bad input", NOW - timedelta(hours=2))
    fresh = add(db, "document_ingest")
    kill(db, fresh, "timeout", NOW)
    assert repair.plan(db.reader(), "default", RepairRequest("requeue", error_pattern="timeout"),
                       NOW).ids == (old[1], old[2], fresh)  # fmt: skip
    aged = RepairRequest("requeue", older_than_ms=3_600_000)
    assert repair.plan(db.reader(), "default", aged, NOW).ids == tuple(old)
    typed = RepairRequest("requeue", job_type="document_ingest")
    assert repair.plan(db.reader(), "default", typed, NOW).ids == (fresh,)
    by_id = RepairRequest("requeue", ids=(old[2], "no-such-job"))
    assert repair.plan(db.reader(), "default", by_id, NOW).ids == (old[2],)
    assert repair.plan(db.reader(), "default", RepairRequest("requeue", max_batch=2), NOW).ids == (
        old[0],
        old[1],
    )
    plan_apply(db, RepairRequest("requeue", error_pattern="timeout", max_batch=2))


def test_release_only_expired_leases_and_dead_when_spent(db: Database) -> None:
    spent, fresh, live = add(db, max_attempts=1), add(db), add(db)
    with db.write() as conn:
        jobs.lease(conn, "embedding_backfill", limit=2, now=NOW - timedelta(hours=1), lease_ms=1000)
        jobs.lease(conn, "embedding_backfill", now=NOW, lease_ms=60_000)
    _, applied = plan_apply(db, RepairRequest("release"))
    assert {j.id: j.to_status for j in applied.jobs} == {spent: "dead", fresh: "pending"}
    live_job = jobs.get_job(db.reader(), live)
    assert live_job is not None and live_job.status == "leased"


def test_cancel_pending_and_prune_finished(db: Database) -> None:
    pending, done = add(db), add(db)
    with db.write() as conn:
        [leased] = jobs.lease(conn, "embedding_backfill", now=NOW)
        assert leased.id == pending
        jobs.complete(conn, leased)
    _, cancelled = plan_apply(db, RepairRequest("cancel"))
    assert cancelled.ids == (done,)
    job = jobs.get_job(db.reader(), done)
    assert job is not None and job.status == "cancelled"
    assert json.loads(job.result or "{}") == {"cancelled": repair.CANCEL_REASON}
    _, pruned = plan_apply(db, RepairRequest("prune"))
    assert set(pruned.ids) == {pending, done}
    assert rows(db) == {}


def test_repairs_are_scoped_to_the_agent(db: Database) -> None:
    mine, theirs = add(db), add(db, agent="other")
    kill(db, mine, "x")
    kill(db, theirs, "x")
    _, applied = plan_apply(db, RepairRequest("requeue", ids=(mine, theirs)))
    assert applied.ids == (mine,)
    other = jobs.get_job(db.reader(), theirs)
    assert other is not None and other.status == "dead"


def test_apply_on_an_empty_queue_is_a_clean_no_op(db: Database) -> None:
    for action in repair.ACTIONS:
        planned, applied = plan_apply(db, RepairRequest(action))
        assert planned.affected == applied.affected == 0
    assert rows(db) == {}


def old_database_with_retired_extract_rows(db: Database) -> list[str]:
    """An old Signet-era queue: extract rows dead, leased (expired), pending and completed."""
    ids = [add(db, "extract", memory_id=f"m{n}") for n in range(4)]
    kill(db, ids[0], "extraction model timeout", NOW - timedelta(days=3))
    set_row(db, ids[1], status="leased", attempts=1, lease_token="t",
            lease_expires_at=jobs.iso(NOW - timedelta(days=2)))  # fmt: skip
    set_row(db, ids[3], status="completed", updated_at=jobs.iso(NOW - timedelta(days=9)))
    return ids


def test_retired_extract_rows_are_preserved_and_left_out(db: Database) -> None:
    retired = old_database_with_retired_extract_rows(db)
    live = add(db)
    kill(db, live, "timeout")
    before = {i: r for i, r in rows(db).items() if i in retired}

    conn = db.reader()
    assert set(jobs.counts_by_type(conn)) == {"embedding_backfill"}
    assert jobs.counts(conn)["dead"] == 1 and jobs.counts(conn)["leased"] == 0
    assert [j.id for j in inspection.oldest_dead(conn, "default")] == [live]
    assert [j.id for j in inspection.list_jobs(conn, "default")] == [live]
    facts = inspection.queue_facts(conn, "default", now=NOW, anomaly_age_s=600, window_s=86_400)
    assert (facts.lease_anomalies, facts.oldest_pending_at) == (0, None)
    for action in repair.ACTIONS:  # even named by id
        plan_apply(db, RepairRequest(action, ids=tuple(retired)))
    with db.write() as conn:
        assert jobs.release_stale(conn, now=NOW, orphans=True) == jobs.ReleaseReport(0, 0)
    assert {i: r for i, r in rows(db).items() if i in retired} == before
    assert jobs.counts(db.reader(), "extract")["dead"] == 1  # still there, asked for by name


def test_request_bounds() -> None:
    with pytest.raises(ValueError):
        RepairRequest("vacuum")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        RepairRequest("prune", max_batch=0)
    with pytest.raises(ValueError):
        RepairRequest("prune", older_than_ms=-1)
