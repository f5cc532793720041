"""Content edits: vectors follow the write, FTS and hints the text, cited rows go to review."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.fakes import ScriptedEmbedder

from signet_desktop.domain.errors import Conflict, NotFound
from signet_desktop.domain.events import Event, MemoryUpdated
from signet_desktop.domain.knowledge import parse_structured
from signet_desktop.domain.memory import Actor, MemoryPatch
from signet_desktop.embedding.index import VectorIndex
from signet_desktop.embedding.tracker import BACKFILL_JOB, EmbeddingTracker
from signet_desktop.service.embeddings.vectors import EmbeddingVectors
from signet_desktop.service.knowledge.service import KnowledgeService
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.storage import hints
from signet_desktop.storage.database import Database, open_database

ACTOR = Actor(changed_by="tester")
TABLES = ("memories", "memory_history", "embeddings", "memory_hints", "dreaming_attention",
          "memory_entity_mentions", "memory_jobs", "entity_attributes")  # fmt: skip


class Recorded:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def publish(self, event: Event) -> None:
        self.events.append(event)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(tmp_path / "t.db")
    yield database
    database.close()


def vectors(db: Database, embedder: ScriptedEmbedder) -> EmbeddingVectors:
    index = VectorIndex(db)
    generation = EmbeddingTracker(db, index, embedder).start()
    return EmbeddingVectors(index, embedder, generation, db=db, autostart=False)


def rows(db: Database, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in db.reader().execute(sql, params).fetchall()]


def counts(db: Database) -> dict[str, int]:
    return {t: rows(db, f"SELECT COUNT(*) FROM {t}")[0][0] for t in TABLES}


def edit(service: MemoryService, memory_id: str, content: str, **kw: Any) -> Any:
    return service.modify(
        kw.pop("agent", "default"), memory_id, MemoryPatch(content=content),
        reason="correction", if_version=kw.pop("if_version", None), actor=ACTOR,
    )  # fmt: skip


def test_following_vector_regenerates_after_the_commit_never_inside_it(db: Database) -> None:
    embedder = ScriptedEmbedder()
    port = vectors(db, embedder)
    recorded = Recorded()
    service = MemoryService(db, port, recorded, follow=port)
    memory = service.remember(RememberRequest(content="kafka keeps data seven days"), ACTOR).memory
    assert port.batcher.run_once()
    calls = embedder.calls
    change = edit(service, memory.id, "kafka keeps data fourteen days")
    # The write ran without a provider call (the scripted embedder refuses one inside a
    # write transaction); the stale vector went with it and the new one is queued.
    assert change.vector == "pending" and embedder.calls == calls
    assert rows(db, "SELECT COUNT(*) FROM embeddings") == [(0,)]
    assert change.memory.embedding_model is None and change.memory.extraction_status == "none"
    assert port.batcher.run_once()
    stored = rows(db, "SELECT source_id, content_hash FROM embeddings")
    assert stored == [(memory.id, change.memory.content_hash)]
    assert embedder.texts[-1] == "kafka keeps data fourteen days"
    updated = [e for e in recorded.events if isinstance(e, MemoryUpdated)]
    assert [e.changed for e in updated] == [("content",)]


def test_inline_vector_is_embedded_before_and_attached_in_the_transaction(db: Database) -> None:
    embedder = ScriptedEmbedder()
    service = MemoryService(db, vectors(db, embedder))
    memory = service.remember(RememberRequest(content="the cache is redis"), ACTOR).memory
    change = edit(service, memory.id, "the cache is memcached")
    assert change.vector == "stored" and change.memory.embedding_model == embedder.model
    assert rows(db, "SELECT content_hash FROM embeddings") == [(change.memory.content_hash,)]
    embedder.mode = "down"
    again = edit(service, memory.id, "the cache is valkey")
    assert again.vector == "queued"
    assert rows(db, "SELECT COUNT(*) FROM embeddings") == [(0,)]
    jobs = rows(db, "SELECT job_type, memory_id FROM memory_jobs WHERE status = 'pending'")
    assert (BACKFILL_JOB, memory.id) in jobs


def test_fts_and_hints_follow_the_new_text(db: Database) -> None:
    service = MemoryService(db)
    memory = service.remember(RememberRequest(content="deploys run on tuesday"), ACTOR).memory
    with db.write() as conn:
        hints.insert_hints(conn, "default", memory.id, ["when do deploys run?"])
    edit(service, memory.id, "deploys run on thursday")
    match = "SELECT COUNT(*) FROM memories_fts WHERE memories_fts MATCH ?"
    assert rows(db, match, "tuesday") == [(0,)] and rows(db, match, "thursday") == [(1,)]
    assert rows(db, "SELECT COUNT(*) FROM memory_hints") == [(0,)]
    event = service.history("default", memory.id)[-1]
    assert event.old_content == "deploys run on tuesday" and event.metadata["hintsDropped"] == 1


def _structured(service: MemoryService, text: str) -> str:
    payload = parse_structured(
        {
            "entities": [{"name": "Billing", "type": "service"}],
            "aspects": [{"entity": "Billing", "name": "storage", "claims": ["postgres 16"]}],
        }
    )
    request = RememberRequest(content=text, structured=payload)
    return service.remember(request, ACTOR).memory.id


def attention(db: Database) -> list[tuple[Any, ...]]:
    return rows(db, "SELECT kind, subject_ref, status, priority FROM dreaming_attention ORDER BY 2")


def test_rows_whose_quote_the_new_text_still_holds_are_left_alone(db: Database) -> None:
    service = MemoryService(db)
    memory_id = _structured(service, "Billing stores its data in postgres 16")
    edit(service, memory_id, "Billing stores its data in postgres 16 (since March)")
    assert attention(db) == []  # the claim's quote (the old text) is still there
    assert service.history("default", memory_id)[-1].metadata["flaggedForReview"] == 0


def test_rows_citing_text_that_is_gone_are_flagged_for_dreaming_not_changed(db: Database) -> None:
    service = MemoryService(db)
    memory_id = _structured(service, "Billing stores its data in postgres 16")
    claims_before = rows(db, "SELECT id, status, content FROM entity_attributes")
    change = edit(service, memory_id, "Invoices live in mysql 8 now")
    (claim_id, _, _), entity = claims_before[0], rows(db, "SELECT id FROM entities")[0][0]
    assert set(change.flagged) == {f"claim:{claim_id}", f"entity:{entity}"}
    assert attention(db) == sorted(
        [("review_due", f"claim:{claim_id}", "pending", 60),
         ("review_due", f"entity:{entity}", "pending", 60)], key=lambda r: r[1],
    )  # fmt: skip
    details = rows(db, "SELECT details_json FROM dreaming_attention LIMIT 1")[0][0]
    assert '"reason": "evidence_changed"' in details and f"memory:{memory_id}" in details
    assert rows(db, "SELECT id, status, content FROM entity_attributes") == claims_before
    event = service.history("default", memory_id)[-1]
    assert event.metadata["flaggedForReview"] == 2


def test_mentions_of_existing_entities_are_linked_from_the_new_text(db: Database) -> None:
    service = MemoryService(db)
    KnowledgeService(db).create_entity("default", "Kafka", actor=ACTOR, entity_type="system")
    memory = service.remember(RememberRequest(content="we queue jobs in Redis"), ACTOR).memory
    assert rows(db, "SELECT COUNT(*) FROM memory_entity_mentions") == [(0,)]
    edit(service, memory.id, "we queue jobs in Kafka")
    linked = rows(db, "SELECT memory_id, mention_text FROM memory_entity_mentions")
    assert linked == [(memory.id, "Kafka")]
    edit(service, memory.id, "we queue jobs in Redis again")
    # The mention's text is gone: the link stays, the entity is put up for review.
    assert [row[1] for row in attention(db)] == [
        f"entity:{rows(db, 'SELECT id FROM entities')[0][0]}"
    ]


def test_refused_edits_write_nothing(db: Database) -> None:
    embedder = ScriptedEmbedder()
    service = MemoryService(db, vectors(db, embedder))
    memory_id = _structured(service, "Billing stores its data in postgres 16")
    other = service.remember(RememberRequest(content="Lunch is at noon"), ACTOR).memory
    gone = service.remember(RememberRequest(content="an old note"), ACTOR).memory
    service.forget("default", gone.id, reason="r", actor=ACTOR)
    theirs = service.remember(RememberRequest(content="b's note", agent_id="b"), ACTOR).memory
    before, row = counts(db), rows(db, "SELECT * FROM memories WHERE id = ?", memory_id)
    with pytest.raises(Conflict) as clash:
        edit(service, memory_id, "lunch is at noon.")  # the same normalised text
    assert clash.value.code == "duplicate_content_hash"
    assert clash.value.details["duplicate_memory_id"] == other.id
    with pytest.raises(Conflict) as stale:
        edit(service, memory_id, "new text", if_version=7)
    assert stale.value.code == "version_conflict"
    with pytest.raises(Conflict) as deleted:
        edit(service, gone.id, "new text")
    assert deleted.value.code == "deleted" and deleted.value.details["current_version"] == 2
    with pytest.raises(NotFound) as foreign:
        edit(service, theirs.id, "mine now")
    assert foreign.value.details == {"id": theirs.id}
    assert counts(db) == before
    assert rows(db, "SELECT * FROM memories WHERE id = ?", memory_id) == row
    assert rows(db, "SELECT content FROM memories WHERE id = ?", theirs.id) == [("b's note",)]


def test_batch_edits_content_per_item(db: Database) -> None:
    from signet_desktop.domain.memory import BatchPatch

    service = MemoryService(db)
    a = service.remember(RememberRequest(content="alpha text"), ACTOR).memory
    b = service.remember(RememberRequest(content="beta text"), ACTOR).memory
    gone = service.remember(RememberRequest(content="gamma text"), ACTOR).memory
    service.forget("default", gone.id, reason="r", actor=ACTOR)
    items = service.modify_batch(
        "default",
        [BatchPatch(a.id, MemoryPatch(content="alpha, corrected")),
         BatchPatch(b.id, MemoryPatch(content="alpha, corrected!")),
         BatchPatch(gone.id, MemoryPatch(type="decision"))],
        reason="fix", actor=ACTOR,
    )  # fmt: skip
    assert [(i.status, i.changed, i.vector) for i in items] == [
        ("updated", ("content",), "none"),
        ("duplicate_content_hash", (), None),
        ("deleted", (), None),
    ]
    assert items[1].duplicate_of == a.id and items[2].current_version == 2
    assert service.get("default", b.id).content == "beta text"


def test_quotes_are_checked_per_row_as_the_apply_seam_checks_them(db: Database) -> None:
    from signet_desktop.domain.knowledge import Evidence

    service, knowledge = MemoryService(db), KnowledgeService(db)
    text = "Billing calls the Ledger API for refunds. Payroll runs on Fridays."
    memory = service.remember(RememberRequest(content=text), ACTOR).memory
    billing, _ = knowledge.create_entity("default", "Billing", actor=ACTOR)
    ledger, _ = knowledge.create_entity("default", "Ledger", actor=ACTOR)
    # A link citing a sentence the edit removes (with a ref spelled as the seam also accepts),
    # a claim citing one it keeps, and one citing another memory: only the link is flagged.
    link, _ = knowledge.create_link(
        "default", billing.id, ledger.id, "calls", actor=ACTOR,
        evidence=[Evidence("Billing calls the Ledger API", f" Memory: {memory.id} ")],
    )  # fmt: skip
    knowledge.add_claim(
        "default", billing.id, "payroll on fridays", actor=ACTOR, aspect="schedule",
        evidence=[Evidence("Payroll runs on Fridays.", f"memory:{memory.id}")],
    )  # fmt: skip
    other = service.remember(RememberRequest(content="Billing is old"), ACTOR).memory
    knowledge.add_claim(
        "default", billing.id, "old", actor=ACTOR, aspect="age",
        evidence=[Evidence("Billing is old", f"memory:{other.id}")],
    )  # fmt: skip
    change = edit(service, memory.id, "Payroll runs on Fridays.")
    assert change.flagged == (f"link:{link.id}",)
    missing = rows(db, "SELECT details_json FROM dreaming_attention")[0][0]
    assert "Billing calls the Ledger API" in missing
