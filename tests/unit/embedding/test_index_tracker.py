"""The embedding tracker: backfill, queued jobs, embedder faults and model migration."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.fakes import ScriptedEmbedder

from signet_desktop.daemon.workers import WorkerThreads
from signet_desktop.domain.memory import Actor
from signet_desktop.embedding import tracker as tracker_module
from signet_desktop.embedding import vectors
from signet_desktop.embedding.generations import get_generation, list_generations
from signet_desktop.embedding.index import VectorIndex
from signet_desktop.embedding.tracker import BACKFILL_JOB, EmbeddingTracker
from signet_desktop.queue import jobs
from signet_desktop.queue.worker import IdleStep, WorkerSettings
from signet_desktop.service.embeddings.vectors import EmbeddingVectors
from signet_desktop.service.events import EventBus
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.service.workers import WorkerDeclaration
from signet_desktop.storage.database import Database, open_database


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(tmp_path / "t.db")
    yield database
    database.close()


def remember_plain(db: Database, count: int, prefix: str = "note") -> list[str]:
    """Memories saved with no vector port at all (as with provider none)."""
    service = MemoryService(db)
    return [
        service.remember(RememberRequest(content=f"{prefix} number {i}"), Actor()).memory.id
        for i in range(count)
    ]


def tracker_for(db: Database, embedder: ScriptedEmbedder, batch: int = 4) -> EmbeddingTracker:
    tracker = EmbeddingTracker(db, VectorIndex(db), embedder, batch_size=batch)
    tracker.start()
    return tracker


def drain(tracker: EmbeddingTracker, limit: int = 100) -> int:
    steps = 0
    while tracker.run_once().did_work:
        steps += 1
        assert steps < limit, "tracker never settles"
    return steps


def test_backfill_covers_every_live_memory(db: Database) -> None:
    remember_plain(db, 10)
    tracker = tracker_for(db, ScriptedEmbedder())
    assert tracker.coverage(fresh=True).missing == 10
    drain(tracker)
    coverage = tracker.coverage(fresh=True)
    assert (coverage.total, coverage.embedded, coverage.ratio) == (10, 10, 1.0)
    generation = tracker.generation
    assert vectors.canonical_count(db.reader(), generation) == 10
    assert len(vectors.mirror_ids(db.reader(), generation)) == 10
    models = {r[0] for r in db.reader().execute("SELECT embedding_model FROM memories")}
    assert models == {"scripted-64"}


def test_batches_are_bounded(db: Database) -> None:
    remember_plain(db, 9)
    embedder = ScriptedEmbedder()
    tracker = tracker_for(db, embedder, batch=4)
    step = tracker.run_once()
    assert (step.kind, step.embedded) == ("scan", 4)
    assert tracker.run_once().embedded == 4
    assert tracker.run_once().embedded == 1
    assert tracker.run_once().kind == "idle"


def test_deleted_memories_are_not_embedded(db: Database) -> None:
    ids = remember_plain(db, 3)
    with db.write() as conn:
        conn.execute("UPDATE memories SET is_deleted = 1 WHERE id = :id", {"id": ids[0]})
    tracker = tracker_for(db, ScriptedEmbedder())
    drain(tracker)
    embedded = {r[0] for r in db.reader().execute("SELECT source_id FROM embeddings")}
    assert embedded == set(ids[1:])


def test_changed_content_is_re_embedded(db: Database) -> None:
    [memory_id] = remember_plain(db, 1)
    embedder = ScriptedEmbedder()
    tracker = tracker_for(db, embedder)
    drain(tracker)
    with db.write() as conn:
        conn.execute(
            "UPDATE memories SET content = 'rewritten', content_hash = 'h2' WHERE id = :id",
            {"id": memory_id},
        )
    assert tracker.coverage(fresh=True).missing == 1
    drain(tracker)
    assert embedder.texts[-1] == "rewritten"
    assert tracker.coverage(fresh=True).missing == 0


def test_embedder_down_loses_nothing_and_backs_off(db: Database) -> None:
    remember_plain(db, 3)
    embedder = ScriptedEmbedder()
    embedder.mode = "down"
    tracker = tracker_for(db, embedder)
    step = tracker.run_once()
    assert step.unavailable and not step.did_work and "connection refused" in (step.error or "")
    assert tracker.coverage(fresh=True).missing == 3
    embedder.mode = "ok"
    drain(tracker)
    assert tracker.coverage(fresh=True).missing == 0


@pytest.mark.parametrize("mode", ["wrong_dims", "nan", "empty"])
def test_bad_vectors_are_rejected_and_nothing_is_written(db: Database, mode: str) -> None:
    remember_plain(db, 2)
    embedder = ScriptedEmbedder()
    embedder.mode = mode
    tracker = tracker_for(db, embedder)
    for _ in range(5):
        step = tracker.run_once()
        assert step.embedded == 0
    assert db.reader().execute("SELECT COUNT(*) FROM embeddings").fetchone()[0] == 0
    # Each memory is tried a bounded number of times, then left for audit.
    assert tracker.run_once().kind in {"idle", "scan"}
    assert tracker.coverage(fresh=True).missing == 2


def test_queued_jobs_are_processed_first_and_completed(db: Database) -> None:
    embedder = ScriptedEmbedder()
    tracker = tracker_for(db, embedder)
    port = EmbeddingVectors(VectorIndex(db), embedder, tracker.generation)
    service = MemoryService(db, port)
    embedder.mode = "down"
    outcome = service.remember(RememberRequest(content="saved while down"), Actor())
    port.close()
    assert outcome.embedded is False
    assert jobs.counts(db.reader(), BACKFILL_JOB)["pending"] == 1
    embedder.mode = "ok"
    step = tracker.run_once()
    assert (step.kind, step.embedded) == ("jobs", 1)
    assert jobs.counts(db.reader(), BACKFILL_JOB)["completed"] == 1
    assert tracker.coverage(fresh=True).missing == 0


def test_failed_jobs_retry_then_the_scan_still_recovers(db: Database) -> None:
    embedder = ScriptedEmbedder()
    tracker = tracker_for(db, embedder)
    with db.write() as conn:
        jobs.enqueue(conn, BACKFILL_JOB, agent_id="default", memory_id="gone", max_attempts=1)
    remember_plain(db, 1)
    with db.write() as conn:
        memory_id = conn.execute("SELECT id FROM memories").fetchone()[0]
        jobs.enqueue(conn, BACKFILL_JOB, agent_id="default", memory_id=memory_id, max_attempts=1)
    embedder.mode = "down"
    step = tracker.run_once()
    # Jobs run one at a time: the vanished memory's completes without a provider call; the
    # other spends its one attempt on the down embedder and is dead-lettered.
    assert (step.kind, step.skipped, step.failed, step.unavailable) == ("jobs", 1, 1, True)
    counts = jobs.counts(db.reader(), BACKFILL_JOB)
    assert (counts["dead"], counts["completed"]) == (1, 1)
    embedder.mode = "ok"
    drain(tracker)
    assert tracker.coverage(fresh=True).missing == 0


def test_a_job_for_a_vanished_memory_completes_without_embedding(db: Database) -> None:
    embedder = ScriptedEmbedder()
    tracker = tracker_for(db, embedder)
    with db.write() as conn:
        jobs.enqueue(conn, BACKFILL_JOB, agent_id="default", memory_id="no-such-memory")
    step = tracker.run_once()
    assert (step.kind, step.embedded, step.skipped) == ("jobs", 0, 1)
    assert embedder.calls == 0
    assert jobs.counts(db.reader(), BACKFILL_JOB)["completed"] == 1


def test_model_change_builds_a_new_generation_then_swaps(db: Database) -> None:
    remember_plain(db, 6)
    old = tracker_for(db, ScriptedEmbedder(64, "model-a"))
    drain(old)
    assert old.generation.status == "active"

    new = tracker_for(db, ScriptedEmbedder(32, "model-b"), batch=4)
    assert new.generation.status == "building"
    step = new.run_once()
    assert step.embedded == 4 and new.generation.status == "building"
    drain(new)
    assert new.generation.status == "active"
    assert get_generation(db.reader(), old.generation.id).status == "retired"  # type: ignore[union-attr]
    # Old canonical vectors are kept until retention; each generation holds its own.
    counts = {
        g.model: vectors.canonical_count(db.reader(), g) for g in list_generations(db.reader())
    }
    assert counts == {"model-a": 6, "model-b": 6}


def test_backfill_embeds_up_to_the_limit(db: Database) -> None:
    remember_plain(db, 10)
    tracker = tracker_for(db, ScriptedEmbedder(), batch=3)
    assert tracker.backfill(5).embedded == 5  # batches of 3, the last one cut to 2
    assert tracker.coverage(fresh=True).missing == 5
    assert tracker.backfill(1).embedded == 1  # never more than asked, even below a batch
    assert tracker.backfill(100).embedded == 4
    assert tracker.coverage(fresh=True).missing == 0


def test_a_worker_that_died_mid_lease_does_not_strand_the_job(db: Database) -> None:
    remember_plain(db, 1)
    embedder = ScriptedEmbedder()
    tracker = EmbeddingTracker(db, VectorIndex(db), embedder, lease_ms=1)
    tracker.start()
    memory_id = db.reader().execute("SELECT id FROM memories").fetchone()[0]
    with db.write() as conn:
        jobs.enqueue(conn, BACKFILL_JOB, agent_id="default", memory_id=memory_id)
        jobs.lease(conn, BACKFILL_JOB, lease_ms=1)  # the "dead worker" never finishes
    time.sleep(0.01)
    assert tracker.release_stale_leases().released == 1
    assert tracker.run_once().kind == "jobs"
    assert jobs.counts(db.reader(), BACKFILL_JOB)["completed"] == 1


def test_an_idle_step_with_every_vector_in_place_reads_no_memory_rows(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    remember_plain(db, 6)
    tracker = tracker_for(db, ScriptedEmbedder())
    drain(tracker)
    # The counters say nothing is missing: the scan query must not run at all (it walked
    # every memory row, content and all, every few seconds at idle).
    monkeypatch.setattr(tracker_module, "MISSING_BATCH", "SELECT * FROM no_such_table")
    assert tracker.idle_step().kind == "idle"
    remember_plain(db, 1, prefix="late")
    with pytest.raises(Exception, match="no_such_table"):
        tracker.idle_step()  # one memory without a vector: the scan runs again


@pytest.mark.parametrize("queued", [False, True], ids=["scan", "job"])
def test_a_stopping_embedding_worker_does_not_wait_for_the_embedder(
    db: Database, queued: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """The tracker's embedder call (a batch, seconds on a busy machine) does not hold a stop:
    the worker ends within its budget, writes nothing of the call, and a later pass embeds."""
    ids = remember_plain(db, 3)
    embedder = ScriptedEmbedder()
    tracker = tracker_for(db, embedder)
    if queued:
        with db.write() as conn:
            for memory_id in ids:
                jobs.enqueue(conn, BACKFILL_JOB, agent_id="default", memory_id=memory_id)
    embedder.mode, embedder.delay_s = "slow", 30.0  # native code that cannot see the stop

    def idle() -> IdleStep:
        step = tracker.idle_step()
        return IdleStep(did_work=step.did_work, unavailable=step.unavailable, error=step.error)

    worker = tracker.job_worker(settings=WorkerSettings(poll_s=0.01), idle=idle)
    host = WorkerThreads(
        [WorkerDeclaration("embedding", (BACKFILL_JOB,), lambda: worker)], EventBus()
    )
    host.start()
    deadline = time.monotonic() + 10
    while not [t for t in threading.enumerate() if t.name.endswith("-call")]:
        assert time.monotonic() < deadline, "the embedder was never called"
        time.sleep(0.01)
    with caplog.at_level(logging.INFO):
        assert host.stop(5) is True  # within the budget although the call still runs
    assert tracker.coverage(fresh=True).embedded == 0
    said = [r.getMessage() for r in caplog.records]
    assert not [m for m in said if "did not stop" in m or "abandoned" in m], said
    if queued:
        counts = jobs.counts(db.reader(), BACKFILL_JOB)
        assert counts.get("leased", 0) == 0 and counts["pending"] == 3, counts  # all go back
    embedder.mode = "ok"
    drain(tracker_for(db, embedder))  # the next start embeds them
    assert tracker.coverage(fresh=True).embedded == 3
