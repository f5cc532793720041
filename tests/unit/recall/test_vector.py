"""The semantic channel: in-memory exact search, vec0 KNN, the binary prefilter, the
recent-window fallback, scope."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from signet_desktop.domain.memory import Actor
from signet_desktop.domain.recall import RecallFilters
from signet_desktop.embedding import vectors
from signet_desktop.embedding.generations import Generation, register_generation
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.embedding.index import VectorIndex
from signet_desktop.recall.vector import SEMANTIC_FLOOR, SemanticChannel, calibrated
from signet_desktop.service.embeddings.vectors import EmbeddingVectors
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.storage.database import open_database

EMBEDDER = HashEmbedder(64)
TEXTS = [
    "the billing service uses postgres",
    "postgres backups run nightly",
    "the frontend is written in svelte",
    "ana prefers green tea",
    "deploys happen on fridays",
]


class Store:
    """A database with remembered, embedded memories."""

    def __init__(self, path: Path, *, with_vec: bool = True) -> None:
        self.db = open_database(path, with_vec=with_vec)
        index = VectorIndex(self.db)
        self.generation = index.ensure_generation(
            provider="hash", model=EMBEDDER.model, dimensions=EMBEDDER.dimensions
        )
        self.port = EmbeddingVectors(index, EMBEDDER, self.generation)
        self.memories = MemoryService(self.db, self.port)
        self.ids: dict[str, str] = {}

    def remember(self, text: str, **kw: object) -> str:
        outcome = self.memories.remember(RememberRequest(content=text, **kw), Actor())  # type: ignore[arg-type]
        assert outcome.embedded
        self.ids[text] = outcome.memory.id
        return outcome.memory.id

    def close(self) -> None:
        self.port.close()
        self.db.close()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "v.db")
    for text in TEXTS:
        s.remember(text)
    yield s
    s.close()


def search(
    store: Store,
    query: str,
    *,
    channel: SemanticChannel | None = None,
    agent: str = "default",
    filters: RecallFilters | None = None,
    k: int = 10,
):  # type: ignore[no-untyped-def]
    channel = channel or SemanticChannel(EMBEDDER, vec_available=store.db.vec.available)
    generation = channel.generation(store.db.reader())
    assert isinstance(generation, Generation)
    vector = channel.embed_query(query)
    return channel.search(
        store.db.reader(), generation, vector, agent, filters or RecallFilters(), k
    )


def ranked_texts(store: Store, outcome) -> list[str]:  # type: ignore[no-untyped-def]
    by_id = {v: k for k, v in store.ids.items()}
    return [by_id[h.memory_id] for h in outcome.hits]


def test_knn_ranks_by_cosine_with_evidence(store: Store) -> None:
    outcome = search(store, "postgres billing")
    assert (outcome.completeness, outcome.strategy, outcome.searched_window) == (
        "complete", "matrix", None,
    )  # fmt: skip
    assert ranked_texts(store, outcome)[0] == "the billing service uses postgres"
    assert [h.evidence.rank for h in outcome.hits] == list(range(1, len(outcome.hits) + 1))
    sims = [h.evidence.raw for h in outcome.hits]
    assert sims == sorted(sims, reverse=True)
    expected = float(EMBEDDER.embed(["postgres billing"])[0] @ EMBEDDER.embed([TEXTS[0]])[0])
    assert outcome.hits[0].evidence.raw == pytest.approx(expected, abs=1e-5)
    assert all(h.evidence.score == calibrated(h.evidence.raw) for h in outcome.hits)


def test_cosines_are_calibrated_against_the_noise_floor() -> None:
    """Up to the floor a cosine is noise (score 0); above it the score rises linearly to 1."""
    assert calibrated(-0.2) == 0.0 and calibrated(SEMANTIC_FLOOR) == 0.0
    assert calibrated(0.25, floor=0.3) == 0.0
    assert calibrated(0.65, floor=0.3) == pytest.approx(0.5)
    assert calibrated(1.0) == 1.0 and calibrated(1.00001) == 1.0


def test_k_bounds_the_hits(store: Store) -> None:
    assert len(search(store, "postgres", k=2).hits) == 2


def test_filters_and_deletion_apply(store: Store) -> None:
    special = store.remember("postgres tuning notes", who="bo", project="db", tags=("ops",))
    assert ranked_texts(store, search(store, "postgres", filters=RecallFilters(who="bo"))) == [
        "postgres tuning notes"
    ]
    assert (
        search(store, "postgres", filters=RecallFilters(tags=("ops",))).hits[0].memory_id == special
    )
    assert search(store, "postgres", filters=RecallFilters(project="nope")).hits == []
    store.memories.forget("default", special, reason="test", actor=Actor())
    assert special not in {h.memory_id for h in search(store, "postgres tuning notes").hits}


def test_a_selective_filter_widens_the_knn(store: Store) -> None:
    for i in range(60):
        store.remember(f"postgres fact {i}")
    rare = store.remember("a svelte component for maps", who="rare")
    outcome = search(store, "postgres", filters=RecallFilters(who="rare"), k=1)
    assert [h.memory_id for h in outcome.hits] == [rare]


def test_agents_never_see_each_other(store: Store) -> None:
    other = store.remember("the billing service uses postgres", agent_id="other-agent")
    mine = {h.memory_id for h in search(store, "billing postgres").hits}
    theirs = {h.memory_id for h in search(store, "billing postgres", agent="other-agent").hits}
    assert other not in mine and theirs == {other}


def test_scoped_memories_need_their_scope(store: Store) -> None:
    scoped = store.remember("scoped postgres secret", scope="team-a")
    assert scoped not in {h.memory_id for h in search(store, "scoped postgres secret").hits}
    found = search(store, "scoped postgres secret", filters=RecallFilters(scope="team-a"))
    assert [h.memory_id for h in found.hits] == [scoped]


def test_stale_vectors_are_ignored(store: Store) -> None:
    memory_id = store.ids[TEXTS[0]]
    with store.db.write() as conn:
        conn.execute(
            "UPDATE memories SET content_hash = 'changed' WHERE id = :id", {"id": memory_id}
        )
    assert memory_id not in {h.memory_id for h in search(store, TEXTS[0]).hits}


def test_the_binary_prefilter_agrees_with_exact_search(store: Store) -> None:
    for i in range(40):
        store.remember(f"note {i} about {'postgres' if i % 3 else 'svelte'} and more {i}")
    exact = search(store, "postgres note")
    prefilter = search(
        store,
        "postgres note",
        channel=SemanticChannel(EMBEDDER, vec_available=True, exact_max_rows=0),
    )
    assert prefilter.strategy == "prefilter" and prefilter.completeness == "approximate"
    # Same scores in the same order (equal-score neighbours may swap places).
    for a, b in zip(prefilter.hits, exact.hits, strict=True):
        assert a.evidence.raw == pytest.approx(b.evidence.raw, abs=1e-5)
    assert prefilter.hits[0].memory_id == exact.hits[0].memory_id


def test_recent_window_scans_only_the_newest_vectors(tmp_path: Path) -> None:
    store = Store(tmp_path / "novec.db", with_vec=False)
    try:
        for text in TEXTS:
            store.remember(text)
        channel = SemanticChannel(EMBEDDER, vec_available=False, fallback_window=3)
        outcome = search(store, "the billing service uses postgres", channel=channel)
        assert (outcome.completeness, outcome.searched_window) == ("recent-window", 3)
        assert "newest 3 vectors" in (outcome.note or "")
        # Only the three newest memories were in the window; the best overall match was not.
        assert set(ranked_texts(store, outcome)) <= set(TEXTS[-3:])
        wide = SemanticChannel(EMBEDDER, vec_available=False, fallback_window=100)
        assert ranked_texts(store, search(store, TEXTS[0], channel=wide))[0] == TEXTS[0]
    finally:
        store.close()


def test_recent_window_matches_knn_when_everything_fits(tmp_path: Path, store: Store) -> None:
    knn = search(store, "green tea fridays")
    fallback = SemanticChannel(EMBEDDER, vec_available=False)
    scan = search(store, "green tea fridays", channel=fallback)
    assert [h.memory_id for h in scan.hits] == [h.memory_id for h in knn.hits]
    assert np.allclose(
        [h.evidence.raw for h in scan.hits], [h.evidence.raw for h in knn.hits], atol=1e-5
    )


def test_no_searchable_generation_explains_why(store: Store) -> None:
    conn = store.db.reader()
    assert "no embedder" in str(SemanticChannel(None, vec_available=True).generation(conn))
    other = HashEmbedder(32)
    assert "no vectors exist yet" in str(
        SemanticChannel(other, vec_available=True).generation(conn)
    )
    with store.db.write() as wconn:
        register_generation(wconn, provider="hash", model=other.model, dimensions=32)
    reason = SemanticChannel(other, vec_available=True).generation(store.db.reader())
    assert isinstance(reason, str) and "being rebuilt" in reason and "building" in reason


def prefilter_channel() -> SemanticChannel:
    return SemanticChannel(EMBEDDER, vec_available=True, exact_max_rows=0)


def matrix_channel() -> SemanticChannel:
    return SemanticChannel(EMBEDDER, vec_available=True)


# Both in-memory copies (binary codes, float matrix) load once and must follow later writes.
IN_MEMORY = pytest.mark.parametrize("make_channel", [prefilter_channel, matrix_channel])


def test_the_matrix_matches_vec0_exact_knn(store: Store) -> None:
    for i in range(40):
        store.remember(f"note {i} about {'postgres' if i % 3 else 'svelte'} and more {i}")
    vec0 = SemanticChannel(EMBEDDER, vec_available=True, in_memory=False)
    matrix = search(store, "postgres note", channel=matrix_channel())
    exact = search(store, "postgres note", channel=vec0)
    assert (matrix.strategy, exact.strategy) == ("matrix", "exact")
    # Same scores in the same order (equal-score neighbours may swap places).
    assert np.allclose(
        [h.evidence.raw for h in matrix.hits], [h.evidence.raw for h in exact.hits], atol=1e-5
    )
    assert matrix.hits[0].memory_id == exact.hits[0].memory_id


def test_the_matrix_widens_past_filtered_candidates(store: Store) -> None:
    for i in range(60):
        store.remember(f"postgres fact {i}")
    rare = store.remember("a svelte component for maps", who="rare")
    outcome = search(
        store, "postgres fact", channel=matrix_channel(), filters=RecallFilters(who="rare"), k=1
    )
    assert [h.memory_id for h in outcome.hits] == [rare]


@IN_MEMORY
def test_the_in_memory_copy_sees_memories_written_after_it_loaded(
    store: Store, make_channel: Callable[[], SemanticChannel]
) -> None:
    channel = make_channel()
    search(store, "postgres", channel=channel)  # loads the partition's codes
    late = store.remember("kubernetes upgrade checklist")
    outcome = search(store, "kubernetes upgrade checklist", channel=channel)
    assert outcome.hits[0].memory_id == late


@IN_MEMORY
def test_the_in_memory_copy_follows_a_replaced_vector(
    store: Store, make_channel: Callable[[], SemanticChannel]
) -> None:
    channel = make_channel()
    memory_id = store.ids[TEXTS[3]]
    search(store, "green tea", channel=channel)
    with store.db.write() as conn:
        conn.execute(
            "UPDATE memories SET content = 'ana drinks espresso', content_hash = 'h-espresso' "
            "WHERE id = :id",
            {"id": memory_id},
        )
    blob = vectors.vector_blob(EMBEDDER.embed(["ana drinks espresso"])[0], 64)
    with store.db.write() as conn:
        VectorIndex(store.db).store(
            conn, store.generation, [vectors.VectorWrite("default", memory_id, "h-espresso", blob)]
        )
    top = search(store, "ana drinks espresso", channel=channel).hits[0]
    assert top.memory_id == memory_id and top.evidence.raw == pytest.approx(1.0, abs=1e-5)


def test_the_prefilter_widens_past_filtered_candidates(store: Store) -> None:
    for i in range(30):
        store.remember(f"postgres fact {i}")
    rare = store.remember("a svelte component for maps", who="rare")
    narrow = SemanticChannel(EMBEDDER, vec_available=True, exact_max_rows=0, prefilter_candidates=2)
    outcome = search(store, "postgres fact", channel=narrow, filters=RecallFilters(who="rare"), k=1)
    assert [h.memory_id for h in outcome.hits] == [rare]


@IN_MEMORY
def test_the_in_memory_copy_keeps_agents_apart(
    store: Store, make_channel: Callable[[], SemanticChannel]
) -> None:
    other = store.remember("the billing service uses postgres", agent_id="other-agent")
    channel = make_channel()
    assert other not in {h.memory_id for h in search(store, "billing", channel=channel).hits}
    theirs = search(store, "billing", channel=channel, agent="other-agent")
    assert [h.memory_id for h in theirs.hits] == [other]
