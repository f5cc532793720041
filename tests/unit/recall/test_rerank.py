"""The `rerank` stage: passages of the top N, the time budget, adjustments, scope and wiring."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.fakes import SwitchableEmbedder

from signet_desktop.api.recall_views import hit_json
from signet_desktop.config.models import SignetConfig
from signet_desktop.config.pipeline import RerankerConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.errors import InvalidInput
from signet_desktop.domain.memory import Actor
from signet_desktop.domain.recall import ChannelEvidence, RecallFilters, RecallQuery
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.embedding.index import VectorIndex
from signet_desktop.recall import term_counts
from signet_desktop.recall.channels import ChannelRequest, StageClock
from signet_desktop.recall.engine import RecallEngine
from signet_desktop.recall.fusion import FusedHit
from signet_desktop.recall.rerank import (
    NO_PASSAGE,
    STAGE_NAME,
    PassageReranker,
    configured_rerank,
)
from signet_desktop.recall.vector import SemanticChannel
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.embeddings.vectors import EmbeddingVectors
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.storage.database import Database, open_database

# Two sessions. The question names the pottery class and the kiln; "it fired beautifully"
# holds neither word itself, but its passage (with the turn before it) holds both.
SESSIONS = {
    "s1": (
        "Caroline: my pottery class used the big kiln yesterday",
        "Melanie: it fired beautifully, the glaze came out blue",
        "Caroline: we should go hiking next weekend",
    ),
    "s2": (
        "Melanie: the pottery shop downtown sells glaze",
        "Caroline: I bought a new bike for the trail",
        "Melanie: the trail is muddy after rain",
    ),
}


@pytest.fixture
def embedder() -> SwitchableEmbedder:
    fake = SwitchableEmbedder(64)
    fake.delay_s = 1.0
    return fake


def remembered(
    path: Path,
    embedder: SwitchableEmbedder,
    sessions: dict[str, tuple[str, ...]],
    extra: tuple[RememberRequest, ...] = (),
) -> Database:
    """A database holding each session's texts in order (speaker as `who`), then `extra`."""
    database = open_database(path)
    index = VectorIndex(database)
    generation = index.ensure_generation(provider="hash", model=embedder.model, dimensions=64)
    port = EmbeddingVectors(index, embedder, generation)
    service = MemoryService(database, port)
    for session, texts in sessions.items():
        for text in texts:
            request = RememberRequest(content=text, session_id=session, who=text.split(":")[0])
            assert service.remember(request, Actor()).embedded
    for request in extra:
        service.remember(request, Actor())
    port.close()
    return database


@pytest.fixture
def db(tmp_path: Path, embedder: SwitchableEmbedder) -> Iterator[Database]:
    other = RememberRequest(content="pottery kiln glaze secrets", agent_id="other")
    database = remembered(tmp_path / "r.db", embedder, SESSIONS, (other,))
    yield database
    database.close()


# A longer exchange: the question names the aquarium and the sharks; "which one, downtown?"
# sits next to the aquarium turn and two turns from the sharks.
EXCHANGES = {
    "w1": (
        "Jon: we went to the aquarium on Sunday",
        "Gina: which one, downtown?",
        "Jon: yes, the big one by the pier",
        "Jon: the sharks were huge",
    ),
    "w2": (
        "Gina: I love the aquarium",
        "Jon: me too, the jellyfish",
        "Gina: we should go again",
    ),
}


@pytest.fixture
def exchanges(tmp_path: Path, embedder: SwitchableEmbedder) -> Iterator[Database]:
    database = remembered(tmp_path / "x.db", embedder, EXCHANGES)
    yield database
    database.close()


@pytest.fixture
def semantic(embedder: SwitchableEmbedder) -> SemanticChannel:
    return SemanticChannel(embedder, vec_available=True, embed_timeout_s=0.5)


def ids_by_content(db: Database, agent_id: str = "default") -> dict[str, str]:
    rows = db.reader().execute("SELECT id, content FROM memories WHERE agent_id = ?", (agent_id,))
    return {str(r["content"]): str(r["id"]) for r in rows}


def fused(memory_id: str, score: float, rank: int) -> FusedHit:
    return FusedHit(memory_id, score, "keyword", {"lexical": ChannelEvidence(score, rank, -1.0)})


def request(text: str, agent_id: str = "default") -> ChannelRequest:
    return ChannelRequest(text, text, agent_id, RecallFilters(), 50)


def test_a_reply_whose_passage_answers_moves_up(db: Database, semantic: SemanticChannel) -> None:
    ids = ids_by_content(db)
    shop = fused(ids[SESSIONS["s2"][0]], 0.50, 1)  # "pottery" and "glaze", no kiln near it
    reply = fused(ids[SESSIONS["s1"][1]], 0.45, 2)  # its passage holds pottery and kiln
    stage = PassageReranker(semantic, top_n=20, vector_weight=0.0)
    out = stage.apply(db.reader(), request("pottery kiln"), [shop, reply], StageClock())
    assert [h.memory_id for h in out] == [reply.memory_id, shop.memory_id]
    [adjustment] = out[0].adjustments
    assert adjustment.stage == STAGE_NAME
    # Ordered by the blend (0.7 * 0.45 + 0.3 * both terms = 0.615), scored as the rank it took.
    assert [h.score for h in out] == [0.50, 0.45]
    assert adjustment.factor == pytest.approx(0.50 / 0.45)
    assert adjustment.reason.startswith("ranked by 0.615 = 0.7*score + 0.3*term coverage 1.00")
    assert "2 session neighbours" in adjustment.reason
    assert out[1].adjustments[0].factor == pytest.approx(0.45 / 0.50)


def test_a_term_two_turns_away_counts_half(exchanges: Database, semantic: SemanticChannel) -> None:
    ids = ids_by_content(exchanges)
    loves = fused(ids[EXCHANGES["w2"][0]], 0.50, 1)  # "aquarium"; no sharks in its passage
    which = fused(ids[EXCHANGES["w1"][1]], 0.45, 2)  # aquarium beside it, sharks two away
    hits, query = [loves, which], request("aquarium sharks")
    before = PassageReranker(semantic, vector_weight=0.0, width=1)  # the neighbours only
    out = before.apply(exchanges.reader(), query, hits, StageClock())
    assert [h.memory_id for h in out] == [loves.memory_id, which.memory_id]
    out = PassageReranker(semantic, vector_weight=0.0).apply(
        exchanges.reader(), query, hits, StageClock()
    )
    assert [h.memory_id for h in out] == [which.memory_id, loves.memory_id]
    assert [h.score for h in out] == [0.50, 0.45]  # each rank's fused score, as before
    [adjustment] = out[0].adjustments
    # 7 rows: aquarium in 2 (IDF 0.788), sharks in 1 (IDF 1.466): (0.788 + 0.5 * 1.466) / 2.254
    assert "0.3*term coverage 0.67" in adjustment.reason
    assert adjustment.reason.endswith(
        "(memory + 2 session neighbours; terms only the 1 memory 2 steps away hold count 0.5)"
    )
    with pytest.raises(ValueError, match="outer_weight"):
        PassageReranker(semantic, outer_weight=1.5)


def test_only_the_top_n_are_rescored(db: Database, semantic: SemanticChannel) -> None:
    ids = list(ids_by_content(db).values())  # ids[0]: the pottery class and its kiln
    order = [ids[-1], *ids[:-1]]  # the muddy trail (no pottery, no kiln) leads
    hits = [fused(memory_id, 0.9 - 0.1 * i, i + 1) for i, memory_id in enumerate(order)]
    stage = PassageReranker(semantic, top_n=2)
    out = stage.apply(db.reader(), request("pottery kiln"), hits, StageClock())
    assert [h.memory_id for h in out[:2]] == [ids[0], ids[-1]]  # swapped by the passages
    assert [h.score for h in out[:2]] == [hits[0].score, hits[1].score]  # each rank's own
    for hit in out[:2]:
        [adjustment] = hit.adjustments
        assert adjustment.stage == STAGE_NAME and adjustment.reason.startswith("ranked by ")
        assert "passage cosine" in adjustment.reason
    assert out[2:] == hits[2:]  # the rest exactly as fused: same order, scores, no adjustment


def test_a_slow_embedder_costs_only_the_vector_signal(
    db: Database, semantic: SemanticChannel, embedder: SwitchableEmbedder
) -> None:
    ids = ids_by_content(db)
    hits = [fused(ids[SESSIONS["s2"][1]], 0.6, 1), fused(ids[SESSIONS["s1"][0]], 0.5, 2)]
    embedder.mode = "slow"  # 1 s per embedding; the budget is 150 ms
    stage = PassageReranker(semantic, timeout_ms=150)
    started = time.perf_counter()
    out = stage.apply(db.reader(), request("kiln pottery"), hits, StageClock())
    elapsed = time.perf_counter() - started
    stage.close()
    assert elapsed < 0.6
    for hit in out:
        [adjustment] = hit.adjustments
        assert "no passage cosine (the query embedding took over 150 ms)" in adjustment.reason
        assert adjustment.reason.startswith("ranked by ")  # coverage still ranked it
    assert [h.memory_id for h in out] == [hits[1].memory_id, hits[0].memory_id]


def test_running_out_of_budget_leaves_the_top_n_unchanged_and_says_so(
    db: Database, semantic: SemanticChannel
) -> None:
    ids = list(ids_by_content(db).values())
    hits = [fused(memory_id, 0.9 - 0.1 * i, i + 1) for i, memory_id in enumerate(ids[:3])]
    ticks = iter([0.0, *([100.0] * 50)])  # the deadline passes before the first query term
    stage = PassageReranker(semantic, timeout_ms=2000, now=lambda: next(ticks))
    out = stage.apply(db.reader(), request("pottery kiln"), hits, StageClock())
    assert [h.memory_id for h in out] == [h.memory_id for h in hits]
    assert [h.score for h in out] == [h.score for h in hits]
    for hit in out:
        [adjustment] = hit.adjustments
        assert adjustment.factor == 1.0
        assert adjustment.reason == "not reranked: the 2000 ms rerank budget ran out"


def test_a_memory_with_no_session_neighbours_keeps_its_fused_score_as_its_blend(
    tmp_path: Path, embedder: SwitchableEmbedder, semantic: SemanticChannel
) -> None:
    """No passage: its own terms and vector are what fusion weighed, so the stage does not
    weigh them again (it once re-ranked a purely semantic answer below a one-word match)."""
    alone = RememberRequest(content="pottery kiln schedule for the studio")
    database = remembered(tmp_path / "a.db", embedder, SESSIONS, (alone,))
    try:
        ids = ids_by_content(database)
        single, paired = ids[alone.content], ids[SESSIONS["s2"][1]]  # s2 holds neither term
        hits = [fused(paired, 0.5, 1), fused(single, 0.45, 2)]
        out = PassageReranker(semantic, vector_weight=0.0).apply(
            database.reader(), request("kiln schedule"), hits, StageClock()
        )
        # paired: 0.7 * 0.5 + 0.3 * 0 = 0.35; single: 0.45 as fused (not 0.7 * 0.45 + 0.3 * 1).
        assert [h.memory_id for h in out] == [single, paired]
        [moved] = out[0].adjustments
        assert moved.reason == NO_PASSAGE and moved.factor == pytest.approx(0.5 / 0.45)
    finally:
        database.close()


def test_another_agents_memory_lends_nothing(db: Database, semantic: SemanticChannel) -> None:
    foreign = ids_by_content(db, "other")["pottery kiln glaze secrets"]
    own = ids_by_content(db)[SESSIONS["s1"][0]]
    stage = PassageReranker(semantic)
    hits = [fused(foreign, 0.6, 1), fused(own, 0.5, 2)]
    out = stage.apply(db.reader(), request("pottery kiln"), hits, StageClock())
    assert [h.memory_id for h in out] == [own, foreign]
    [adjustment] = out[1].adjustments
    assert "term coverage 0.00" in adjustment.reason  # its text was never read
    assert "no passage cosine (the memory has no vector yet)" in adjustment.reason


def test_a_failing_embedder_reranks_on_coverage(
    db: Database, semantic: SemanticChannel, embedder: SwitchableEmbedder
) -> None:
    ids = ids_by_content(db)
    embedder.down = True
    stage = PassageReranker(semantic)
    hiking, bike = ids[SESSIONS["s1"][2]], ids[SESSIONS["s2"][1]]
    hits = [fused(hiking, 0.6, 1), fused(bike, 0.5, 2)]
    out = stage.apply(db.reader(), request("bike trail"), hits, StageClock())
    assert [h.memory_id for h in out] == [bike, hiking]
    [adjustment] = out[0].adjustments
    assert "the embedder failed" in adjustment.reason
    assert adjustment.reason.startswith("ranked by 0.650 = 0.7*score")  # 0.35 + 0.3 coverage
    assert out[0].score == 0.6  # the rank it took, with that rank's fused score


def test_a_hit_that_keeps_its_rank_records_nothing(db: Database, semantic: SemanticChannel) -> None:
    ids = ids_by_content(db)
    hits = [fused(ids[SESSIONS["s1"][0]], 0.6, 1), fused(ids[SESSIONS["s1"][2]], 0.5, 2)]
    out = PassageReranker(semantic).apply(db.reader(), request("pottery kiln"), hits, StageClock())
    assert out == hits  # the best passage already led: nothing moved, nothing recorded


def test_engine_selects_and_deselects_the_stage(db: Database, semantic: SemanticChannel) -> None:
    engine = RecallEngine(db, semantic=semantic, stages=[PassageReranker(semantic, top_n=3)])
    try:
        plain = engine.recall(RecallQuery(query="pottery kiln", stages=(), min_score=0))
        staged = engine.recall(RecallQuery(query="pottery kiln", min_score=0))
        chosen = engine.recall(RecallQuery(query="pottery kiln", stages=("rerank",), min_score=0))
    finally:
        engine.close()
    assert all(h.adjustments == () for h in plain.hits)
    assert "rerank" not in [t.name for t in plain.timings]
    for result in (staged, chosen):
        assert "rerank" in [t.name for t in result.timings]
        assert all(a.stage == "rerank" for h in result.hits for a in h.adjustments)
        assert all(not h.adjustments for h in result.hits[3:])  # only the top 3 are looked at
    moved = [hit_json(h)["adjustments"] for h in chosen.hits if h.adjustments]
    assert all(a[0]["stage"] == "rerank" and "term coverage" in a[0]["reason"] for a in moved)


def test_configured_rerank_follows_the_config(semantic: SemanticChannel) -> None:
    assert RerankerConfig().enabled is True
    assert configured_rerank(RerankerConfig(enabled=False), semantic) == ()
    [default] = configured_rerank(RerankerConfig(), semantic)
    assert (default.top_n, default.timeout_ms) == (20, 2000)
    [stage] = configured_rerank(RerankerConfig(enabled=True, top_n=7, timeout_ms=300), semantic)
    assert (stage.name, stage.top_n, stage.timeout_ms) == ("rerank", 7, 300)
    with pytest.raises(ValueError, match="coverage_weight"):
        PassageReranker(semantic, coverage_weight=0.8, vector_weight=0.4)


def test_on_by_default_in_the_service_and_off_when_configured(tmp_path: Path) -> None:
    options = BuildOptions(embedder=HashEmbedder(64), inline_vectors=True)
    off = SignetConfig.model_validate({"memory": {"pipelineV2": {"reranker": {"enabled": False}}}})
    service = build_service(WorkspacePaths.for_root(tmp_path / "off"), off, options)
    try:
        service.memories.remember(RememberRequest(content="the kiln is hot"), Actor())
        result = service.recall.search(RecallQuery(query="kiln", min_score=0))
        assert result.hits and "rerank" not in [t.name for t in result.timings]
        with pytest.raises(InvalidInput, match="stages must be a subset"):
            service.recall.search(RecallQuery(query="kiln", stages=("rerank",)))
    finally:
        service.close()
    service = build_service(WorkspacePaths.for_root(tmp_path / "on"), SignetConfig(), options)
    try:
        service.memories.remember(RememberRequest(content="the kiln is hot"), Actor())
        result = service.recall.search(RecallQuery(query="kiln", min_score=0))
        assert result.hits and "rerank" in [t.name for t in result.timings]
    finally:
        service.close()


def test_question_scaffolding_is_not_a_term_a_passage_must_cover() -> None:
    """'which database does billing use?' is about billing's database, not about `use`."""
    from signet_desktop.recall.rerank import QUESTION_SCAFFOLD

    assert {"use", "used", "using"} <= QUESTION_SCAFFOLD
    assert "billing" not in QUESTION_SCAFFOLD and "database" not in QUESTION_SCAFFOLD


def test_a_memory_holds_a_term_when_a_word_of_it_folds_to_the_terms_stem() -> None:
    from signet_desktop.recall.rerank import _stem, _stems_held

    filler = " ".join(f"word{i}" for i in range(60))  # past the 32 tokens a query keeps
    stems = [_stem(t) for t in ("billing", "keys", "postgres", "missing")]
    held = _stems_held(f"{filler} the Billing API's key rotation", stems)
    assert held == {_stem("billing"), _stem("keys")}  # 'key' and 'keys' fold together
    assert _stems_held("nothing here", stems) == set()


def test_a_recall_counts_each_term_once_for_the_plan_and_the_rerank(
    db: Database, semantic: SemanticChannel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rerank's IDF reads the counts the lexical plan took (`ChannelRequest.term_counts`);
    on PostgreSQL each count visits up to 10,001 rows."""
    asked: list[str] = []
    real = term_counts.count_documents

    def recording(conn: Any, term: str, cap: int, table: str = "memories_fts") -> int:
        asked.append(term)
        return real(conn, term, cap, table)

    monkeypatch.setattr(term_counts, "count_documents", recording)
    engine = RecallEngine(db, semantic=semantic, stages=(PassageReranker(semantic),))
    result = engine.recall(RecallQuery(query="pottery kiln glaze"))
    assert result.hits and STAGE_NAME in [t.name for t in result.timings]
    assert sorted(asked) == ["glaze", "kiln", "pottery"]
    asked.clear()
    stage = PassageReranker(semantic)  # alone, it counts what no plan counted
    ids = ids_by_content(db)
    stage.apply(
        db.reader(), request("pottery kiln"), [fused(ids[SESSIONS["s1"][1]], 0.5, 1)], StageClock()
    )
    assert sorted(asked) == ["kiln", "pottery"]
