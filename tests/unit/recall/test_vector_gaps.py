"""Recall with memories that have no vector yet: candidates embedded within a bound, and a
`vectorCompleteness` that says what the semantic channel saw."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.fakes import ScriptedEmbedder

from signet_desktop.domain.memory import Actor
from signet_desktop.domain.recall import RecallQuery, RecallResult
from signet_desktop.embedding.index import VectorIndex
from signet_desktop.embedding.tracker import EmbeddingTracker
from signet_desktop.recall.engine import RecallEngine
from signet_desktop.recall.vector import SemanticChannel
from signet_desktop.recall.vector_gaps import GapFill, VectorGaps, completeness
from signet_desktop.service.embeddings.vectors import EmbeddingVectors
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.storage.database import Database, open_database

KAFKA = [
    "kafka retention is seven days",
    "kafka brokers run on three hosts",
    "kafka topics are compacted weekly",
]


class Workspace:
    """Memories whose vectors follow from a batcher that runs only when told."""

    def __init__(self, db: Database, gaps: Callable[[ScriptedEmbedder], VectorGaps] | None) -> None:
        self.embedder = ScriptedEmbedder()
        index = VectorIndex(db)
        generation = EmbeddingTracker(db, index, self.embedder).start()
        self.port = EmbeddingVectors(index, self.embedder, generation, db=db, autostart=False)
        self.memories = MemoryService(db, self.port, follow=self.port)
        made = None if gaps is None else gaps(self.embedder)
        channel = SemanticChannel(self.embedder, vec_available=True, gaps=made)
        self.engine = RecallEngine(db, semantic=channel)

    def remember(self, *texts: str) -> list[str]:
        return [
            self.memories.remember(RememberRequest(content=text), Actor()).memory.id
            for text in texts
        ]

    def recall(self, text: str, **kw: object) -> RecallResult:
        return self.engine.recall(RecallQuery(query=text, **kw))  # type: ignore[arg-type]

    def embed_all(self) -> None:
        while self.port.batcher.run_once():
            pass

    def close(self) -> None:
        self.engine.close()
        self.port.close()


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(tmp_path / "g.db")
    yield database
    database.close()


def workspace(db: Database, **bounds: Any) -> Workspace:
    """A workspace whose recalls embed candidates within these bounds."""
    return Workspace(db, lambda embedder: VectorGaps(embedder, **bounds))


def semantic_ids(result: RecallResult) -> set[str]:
    return {hit.memory.id for hit in result.hits if "semantic" in hit.channels}


def test_candidates_without_a_vector_are_embedded_and_scored_by_the_recall(db: Database) -> None:
    w = workspace(db)
    ids = w.remember(*KAFKA)
    calls = w.embedder.calls
    result = w.recall("kafka retention", min_score=0.0)
    assert result.vector_completeness == "candidates-complete"
    assert semantic_ids(result) == set(ids)  # every lexical candidate has its cosine
    assert any("3 of the candidates among them embedded for this recall" in n for n in result.notes)
    # the same question again: the vectors made for the first recall are reused
    embedded_once = w.embedder.calls
    assert embedded_once > calls
    again = w.recall("kafka retention", min_score=0.0)
    assert semantic_ids(again) == set(ids)
    assert w.embedder.calls == embedded_once + 1  # the query only (a new query vector)
    w.close()


def test_the_ranking_during_the_lag_matches_the_ranking_after_the_vectors_land(
    db: Database,
) -> None:
    """Every memory here is a keyword candidate (what only vector search would find among
    memories still waiting is missed until their vectors land: `candidates-complete`)."""
    w = workspace(db)
    w.remember(*KAFKA)
    during = w.recall("kafka hosts", min_score=0.0)
    w.embed_all()
    after = w.recall("kafka hosts", min_score=0.0)
    assert after.vector_completeness == "complete" and not after.notes
    assert [h.memory.id for h in during.hits] == [h.memory.id for h in after.hits]
    for before, now in zip(during.hits, after.hits, strict=True):
        assert before.channels["semantic"].raw == pytest.approx(now.channels["semantic"].raw)
    w.close()


def test_past_the_count_bound_the_rest_are_ranked_by_keywords_and_it_says_so(
    db: Database,
) -> None:
    w = workspace(db, max_texts=1)
    w.remember(*KAFKA)
    result = w.recall("kafka", min_score=0.0)
    assert result.vector_completeness == "partial"
    assert len(semantic_ids(result)) == 1
    assert any(
        "2 candidates ranked by keywords only (the per-recall bound)" in n for n in result.notes
    )
    w.close()


def test_past_the_time_budget_no_new_batch_starts(db: Database) -> None:
    ticks = iter(range(0, 10_000, 100))  # every look at the clock: 100 ms later
    w = workspace(db, batch=1, budget_ms=150, clock=lambda: next(ticks) / 1000)
    w.remember(*KAFKA)
    result = w.recall("kafka", min_score=0.0)
    assert result.vector_completeness == "partial"
    # started at 0 ms; batches start at 100 ms and not at 200 ms
    assert len(semantic_ids(result)) == 1
    w.close()


def test_an_embedder_failing_on_candidates_leaves_the_recall_answered_and_says_why(
    db: Database,
) -> None:
    class Failing(ScriptedEmbedder):
        def embed(self, texts):  # type: ignore[no-untyped-def]
            if len(texts) > 1:
                raise RuntimeError("the model fell over")
            return super().embed(texts)

    w = Workspace(db, lambda embedder: VectorGaps(Failing(model=embedder.model)))
    w.remember(*KAFKA)
    result = w.recall("kafka", min_score=0.0)
    assert result.vector_completeness == "partial"
    assert len(result.hits) == 3 and not semantic_ids(result)
    assert any("the embedder failed: the model fell over" in n for n in result.notes)
    w.close()


def test_a_memory_without_a_vector_outside_the_batchers_queue_is_not_called_complete(
    db: Database,
) -> None:
    """The old check asked only the batcher's queue: a memory it dropped (a full queue, a
    shutdown) or an import's backlog read as `complete` while recall ran lexical-only on it."""
    w = Workspace(db, None)
    w.remember(KAFKA[0])
    w.port.batcher.close()  # the queued vector is left to the tracker's scan
    assert w.port.batcher.pending_for("default") == 0
    result = w.recall("kafka retention")
    assert result.vector_completeness == "partial"
    assert any("1 memory has no vector yet" in n for n in result.notes)
    w.close()


def test_only_the_agents_own_memories_without_a_vector_count(db: Database) -> None:
    w = workspace(db)
    w.remember(KAFKA[0])
    w.embed_all()
    w.memories.remember(RememberRequest(content="kafka at bob's", agent_id="bob"), Actor())
    result = w.recall("kafka retention")
    assert result.vector_completeness == "complete" and not result.notes
    w.close()


def test_a_semantic_only_recall_cannot_check_candidates_and_says_partial(db: Database) -> None:
    w = workspace(db)
    w.remember(*KAFKA)
    result = w.recall("kafka", channels=("semantic",))
    assert result.vector_completeness == "partial"
    assert any("vector recall does not see them yet" in n for n in result.notes)
    w.close()


@pytest.mark.parametrize(
    ("waiting", "fill", "state"),
    [
        (0, None, "complete"),
        (0, GapFill([], 0), "complete"),
        (4, None, "partial"),
        (4, GapFill([], 0), "candidates-complete"),
        (4, GapFill([("a", 0.5)], 1), "candidates-complete"),
        (4, GapFill([("a", 0.5)], 2), "partial"),
    ],
)
def test_completeness_states(waiting: int, fill: GapFill | None, state: str) -> None:
    assert completeness("complete", waiting, fill)[0] == state


def test_an_approximate_search_without_gaps_stays_approximate() -> None:
    assert completeness("approximate", 0, GapFill([], 0)) == ("approximate", None)
