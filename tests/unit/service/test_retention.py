"""Retention: expired tombstones purged with what only they supported; old history and
finished jobs pruned in bounded batches; every run recorded, published and on the board."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from signet_desktop.config.pipeline import RetentionConfig
from signet_desktop.domain.errors import Conflict
from signet_desktop.domain.events import MaintenanceFinished
from signet_desktop.domain.memory import Actor
from signet_desktop.embedding.index import VectorIndex
from signet_desktop.embedding.vectors import VectorWrite
from signet_desktop.queue import jobs
from signet_desktop.service import retention
from signet_desktop.service.events import EventBus, Subscription
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.service.retention import MaintenanceWorker, RetentionService
from signet_desktop.service.status import StatusBoard
from signet_desktop.storage import counters
from signet_desktop.storage.database import Database

ACTOR = Actor(changed_by="tester")
OLD = "2020-01-01T00:00:00.000Z"
NOW = "2026-12-01T00:00:00.000Z"


def count(db: Database, sql: str, *args: object) -> int:
    return int(db.reader().execute(sql, args).fetchone()[0])


def remember(memories: MemoryService, text: str, agent: str = "default") -> str:
    return memories.remember(RememberRequest(content=text, agent_id=agent), ACTOR).memory.id


def forget(memories: MemoryService, db: Database, memory_id: str, *, when: str = OLD) -> None:
    agent = db.reader().execute("SELECT agent_id FROM memories WHERE id = ?", (memory_id,))
    memories.forget(agent.fetchone()[0], memory_id, reason="test", if_version=None, actor=ACTOR)
    with db.write() as conn:
        conn.execute("UPDATE memories SET deleted_at = ? WHERE id = ?", (when, memory_id))


def add_entity(db: Database, entity_id: str, *, pinned: bool = False) -> None:
    with db.write() as conn:
        conn.execute(
            "INSERT INTO entities (id, agent_id, name, canonical_name, pinned, created_at,"
            " updated_at) VALUES (?, 'default', ?, lower(?), ?, ?, ?)",
            (entity_id, entity_id, entity_id, int(pinned), NOW, NOW),
        )


def mention(db: Database, memory_id: str, entity_id: str) -> None:
    with db.write() as conn:
        conn.execute(
            "INSERT INTO memory_entity_mentions (memory_id, entity_id, agent_id, created_at)"
            " VALUES (?, ?, 'default', ?)",
            (memory_id, entity_id, NOW),
        )


def add_vectors(db: Database, memory_ids: list[str]) -> None:
    index = VectorIndex(db)
    generation = index.ensure_generation(provider="hash", model="hash-8", dimensions=8)
    with db.write() as conn:
        writes = []
        for n, memory_id in enumerate(memory_ids):
            row = conn.execute("SELECT content_hash FROM memories WHERE id = ?", (memory_id,))
            vector = np.zeros(8, dtype=np.float32)
            vector[n % 8] = 1.0
            writes.append(VectorWrite("default", memory_id, row.fetchone()[0], vector.tobytes()))
        index.store(conn, generation, writes)


@pytest.fixture
def memories(db: Database) -> MemoryService:
    return MemoryService(db)


@pytest.fixture
def board(bus: EventBus) -> StatusBoard:
    return StatusBoard(bus)


@pytest.fixture
def service(db: Database, bus: EventBus, board: StatusBoard) -> RetentionService:
    return RetentionService(db, RetentionConfig(), events=bus, status=board.set)


def test_an_expired_tombstone_goes_with_what_only_it_supported(
    service: RetentionService, memories: MemoryService, db: Database
) -> None:
    gone = remember(memories, "the staging database is on port 5433")
    kept = remember(memories, "the production database is on port 5432")
    add_vectors(db, [gone, kept])
    for entity in ("e-staging", "e-shared", "e-pinned"):
        add_entity(db, entity, pinned=entity == "e-pinned")
    mention(db, gone, "e-staging")
    mention(db, gone, "e-shared")
    mention(db, kept, "e-shared")
    mention(db, gone, "e-pinned")
    with db.write() as conn:
        for memory_id in (gone, kept):
            conn.execute(
                "INSERT OR REPLACE INTO memory_content_safety (agent_id, source_kind, source_id,"
                " status, context_eligible, policy_version, scanned_at)"
                " VALUES ('default', 'memory', ?, 'clean', 1, 'test', ?)",
                (memory_id, NOW),
            )
    forget(memories, db, gone)

    report = service.run()

    assert report.run.status == "completed"
    assert report.run.steps["tombstones"] == {
        "memories": 1,
        "vectors": 1,
        "safety_decisions": 1,
        "mentioned_entities": 3,
        "entities": 1,
        "claims_unsupported": 0,
    }
    assert count(db, "SELECT COUNT(*) FROM memories WHERE id = ?", gone) == 0
    assert count(db, "SELECT COUNT(*) FROM embeddings WHERE source_id = ?", gone) == 0
    assert count(db, "SELECT COUNT(*) FROM memory_entity_mentions WHERE memory_id = ?", gone) == 0
    assert count(db, "SELECT COUNT(*) FROM entities WHERE id = 'e-staging'") == 0
    assert count(db, "SELECT COUNT(*) FROM entities WHERE id IN ('e-shared', 'e-pinned')") == 2
    assert count(db, "SELECT COUNT(*) FROM memories_fts WHERE memories_fts MATCH '5433'") == 0
    events = db.reader().execute(
        "SELECT event FROM memory_history WHERE memory_id = ? ORDER BY rowid", (gone,)
    )
    assert [r[0] for r in events] == ["created", "deleted", "purged"]
    # The live memory keeps its row, vector and mention.
    assert count(db, "SELECT COUNT(*) FROM embeddings WHERE source_id = ?", kept) == 1
    assert count(db, "SELECT COUNT(*) FROM memory_content_safety WHERE source_id = ?", kept) == 1
    assert count(db, "SELECT COUNT(*) FROM memory_content_safety WHERE source_id = ?", gone) == 0
    assert count(db, "SELECT COUNT(*) FROM memory_entity_mentions WHERE memory_id = ?", kept) == 1


def test_the_vec0_mirror_row_goes_too(
    service: RetentionService, memories: MemoryService, db: Database
) -> None:
    if not db.vec.available:
        pytest.skip("sqlite-vec is not loadable here")
    gone = remember(memories, "a memory with a mirrored vector")
    add_vectors(db, [gone])
    table = db.reader().execute("SELECT vec_table FROM embedding_generations").fetchone()[0]
    assert count(db, f"SELECT COUNT(*) FROM {table}") == 1
    forget(memories, db, gone)
    service.run()
    assert count(db, f"SELECT COUNT(*) FROM {table}") == 0


def test_a_tombstone_inside_the_window_and_live_memories_stay(
    service: RetentionService, memories: MemoryService, db: Database
) -> None:
    recent = remember(memories, "deleted yesterday, still recoverable")
    live = remember(memories, "never deleted")
    forget(memories, db, recent, when="2999-01-01T00:00:00.000Z")
    report = service.run()
    assert report.run.steps["tombstones"]["memories"] == 0
    assert count(db, "SELECT COUNT(*) FROM memories WHERE id IN (?, ?)", recent, live) == 2


def test_batches_are_bounded_and_a_capped_step_asks_for_more(
    db: Database, memories: MemoryService, bus: EventBus, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = [remember(memories, f"memory number {n}") for n in range(5)]
    for memory_id in ids:
        forget(memories, db, memory_id)
    service = RetentionService(db, RetentionConfig(batch_limit=2), events=bus)
    monkeypatch.setattr(retention, "MAX_BATCHES_PER_STEP", 2)
    first = service.run()
    assert first.run.steps["tombstones"]["memories"] == 4
    assert first.more
    second = service.run()
    assert second.run.steps["tombstones"]["memories"] == 1
    assert not second.more
    assert count(db, "SELECT COUNT(*) FROM memories") == 0


def test_finished_jobs_and_old_history_are_pruned_on_their_windows(
    service: RetentionService, memories: MemoryService, db: Database
) -> None:
    with db.write() as conn:
        made = {}
        for name in ("old-done", "new-done", "old-dead", "new-dead", "old-pending", "extract"):
            job_type = "extract" if name == "extract" else "test_job"
            made[name] = jobs.enqueue(conn, job_type, agent_id="default")[0].id
        status = {"done": "completed", "dead": "dead", "pending": "pending"}
        for name, job_id in made.items():
            state = status.get(name.split("-")[-1], "completed")
            when = OLD if name.startswith("old") or name == "extract" else NOW
            conn.execute(
                "UPDATE memory_jobs SET status = ?, completed_at = ?, failed_at = ?,"
                " updated_at = ? WHERE id = ?",
                (
                    state,
                    when if state == "completed" else None,
                    when if state == "dead" else None,
                    when,
                    job_id,
                ),
            )
    live = remember(memories, "a memory whose created event is very old")
    with db.write() as conn:
        conn.execute("DROP TRIGGER memory_history_immutable_update")
        conn.execute("UPDATE memory_history SET created_at = ? WHERE memory_id = ?", (OLD, live))
    report = service.run()
    assert report.run.steps["jobs"] == {"completed": 1, "dead": 1}
    assert report.run.steps["history"] == {"events": 1}
    left = {r[0] for r in db.reader().execute("SELECT id FROM memory_jobs")}
    assert left == {made["new-done"], made["new-dead"], made["old-pending"], made["extract"]}
    assert count(db, "SELECT COUNT(*) FROM memories WHERE id = ?", live) == 1


def test_each_run_is_recorded_published_and_on_the_board(
    service: RetentionService, events: Subscription, board: StatusBoard, db: Database
) -> None:
    report = service.run()
    published = [d.event for d in events.drain() if isinstance(d.event, MaintenanceFinished)]
    assert [(e.run_id, e.status, e.trigger) for e in published] == [
        (report.run.id, "completed", "manual")
    ]
    assert [r.id for r in service.recent()] == [report.run.id]
    fact = board.snapshot()["maintenance"]
    assert fact["lastRun"]["id"] == report.run.id
    assert fact["batchLimit"] == 500
    assert fact["tombstoneRetentionMs"] == 30 * 24 * 3600 * 1000
    assert count(db, "SELECT COUNT(*) FROM maintenance_runs WHERE status = 'completed'") == 1


def test_a_run_left_running_by_a_killed_process_is_marked_interrupted(
    service: RetentionService, db: Database
) -> None:
    from signet_desktop.storage import maintenance_runs

    with db.write() as conn:
        maintenance_runs.start_run(conn, "mnt_killed", trigger="schedule")
    assert service.recover() == 1
    assert service.recent()[0].status == "interrupted"


def test_a_second_run_while_one_runs_is_refused(service: RetentionService) -> None:
    service._running.acquire()
    try:
        with pytest.raises(Conflict):
            service.run()
        assert MaintenanceWorker(service).run_once() is False
    finally:
        service._running.release()


def test_drifted_counters_are_repaired(
    service: RetentionService, memories: MemoryService, db: Database
) -> None:
    remember(memories, "one")
    remember(memories, "two")
    with db.write() as conn:
        conn.execute("UPDATE memory_counts SET live = 40")
    report = service.run()
    assert report.run.steps["counters"] == {"drifted": 1}
    assert counters.agent_counts(db.reader(), "default").live == 2


def test_the_worker_runs_after_its_first_delay_and_stops(service: RetentionService) -> None:
    worker = MaintenanceWorker(service, first_delay_s=0.0)
    stop = threading.Event()
    thread = threading.Thread(target=worker.run_forever, args=(stop,))
    thread.start()
    for _ in range(200):
        if service.last is not None:
            break
        threading.Event().wait(0.01)
    stop.set()
    thread.join(5)
    assert not thread.is_alive()
    assert service.last is not None and service.last.run.trigger == "schedule"
    assert worker.release_leases() == 0
