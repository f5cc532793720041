"""QueueOps over a real database: health signals against thresholds, the repair budget
(cooldown, hourly), queue.repaired only for applied changes, scope checks."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from support.queue_jobs import add, fill_queue, set_row

from signet_desktop.config.pipeline import RepairConfig
from signet_desktop.domain.errors import InvalidInput
from signet_desktop.domain.events import Event
from signet_desktop.queue import jobs
from signet_desktop.queue.repair import QueueRepaired, RepairRequest
from signet_desktop.service.pipeline.queue_ops import QueueOps
from signet_desktop.storage.database import Database, open_database

NOW = datetime(2030, 1, 1, 12, tzinfo=UTC)


class Sink:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def publish(self, event: Event) -> None:
        self.events.append(event)


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(tmp_path / "q.db", with_vec=False)
    yield database
    database.close()


def ops(
    db: Database, sink: Sink | None = None, clock: Clock | None = None, **config: int
) -> QueueOps:
    return QueueOps(
        db,
        config=RepairConfig(**config),  # type: ignore[arg-type]
        events=sink,
        now=lambda: NOW,
        clock=clock or Clock(),
    )


def test_a_healthy_empty_queue(db: Database) -> None:
    report = ops(db).diagnostics("default")
    assert (report.score, report.status, report.depth, report.dead_rate) == (1.0, "healthy", 0, 0)
    assert report.oldest_pending_age_s is None and report.oldest_dead == ()


def test_signals_cost_health_past_their_thresholds(db: Database) -> None:
    for _ in range(51):
        job_id = add(db, "document_ingest")
        set_row(db, job_id, created_at=jobs.iso(NOW - timedelta(minutes=10)))
    report = ops(db).diagnostics("default")
    assert report.depth == 51 and report.oldest_pending_age_s == 600.0
    assert (report.score, report.status) == (0.5, "degraded")  # depth -0.3, age -0.2
    fill_queue(db, now=NOW)  # 2 dead, 2 completed in the last day, 1 expired lease
    worse = ops(db).diagnostics("default")
    assert worse.dead_rate == 0.5 and worse.lease_anomalies == 1
    assert (worse.score, worse.status) == (0.0, "unhealthy")


def test_applied_repairs_spend_the_budget_and_dry_runs_never_do(db: Database) -> None:
    made = fill_queue(db, now=NOW)
    sink, clock = Sink(), Clock()
    queue = ops(db, sink, clock, requeue_cooldown_ms=60_000, requeue_hourly_budget=2)
    for _ in range(5):
        assert queue.repair("default", RepairRequest("requeue")).success
    assert sink.events == []
    first = queue.repair("default", RepairRequest("requeue", dry_run=False, ids=made.dead[:1]))
    assert first.success and first.outcome.ids == made.dead[:1]
    [event] = sink.events
    assert isinstance(event, QueueRepaired) and (event.action, event.affected) == ("requeue", 1)
    refused = queue.repair("default", RepairRequest("requeue", dry_run=False))
    assert refused.refused and "cooldown" in refused.message and refused.retry_after_s == 60.0
    assert jobs.get_job(db.reader(), made.dead[1]).status == "dead"  # type: ignore[union-attr]
    other = queue.repair("default", RepairRequest("prune", dry_run=False, max_batch=1))
    assert other.success  # another action has its own budget
    clock.t += 61
    assert queue.repair("default", RepairRequest("requeue", dry_run=False)).success
    clock.t += 61
    made_more = add(db, "embedding_backfill")
    set_row(db, made_more, status="dead")
    hourly = queue.repair("default", RepairRequest("requeue", dry_run=False))
    assert hourly.refused and "hourly budget" in hourly.message


def test_an_apply_that_changes_nothing_spends_nothing(db: Database) -> None:
    sink = Sink()
    queue = ops(db, sink)
    for _ in range(3):
        result = queue.repair("default", RepairRequest("requeue", dry_run=False))
        assert result.success and result.outcome.affected == 0
    assert sink.events == []


def test_scope_is_checked(db: Database) -> None:
    with pytest.raises(InvalidInput):
        ops(db).diagnostics("not an agent id")
    with pytest.raises(InvalidInput):
        ops(db).repair("../etc", RepairRequest("prune"))


def test_history_rebuilds_counts_from_the_jobs_timestamps(db: Database) -> None:
    def at(seconds_ago: float) -> str:
        return jobs.iso(NOW - timedelta(seconds=seconds_ago))

    done, waiting, died, old = (add(db, "document_ingest") for _ in range(4))
    set_row(db, done, status="completed", created_at=at(500), leased_at=at(300),
            completed_at=at(200), updated_at=at(200))  # fmt: skip
    set_row(db, waiting, created_at=at(100), updated_at=at(100))
    set_row(db, died, status="dead", created_at=at(400), leased_at=at(350), failed_at=at(50),
            updated_at=at(50))  # fmt: skip
    set_row(db, old, status="dead", created_at=at(90_000), failed_at=at(86_400),
            updated_at=at(86_400))  # fmt: skip
    other = add(db, "document_ingest", agent_id="other")  # never counted here
    set_row(db, other, created_at=at(1000))
    samples = dict(ops(db).history("default", window_s=600, step_s=20))
    assert [*samples][::30] == [600.0, 0.0]
    assert samples[600.0] == {"pending": 0, "leased": 0, "dead": 1}
    assert samples[320.0] == {"pending": 1, "leased": 1, "dead": 1}
    assert samples[0.0] == {"pending": 1, "leased": 0, "dead": 2}


def test_two_applies_at_once_cannot_both_slip_under_the_cooldown(db: Database) -> None:
    made = fill_queue(db, now=NOW)
    queue = ops(db)
    results = []
    start = threading.Barrier(2)

    def apply(job_id: str) -> None:
        start.wait()
        results.append(queue.repair("default", RepairRequest("requeue", dry_run=False,
                                                             ids=(job_id,))))  # fmt: skip

    threads = [threading.Thread(target=apply, args=(job_id,)) for job_id in made.dead]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert sorted(r.refused for r in results) == [False, True]
    assert sum(r.outcome.affected for r in results) == 1
