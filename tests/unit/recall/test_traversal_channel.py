"""The traversal channel through the engine: focal entities, scores, scope, filters, partial."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from support import traversal_seed as seed
from support.fakes import ScriptedEmbedder

from signet_desktop.domain.memory import Actor
from signet_desktop.domain.recall import RecallFilters, RecallQuery
from signet_desktop.embedding.index import VectorIndex
from signet_desktop.graph.traversal import TraversalBounds
from signet_desktop.recall import traversal
from signet_desktop.recall.engine import RecallEngine, default_channels
from signet_desktop.recall.lexical import LexicalChannel
from signet_desktop.recall.query_vectors import RecentQueryVectors
from signet_desktop.recall.traversal import TraversalChannel, focal_names, vector_score
from signet_desktop.recall.vector import SemanticChannel
from signet_desktop.service.embeddings.vectors import EmbeddingVectors
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.storage.database import Database, open_database


@pytest.fixture
def embedder() -> ScriptedEmbedder:
    return ScriptedEmbedder(64)


@pytest.fixture
def db(tmp_path: Path, embedder: ScriptedEmbedder) -> Iterator[Database]:
    database = open_database(tmp_path / "t.db")
    yield database
    database.close()


def remember_all(
    db: Database, embedder: ScriptedEmbedder, texts: list[str], agent: str
) -> list[str]:
    index = VectorIndex(db)
    generation = index.ensure_generation(provider="scripted", model=embedder.model, dimensions=64)
    port = EmbeddingVectors(index, embedder, generation)
    service = MemoryService(db, port)
    ids = [
        service.remember(RememberRequest(content=t, agent_id=agent), Actor()).memory.id
        for t in texts
    ]
    port.close()
    return ids


def graph(db: Database, embedder: ScriptedEmbedder) -> dict[str, str]:
    texts = ["invoices stay for seven years", "replicas are promoted by hand", "tea at noon"]
    claim_memory, replica, tea = remember_all(db, embedder, texts, "default")
    with db.write() as conn:
        atlas = seed.entity(conn, "default", "Atlas")
        seed.alias(conn, "default", atlas, "atlas billing")
        postgres = seed.entity(conn, "default", "postgres")
        storage = seed.aspect(conn, "default", atlas, "storage")
        seed.claim(conn, "default", storage, "invoices kept seven years", claim_memory)
        seed.depends(conn, "default", atlas, postgres, strength=0.5)
        seed.mention(conn, "default", replica, postgres)
    return {"claim": claim_memory, "replica": replica, "tea": tea, "atlas": atlas}


def engine(
    db: Database, *, embedder: ScriptedEmbedder | None = None, in_memory: bool = True, **bounds: int
) -> RecallEngine:
    if embedder is None:
        channels = (LexicalChannel(), TraversalChannel(TraversalBounds(**bounds)))  # type: ignore[arg-type]
        return RecallEngine(db, channels=channels, min_score=0.0)
    vectors = RecentQueryVectors(embedder)
    semantic = SemanticChannel(vectors, vec_available=db.vec.available, in_memory=in_memory)
    traversal = TraversalChannel(TraversalBounds(**bounds), semantic=semantic, vectors=vectors)  # type: ignore[arg-type]
    return RecallEngine(db, channels=(*default_channels(semantic), traversal), min_score=0.0)


def test_focal_names_are_phrases_and_lower_case_words() -> None:
    names = focal_names("does Atlas Billing still use postgres?")
    assert names[:3] == ["atlas billing", "atlas", "billing"]
    assert "postgres" in names and "does" not in names


def test_path_scores_without_a_query_vector(db: Database, embedder: ScriptedEmbedder) -> None:
    ids = graph(db, embedder)
    recall = engine(db)
    result = recall.recall(RecallQuery("what does atlas billing keep?"))  # via the alias
    recall.close()
    hits = {h.memory.id: h for h in result.hits}
    claim, replica = (
        hits[ids["claim"]].channels["traversal"],
        hits[ids["replica"]].channels["traversal"],
    )
    assert claim.score == pytest.approx(0.7 * 1.0 + 0.3 * 0.5)  # a claim of confidence 1
    assert replica.score == pytest.approx(0.7 * 0.5 * 0.8 + 0.3 * 0.5)  # one hop of 0.5
    assert claim.rank == 1 and replica.rank == 2
    assert ids["tea"] not in hits
    assert result.traversal is not None and result.traversal.paths == 2


def test_scores_use_the_semantic_channels_query_vector(
    db: Database, embedder: ScriptedEmbedder
) -> None:
    ids = graph(db, embedder)
    recall = engine(db, embedder=embedder)
    calls = embedder.calls
    result = recall.recall(RecallQuery("how long are Atlas invoices kept?"))
    recall.close()
    assert embedder.calls == calls + 1  # one query embedding for both channels
    hit = next(h for h in result.hits if h.memory.id == ids["claim"])
    evidence = hit.channels["traversal"]
    assert evidence.score == pytest.approx(vector_score(evidence.raw, 0.5))
    assert -1.0 <= evidence.raw <= 1.0  # the cosine


def stored_cosine(db: Database, embedder: ScriptedEmbedder, memory_id: str, text: str) -> float:
    conn = db.reader()
    blob = conn.execute(
        "SELECT vector FROM embeddings WHERE source_id = ?", (memory_id,)
    ).fetchone()[0]
    query = np.asarray(embedder.embed([text])[0], dtype=np.float32)
    return float(np.frombuffer(bytes(blob), dtype=np.float32) @ query)


@pytest.mark.parametrize("in_memory", [True, False])
def test_cosines_come_from_the_matrix_or_the_stored_vector_alike(
    db: Database, embedder: ScriptedEmbedder, monkeypatch: pytest.MonkeyPatch, in_memory: bool
) -> None:
    if not db.vec.available:
        pytest.skip("sqlite-vec is not loaded: no matrix and no vec0 search")
    ids = graph(db, embedder)
    text = "how long are Atlas invoices kept?"
    if in_memory:  # the matrix holds every vector: reading a blob would be a wasted read
        monkeypatch.setattr(traversal, "VECTORS", "SELECT no_such_column FROM embeddings")
    recall = engine(db, embedder=embedder, in_memory=in_memory)
    result = recall.recall(RecallQuery(text))
    recall.close()
    evidence = {
        h.memory.id: h.channels["traversal"] for h in result.hits if "traversal" in h.channels
    }
    assert set(evidence) == {ids["claim"], ids["replica"]}
    for memory_id, found in evidence.items():
        assert found.raw == pytest.approx(stored_cosine(db, embedder, memory_id, text), abs=1e-6)
        assert found.score == pytest.approx(vector_score(found.raw, 0.5))


def test_filters_and_deletion_hold_for_traversal_candidates(
    db: Database, embedder: ScriptedEmbedder
) -> None:
    ids = graph(db, embedder)
    with db.write() as conn:
        conn.execute("UPDATE memories SET is_deleted = 1 WHERE id = ?", (ids["replica"],))
    recall = engine(db)
    found = recall.recall(RecallQuery("Atlas"))
    typed = recall.recall(RecallQuery("Atlas", filters=RecallFilters(type="decision")))
    recall.close()
    assert {h.memory.id for h in found.hits} == {ids["claim"]}
    assert typed.hits == ()


def test_another_agents_graph_is_never_walked(db: Database, embedder: ScriptedEmbedder) -> None:
    ids = graph(db, embedder)
    [theirs] = remember_all(db, embedder, ["zephyr secrets"], "other")
    with db.write() as conn:
        zephyr = seed.entity(conn, "other", "Zephyr")
        seed.mention(conn, "other", theirs, zephyr)
        # A cross-agent row that should never exist: the walk must not follow it either.
        seed.mention(conn, "default", theirs, ids["atlas"])
    recall = engine(db)
    mine = recall.recall(RecallQuery("Zephyr"))
    atlas = recall.recall(RecallQuery("Atlas"))
    other = recall.recall(RecallQuery("Atlas", agent_id="other"))
    recall.close()
    assert mine.hits == () and mine.traversal is None
    assert theirs not in {h.memory.id for h in atlas.hits}
    assert other.traversal is None and other.hits == ()


def test_a_traversal_past_its_time_budget_is_answered_and_marked_partial(
    db: Database, embedder: ScriptedEmbedder
) -> None:
    graph(db, embedder)
    recall = engine(db, timeout_ms=0)
    result = recall.recall(RecallQuery("what does Atlas keep about invoices?"))
    recall.close()
    assert result.traversal is not None and result.traversal.partial
    assert "traversal partial: time budget exceeded" in result.notes
    assert result.hits  # the lexical channel still answered
