"""The `rerank` stage: passages of the top N, the time budget, adjustments, scope and wiring."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.fakes import SwitchableEmbedder

from signet_desktop.api.views import hit_json
from signet_desktop.config.models import SignetConfig
from signet_desktop.config.pipeline import RerankerConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.errors import InvalidInput
from signet_desktop.domain.memory import Actor
from signet_desktop.domain.recall import ChannelEvidence, RecallFilters, RecallQuery
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.embedding.index import VectorIndex
from signet_desktop.recall.channels import ChannelRequest, StageClock
from signet_desktop.recall.engine import RecallEngine
from signet_desktop.recall.fusion import FusedHit
from signet_desktop.recall.rerank import STAGE_NAME, PassageReranker, configured_rerank
from signet_desktop.recall.vector import SemanticChannel
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.memories import MemoryService, RememberRequest
from signet_desktop.service.vectors import EmbeddingVectors
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


@pytest.fixture
def db(tmp_path: Path, embedder: SwitchableEmbedder) -> Iterator[Database]:
    database = open_database(tmp_path / "r.db")
    index = VectorIndex(database)
    generation = index.ensure_generation(provider="hash", model=embedder.model, dimensions=64)
    port = EmbeddingVectors(index, embedder, generation)
    service = MemoryService(database, port)
    for session, texts in SESSIONS.items():
        for text in texts:
            request = RememberRequest(content=text, session_id=session, who=text.split(":")[0])
            assert service.remember(request, Actor()).embedded
    other = RememberRequest(content="pottery kiln glaze secrets", agent_id="other")
    service.remember(other, Actor())
    port.close()
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


def test_only_the_top_n_are_rescored(db: Database, semantic: SemanticChannel) -> None:
    ids = list(ids_by_content(db).values())
    hits = [fused(memory_id, 0.9 - 0.1 * i, i + 1) for i, memory_id in enumerate(ids)]
    stage = PassageReranker(semantic, top_n=2)
    out = stage.apply(db.reader(), request("pottery trail"), hits, StageClock())
    assert {h.memory_id for h in out[:2]} == {h.memory_id for h in hits[:2]}
    assert all(h.adjustments and h.adjustments[0].stage == STAGE_NAME for h in out[:2])
    assert out[2:] == hits[2:]  # the rest exactly as fused: same order, scores, no adjustment
    assert sorted(h.score for h in out[:2]) == sorted(h.score for h in hits[:2])
    assert all(h.adjustments[0].reason.startswith("ranked by ") for h in out[:2])
    assert "passage cosine" in out[0].adjustments[0].reason


def test_a_slow_embedder_costs_only_the_vector_signal(
    db: Database, semantic: SemanticChannel, embedder: SwitchableEmbedder
) -> None:
    ids = ids_by_content(db)
    hits = [fused(ids[SESSIONS["s1"][0]], 0.6, 1), fused(ids[SESSIONS["s2"][1]], 0.5, 2)]
    embedder.mode = "slow"  # 1 s per embedding; the budget is 150 ms
    stage = PassageReranker(semantic, timeout_ms=150)
    started = time.perf_counter()
    out = stage.apply(db.reader(), request("kiln bike"), hits, StageClock())
    elapsed = time.perf_counter() - started
    stage.close()
    assert elapsed < 0.6
    for hit in out:
        [adjustment] = hit.adjustments
        assert "no passage cosine (the query embedding took over 150 ms)" in adjustment.reason
        assert adjustment.reason.startswith("ranked by ")  # coverage still ranked it


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


def test_another_agents_memory_lends_nothing(db: Database, semantic: SemanticChannel) -> None:
    foreign = ids_by_content(db, "other")["pottery kiln glaze secrets"]
    stage = PassageReranker(semantic)
    [out] = stage.apply(
        db.reader(), request("pottery kiln"), [fused(foreign, 0.5, 1)], StageClock()
    )
    [adjustment] = out.adjustments
    assert "term coverage 0.00" in adjustment.reason  # its text was never read
    assert "no passage cosine (the memory has no vector yet)" in adjustment.reason


def test_a_failing_embedder_reranks_on_coverage(
    db: Database, semantic: SemanticChannel, embedder: SwitchableEmbedder
) -> None:
    ids = ids_by_content(db)
    embedder.down = True
    stage = PassageReranker(semantic)
    [out] = stage.apply(
        db.reader(), request("bike trail"), [fused(ids[SESSIONS["s2"][1]], 0.5, 1)], StageClock()
    )
    assert "the embedder failed" in out.adjustments[0].reason
    assert out.adjustments[0].reason.startswith("ranked by 0.650 = 0.7*score")  # 0.35 + 0.3
    assert out.score == 0.5  # a lone hit keeps its rank and so its score


def test_engine_selects_and_deselects_the_stage(db: Database, semantic: SemanticChannel) -> None:
    engine = RecallEngine(db, semantic=semantic, stages=[PassageReranker(semantic, top_n=3)])
    try:
        plain = engine.recall(RecallQuery(query="pottery kiln", stages=(), min_score=0))
        staged = engine.recall(RecallQuery(query="pottery kiln", min_score=0))
        chosen = engine.recall(RecallQuery(query="pottery kiln", stages=("rerank",), min_score=0))
    finally:
        engine.close()
    assert all(h.adjustments == () for h in plain.hits)
    for result in (staged, chosen):
        assert "rerank" in [t.name for t in result.timings]
        assert all(h.adjustments[0].stage == "rerank" for h in result.hits[:3])
    top = hit_json(chosen.hits[0])["adjustments"]
    assert top[0]["stage"] == "rerank" and "term coverage" in top[0]["reason"]


def test_configured_rerank_follows_the_config(semantic: SemanticChannel) -> None:
    assert RerankerConfig().enabled is False
    assert configured_rerank(RerankerConfig(), semantic) == ()
    [stage] = configured_rerank(RerankerConfig(enabled=True, top_n=7, timeout_ms=300), semantic)
    assert (stage.name, stage.top_n, stage.timeout_ms) == ("rerank", 7, 300)
    with pytest.raises(ValueError, match="coverage_weight"):
        PassageReranker(semantic, coverage_weight=0.8, vector_weight=0.4)


def test_off_by_default_in_the_service(tmp_path: Path) -> None:
    options = BuildOptions(embedder=HashEmbedder(64), inline_vectors=True)
    service = build_service(WorkspacePaths.for_root(tmp_path / "off"), SignetConfig(), options)
    try:
        service.memories.remember(RememberRequest(content="the kiln is hot"), Actor())
        result = service.recall.search(RecallQuery(query="kiln", min_score=0))
        assert result.hits and all(a.stage != "rerank" for h in result.hits for a in h.adjustments)
        with pytest.raises(InvalidInput, match="stages must be a subset"):
            service.recall.search(RecallQuery(query="kiln", stages=("rerank",)))
    finally:
        service.close()
    config = SignetConfig.model_validate(
        {"memory": {"pipelineV2": {"reranker": {"enabled": True}}}}
    )
    service = build_service(WorkspacePaths.for_root(tmp_path / "on"), config, options)
    try:
        service.memories.remember(RememberRequest(content="the kiln is hot"), Actor())
        result = service.recall.search(RecallQuery(query="kiln", min_score=0))
        assert any(a.stage == "rerank" for a in result.hits[0].adjustments)
    finally:
        service.close()
