"""Vectors that follow the write: batches, faults, bulk remember and generations."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.fakes import ScriptedEmbedder

from signet_desktop.domain.errors import InvalidInput
from signet_desktop.domain.events import Event, MemoriesEmbedded
from signet_desktop.domain.memory import Actor
from signet_desktop.domain.recall import RecallQuery
from signet_desktop.embedding.generations import list_generations
from signet_desktop.embedding.index import VectorIndex
from signet_desktop.embedding.tracker import BACKFILL_JOB, EmbeddingTracker
from signet_desktop.queue import jobs
from signet_desktop.recall.engine import RecallEngine
from signet_desktop.recall.vector import SemanticChannel
from signet_desktop.service.embeddings.batches import PendingVector, VectorBatcher, split_batches
from signet_desktop.service.embeddings.vectors import EmbeddingVectors
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.storage.database import Database, open_database
from signet_desktop.storage.guard import ProviderCallInWriteTransaction

VECTORS_OF = "SELECT e.source_id, g.model FROM embeddings e JOIN embedding_generations g ON g.id = e.generation_id"  # noqa: E501


class PoisonEmbedder(ScriptedEmbedder):
    """Fails any call that contains a text with 'poison' in it (one bad text, whole batch)."""

    def embed(self, texts):  # type: ignore[no-untyped-def]
        if any("poison" in text for text in texts):
            super().embed(texts)  # counted and guarded like any call
            raise RuntimeError("the model fell over")
        return super().embed(texts)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(tmp_path / "t.db")
    yield database
    database.close()


class Recorded:
    """An event sink that keeps what was published."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def publish(self, event: Event) -> None:
        self.events.append(event)


def following(
    db: Database, embedder: ScriptedEmbedder, events: Recorded | None = None
) -> tuple[MemoryService, EmbeddingVectors]:
    """A memory service whose vectors follow from a batcher that only runs when told."""
    index = VectorIndex(db)
    generation = EmbeddingTracker(db, index, embedder).start()
    port = EmbeddingVectors(index, embedder, generation, db=db, autostart=False, events=events)
    return MemoryService(db, port, follow=port), port


def vector_ids(db: Database) -> dict[str, str]:
    return {str(r[0]): str(r[1]) for r in db.reader().execute(VECTORS_OF).fetchall()}


def item(text: str) -> PendingVector:
    return PendingVector(text, "default", text, "h")


def test_batches_are_bounded_by_count_and_characters_and_a_long_text_travels_alone() -> None:
    small = [item(f"s{i}") for i in range(5)]
    huge = item("x" * 10_000)
    batches = split_batches([*small[:2], huge, *small[2:]], max_items=3, max_chars=100)
    assert [[p.memory_id for p in batch] for batch in batches] == [
        ["s0", "s1"],
        [huge.memory_id],
        ["s2", "s3", "s4"],
    ]


def test_a_full_queue_drops_the_follow_up_and_counts_it() -> None:
    stored: list[list[str]] = []
    batcher = VectorBatcher(
        lambda batch: stored.append([p.memory_id for p in batch]), max_queued=2, autostart=False
    )
    assert batcher.submit([item("a"), item("b"), item("c")]) == 2
    assert batcher.dropped == 1 and batcher.pending == 2
    assert batcher.run_once() and stored == [["a", "b"]]
    assert not batcher.run_once()


def test_remember_is_acknowledged_pending_and_found_lexically_before_its_vector(
    db: Database,
) -> None:
    embedder = ScriptedEmbedder()
    service, port = following(db, embedder)
    outcome = service.remember(RememberRequest(content="kafka retention is seven days"), Actor())
    assert (outcome.embedded, outcome.vector) == (False, "pending")
    assert embedder.calls == 0 and vector_ids(db) == {}
    fts = (
        db.reader()
        .execute("SELECT COUNT(*) FROM memories_fts WHERE memories_fts MATCH 'kafka'")
        .fetchone()[0]
    )
    assert fts == 1  # lexical recall finds it at once
    assert port.batcher.run_once()
    assert set(vector_ids(db)) == {outcome.memory.id} and embedder.calls == 1


def test_concurrent_remembers_share_one_provider_call(db: Database) -> None:
    embedder = ScriptedEmbedder()
    service, port = following(db, embedder)
    ids = [
        service.remember(RememberRequest(content=f"note {i}"), Actor()).memory.id for i in range(10)
    ]
    assert port.batcher.run_once() and not port.batcher.run_once()
    assert embedder.calls == 1 and set(vector_ids(db)) == set(ids)


def test_a_stored_batch_publishes_memory_embedded_per_agent_after_the_commit(
    db: Database,
) -> None:
    recorded = Recorded()
    service, port = following(db, ScriptedEmbedder(), recorded)
    mine = service.remember(RememberRequest(content="mine"), Actor()).memory.id
    theirs = service.remember(RememberRequest(content="theirs", agent_id="other"), Actor())
    assert port.batcher.run_once()
    embedded = [e for e in recorded.events if isinstance(e, MemoriesEmbedded)]
    assert {(e.agent_id, e.memory_ids) for e in embedded} == {
        ("default", (mine,)),
        ("other", (theirs.memory.id,)),
    }
    assert all(e.kind == "memory.embedded" for e in embedded)
    assert set(vector_ids(db)) == {mine, theirs.memory.id}  # visible when the event is out


def test_a_refused_batch_publishes_no_memory_embedded(db: Database) -> None:
    recorded = Recorded()
    service, port = following(db, PoisonEmbedder(), recorded)
    service.remember(RememberRequest(content="poison pill"), Actor())
    assert port.batcher.run_once()
    assert not [e for e in recorded.events if isinstance(e, MemoriesEmbedded)]


def test_the_embedder_failing_mid_batch_keeps_the_memories_and_queues_their_jobs(
    db: Database,
) -> None:
    embedder = PoisonEmbedder()
    service, port = following(db, embedder)
    first = [
        service.remember(RememberRequest(content=text), Actor()).memory.id
        for text in ("fine one", "poison pill", "fine two")
    ]
    assert port.batcher.run_once()
    later = service.remember(RememberRequest(content="fine three"), Actor()).memory.id
    assert port.batcher.run_once()
    assert set(vector_ids(db)) == {later}  # the next batch is unaffected
    queued = db.reader().execute(
        "SELECT memory_id FROM memory_jobs WHERE job_type = :t AND status = 'pending'",
        {"t": BACKFILL_JOB},
    )
    assert {str(r[0]) for r in queued} == set(first)
    assert service.count("default") == 4


def test_the_batcher_refuses_to_embed_inside_a_write_transaction(db: Database) -> None:
    service, port = following(db, ScriptedEmbedder())
    memory = service.remember(RememberRequest(content="guarded"), Actor()).memory
    with db.write(), pytest.raises(ProviderCallInWriteTransaction):
        port.store_batch([PendingVector.of(memory)])


def test_remember_many_writes_in_order_dedupes_and_stores_every_vector(db: Database) -> None:
    embedder = ScriptedEmbedder()
    service, _ = following(db, embedder)
    existing = service.remember(RememberRequest(content="already here"), Actor()).memory
    texts = ["alpha note", "beta note", "alpha note", "already here", "x" * 5000]
    outcomes = service.remember_many([RememberRequest(content=t) for t in texts], Actor())
    assert [o.memory.content for o in outcomes] == texts
    assert [o.deduped for o in outcomes] == [False, False, True, True, False]
    assert outcomes[2].memory.id == outcomes[0].memory.id
    assert outcomes[3].memory.id == existing.id
    assert [o.vector for o in outcomes] == ["stored", "stored", "existing", "existing", "stored"]
    fresh = {outcomes[i].memory.id for i in (0, 1, 4)}
    assert fresh <= set(vector_ids(db))


def test_remember_many_refuses_the_whole_call_for_one_invalid_item(db: Database) -> None:
    service, _ = following(db, ScriptedEmbedder())
    with pytest.raises(InvalidInput, match="item 1"):
        service.remember_many(
            [RememberRequest(content="good"), RememberRequest(content="   ")], Actor()
        )
    assert service.count("default") == 0


def test_remember_many_with_a_failing_batch_saves_everything_and_queues_backfills(
    db: Database,
) -> None:
    service, _ = following(db, PoisonEmbedder())
    outcomes = service.remember_many(
        [RememberRequest(content=t) for t in ("one", "poison", "two")], Actor()
    )
    assert [o.vector for o in outcomes] == ["queued"] * 3
    assert service.count("default") == 3
    with db.write() as conn:
        assert all(jobs.enqueue(conn, BACKFILL_JOB, agent_id="default", memory_id=o.memory.id,
                                dedupe_memory=True)[1] is False for o in outcomes)  # fmt: skip


def test_a_model_change_with_vectors_in_flight_never_mixes_generations(db: Database) -> None:
    """Pending vectors of model A at shutdown are made by model B's tracker, in B's generation."""
    old = ScriptedEmbedder(model="model-a")
    service, port = following(db, old)
    ids = {
        service.remember(RememberRequest(content=f"in flight {i}"), Actor()).memory.id
        for i in range(5)
    }
    port.close()  # the daemon stops (or dies) before the batcher ran: nothing was embedded
    assert not port.batcher.run_once() and vector_ids(db) == {}
    new = ScriptedEmbedder(model="model-b")
    tracker = EmbeddingTracker(db, VectorIndex(db), new, batch_size=8)
    tracker.backfill(100)
    assert vector_ids(db) == dict.fromkeys(ids, "model-b")
    assert old.calls == 0
    assert {g.model for g in list_generations(db.reader())} == {"model-a", "model-b"}


def test_recall_says_partial_while_the_agents_vectors_are_pending(db: Database) -> None:
    """vectorCompleteness never claims `complete` while remembered memories wait for vectors."""
    embedder = ScriptedEmbedder()
    service, port = following(db, embedder)
    channel = SemanticChannel(embedder, vec_available=True)
    engine = RecallEngine(db, semantic=channel)
    service.remember(RememberRequest(content="kafka retention is seven days"), Actor())
    service.remember(RememberRequest(content="another agent's note", agent_id="bob"), Actor())
    assert (port.batcher.pending_for("default"), port.batcher.pending_for("bob")) == (1, 1)
    first = engine.recall(RecallQuery(query="kafka retention"))
    assert first.vector_completeness == "partial"
    assert any("1 memory has no vector yet" in note for note in first.notes)
    assert [hit.memory.content for hit in first.hits] == ["kafka retention is seven days"]
    while port.batcher.run_once():
        pass
    assert port.batcher.pending_for("default") == 0
    assert engine.recall(RecallQuery(query="kafka retention")).vector_completeness == "complete"
    engine.close()


def test_close_waits_for_the_batch_in_flight_before_the_database_can_close() -> None:
    """The desktop stop raced here: close returned while a batch was embedding, and its
    write then hit a closed database."""
    import threading
    import time

    started, stored = threading.Event(), []

    def slow_store(batch):  # type: ignore[no-untyped-def]
        started.set()
        time.sleep(0.3)  # longer than the drain below
        stored.append([p.memory_id for p in batch])

    batcher = VectorBatcher(slow_store)
    batcher.submit([item("a")])
    assert started.wait(5)
    batcher.close(drain_s=0.01, join_s=5.0)  # within its join budget
    assert stored == [["a"]]  # written before close returned


def test_a_batch_abandoned_at_shutdown_is_logged_quietly_not_as_a_crash(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import threading

    started, release = threading.Event(), threading.Event()

    def store_after_the_database_closed(batch):  # type: ignore[no-untyped-def]
        started.set()
        release.wait(5)
        raise RuntimeError("database is closed")

    batcher = VectorBatcher(store_after_the_database_closed)
    batcher.submit([item("a")])
    assert started.wait(5)
    with caplog.at_level("INFO"):
        batcher.close(drain_s=0.01, join_s=0.05)  # gives up on the join: still embedding
        release.set()
        assert batcher._thread is not None
        batcher._thread.join(60)  # a niced thread: slow to get the CPU on a loaded machine
        assert not batcher._thread.is_alive()
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]
    assert any("abandoned at shutdown" in r.getMessage() for r in caplog.records)


def test_a_batch_still_embedding_after_the_join_leaves_without_writing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Past its join budget, close() tells the batch to stop: it leaves the embedder call
    (run_interruptibly) and never reaches its write, so nothing meets a closed database."""
    import threading

    from signet_desktop.queue.worker import run_interruptibly

    started, release, stored = threading.Event(), threading.Event(), []

    def store_with_a_slow_embedder(batch):  # type: ignore[no-untyped-def]
        started.set()
        run_interruptibly(lambda: release.wait(30))  # the provider call
        stored.append([p.memory_id for p in batch])  # the write

    batcher = VectorBatcher(store_with_a_slow_embedder)
    batcher.submit([item("a")])
    assert started.wait(5)
    with caplog.at_level("INFO"):
        batcher.close(drain_s=0.01, join_s=0.05)
        assert batcher._thread is not None
        batcher._thread.join(60)  # a niced thread: slow to get the CPU on a loaded machine
        assert not batcher._thread.is_alive()
    release.set()
    assert stored == []
    messages = [r.getMessage() for r in caplog.records]
    assert "a vector batch abandoned at shutdown; left to the tracker" in messages
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]
