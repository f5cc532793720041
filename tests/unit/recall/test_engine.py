"""The recall engine: channels, fusion, notes, timings, and a slow or failing query embedder."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from support.fakes import SwitchableEmbedder

from signet_desktop.api.recall_views import hit_json
from signet_desktop.domain.errors import InvalidInput
from signet_desktop.domain.memory import Actor
from signet_desktop.domain.recall import ChannelEvidence, HitAdjustment, RecallQuery
from signet_desktop.embedding.index import VectorIndex
from signet_desktop.recall.calibration import MINILM
from signet_desktop.recall.channels import ChannelOutcome, ChannelRequest, Finish, StageClock
from signet_desktop.recall.engine import NO_TERMS_NOTE, RecallEngine
from signet_desktop.recall.fusion import FusedHit
from signet_desktop.recall.lexical import LexicalChannel
from signet_desktop.recall.stages import adjusted, resorted
from signet_desktop.recall.vector import SemanticChannel
from signet_desktop.service.embeddings.vectors import EmbeddingVectors
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.database import Database, open_database
from signet_desktop.storage.guard import ProviderCallInWriteTransaction

TEXTS = (
    "the billing service uses postgres 16",
    "postgres backups run nightly at two",
    "the frontend is written in svelte",
    "ana prefers green tea in the morning",
)


@pytest.fixture
def embedder() -> SwitchableEmbedder:
    """The hash embedder whose query side can be switched to fail ("down") or stall ("slow")."""
    fake = SwitchableEmbedder(64)
    fake.delay_s = 0.5
    return fake


@pytest.fixture
def db(tmp_path: Path, embedder: SwitchableEmbedder) -> Iterator[Database]:
    database = open_database(tmp_path / "e.db")
    index = VectorIndex(database)
    generation = index.ensure_generation(provider="hash", model=embedder.model, dimensions=64)
    port = EmbeddingVectors(index, embedder, generation)
    service = MemoryService(database, port)
    for text in TEXTS:
        assert service.remember(RememberRequest(content=text), Actor()).embedded
    port.close()
    yield database
    database.close()


@pytest.fixture
def engine(db: Database, embedder: SwitchableEmbedder) -> Iterator[RecallEngine]:
    channel = SemanticChannel(embedder, vec_available=True, embed_timeout_s=0.2)
    engine = RecallEngine(db, semantic=channel)
    yield engine
    engine.close()


def recall(engine: RecallEngine, query: str, **kw: object):  # type: ignore[no-untyped-def]
    return engine.recall(RecallQuery(query=query, **kw))  # type: ignore[arg-type]


def stage_names(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [s.name for s in result.timings]


def test_hybrid_recall_fuses_both_channels(engine: RecallEngine) -> None:
    result = recall(engine, "postgres billing")
    assert result.method == "hybrid" and result.vector_completeness == "complete"
    top = result.hits[0]
    assert top.memory.content == TEXTS[0] and top.source == "hybrid"
    assert list(top.channels) == ["lexical", "semantic"]
    lexical, semantic = top.channels["lexical"], top.channels["semantic"]
    assert top.score == pytest.approx(0.5 * semantic.score + 0.5 * lexical.score)  # alpha 0.5
    assert (top.lexical, top.semantic) == (lexical, semantic)  # the two-channel views
    assert {"lexical", "embed_query", "semantic", "fusion", "hydrate"} <= set(stage_names(result))
    assert result.notes == ()


def test_channels_pick_the_rankers(engine: RecallEngine) -> None:
    lexical = recall(engine, "postgres", channels=("lexical",))
    assert lexical.method == "keyword" and lexical.vector_completeness is None
    assert all(list(h.channels) == ["lexical"] and h.source == "keyword" for h in lexical.hits)
    assert "embed_query" not in stage_names(lexical)
    vector = recall(engine, "postgres", channels=("semantic",))
    assert vector.method == "vector" and vector.vector_completeness == "complete"
    assert all(list(h.channels) == ["semantic"] and h.source == "vector" for h in vector.hits)
    assert "lexical" not in stage_names(vector)


@pytest.mark.parametrize("channels", [(), ("graph",), ("lexical", "bogus")])
def test_unknown_channels_are_refused(engine: RecallEngine, channels: tuple[str, ...]) -> None:
    with pytest.raises(InvalidInput, match=r"subset of: lexical, semantic$") as refused:
        recall(engine, "postgres", channels=channels)
    assert refused.value.code == "bad_channels"


@pytest.mark.parametrize("query", ["the of and what is it", "?!?... ;;", "a"])
def test_queries_without_searchable_terms_answer_empty(engine: RecallEngine, query: str) -> None:
    result = recall(engine, query)
    assert result.hits == () and result.notes == (NO_TERMS_NOTE,)


def test_embedder_down_at_query_time_falls_back_to_lexical(
    engine: RecallEngine, embedder: SwitchableEmbedder
) -> None:
    embedder.mode = "down"
    result = recall(engine, "postgres billing")
    assert result.method == "keyword" and result.vector_completeness == "unavailable"
    assert result.hits and result.hits[0].memory.content == TEXTS[0]
    assert "connection refused" in result.notes[0] and "lexical only" in result.notes[0]


def test_slow_embedder_does_not_hold_recall(
    engine: RecallEngine, embedder: SwitchableEmbedder
) -> None:
    embedder.mode = "slow"
    started = time.perf_counter()
    result = recall(engine, "postgres billing")
    assert time.perf_counter() - started < 0.45
    assert result.vector_completeness == "unavailable" and "did not answer" in result.notes[0]
    assert result.hits[0].memory.content == TEXTS[0]


def test_min_score_and_limit(engine: RecallEngine) -> None:
    assert len(recall(engine, "postgres", limit=1).hits) == 1
    assert recall(engine, "postgres", min_score=1.0).hits == ()
    for bad in (0, 101):
        with pytest.raises(InvalidInput, match="limit"):
            recall(engine, "postgres", limit=bad)


def test_without_a_semantic_channel_recall_says_so(db: Database) -> None:
    engine = RecallEngine(db)
    try:
        result = recall(engine, "postgres")
        assert result.method == "keyword" and result.vector_completeness == "unavailable"
        assert result.notes == ("semantic recall is not configured",)
    finally:
        engine.close()


def test_recall_refuses_to_embed_inside_a_write_transaction(
    engine: RecallEngine, db: Database
) -> None:
    # The query is embedded on a pool thread, but the caller holding the write lock while it
    # waits is exactly what the rule forbids, so the caller's thread is checked.
    with pytest.raises(ProviderCallInWriteTransaction), db.write():
        recall(engine, "postgres billing")
    assert recall(engine, "postgres billing", channels=("lexical",)).hits


@dataclass(frozen=True, slots=True)
class Found:
    memory_id: str
    evidence: ChannelEvidence


@dataclass
class WordChannel:
    """A third channel through the real protocol: memories containing `word`, newest first."""

    name: str
    word: str
    events: list[str] = field(default_factory=list)
    note: str | None = None

    def start(self, conn: Connection, request: ChannelRequest, pool: Executor) -> Finish:
        self.events.append(f"start {self.name}")

        def finish(clock: StageClock) -> ChannelOutcome:
            self.events.append(f"finish {self.name}")
            rows = conn.execute(
                "SELECT id FROM memories WHERE agent_id = :agent AND content LIKE :like "
                "ORDER BY seq DESC",
                {"agent": request.agent_id, "like": f"%{self.word}%"},
            ).fetchall()
            hits = [Found(r["id"], ChannelEvidence(1.0, i + 1, 1.0)) for i, r in enumerate(rows)]
            return ChannelOutcome(hits, note=self.note)

        return finish


def test_a_third_channel_is_fused_and_explained_without_engine_changes(
    db: Database, embedder: SwitchableEmbedder
) -> None:
    events: list[str] = []
    hint = WordChannel("hint", "postgres", events, note="hints are scripted")
    semantic = SemanticChannel(embedder, vec_available=True)
    weights = {"lexical": 0.2, "semantic": 0.5, "hint": 0.3}
    engine = RecallEngine(db, channels=(LexicalChannel(), semantic, hint), weights=weights)
    try:
        result = recall(engine, "postgres billing", context=False)
        assert result.method == "hybrid" and "hints are scripted" in result.notes
        top = result.hits[0]
        assert top.memory.content == TEXTS[0] and list(top.channels) == [
            "lexical", "semantic", "hint"
        ]  # fmt: skip
        evidence = top.channels
        assert top.score == pytest.approx(
            0.2 * evidence["lexical"].score + 0.5 * evidence["semantic"].score + 0.3 * 1.0
        )
        alone = recall(engine, "postgres", channels=("hint",))
        assert alone.method == "hint" and {h.source for h in alone.hits} == {"hint"}
        assert alone.vector_completeness is None
        with pytest.raises(InvalidInput, match=r"subset of: lexical, semantic, hint$"):
            recall(engine, "postgres", channels=("graph",))
    finally:
        engine.close()


def test_every_channel_starts_before_any_finishes(db: Database) -> None:
    events: list[str] = []
    first, second = WordChannel("first", "the", events), WordChannel("second", "tea", events)
    engine = RecallEngine(db, channels=(first, second), weights={"first": 1, "second": 1})
    try:
        recall(engine, "tea")
    finally:
        engine.close()
    assert events == ["start first", "start second", "finish first", "finish second"]


def test_channels_need_unique_names_and_weights(db: Database) -> None:
    with pytest.raises(ValueError, match="own name"):
        RecallEngine(db, channels=(WordChannel("a", "x"), WordChannel("a", "y")), weights={"a": 1})
    with pytest.raises(ValueError, match="no fusion weight for channel 'unweighted'"):
        RecallEngine(db, channels=(LexicalChannel(), WordChannel("unweighted", "x")))
    with pytest.raises(ValueError, match="alpha"):
        RecallEngine(db, alpha=1.5)


@dataclass
class DemoteWord:
    """A post-fusion stage through the real protocol: halves hits whose content has `word`."""

    word: str
    name: str = "demote"

    def apply(
        self, conn: Connection, request: ChannelRequest, hits: list[FusedHit], clock: StageClock
    ) -> list[FusedHit]:
        ids = [h.memory_id for h in hits]
        marks = ",".join("?" * len(ids))
        rows = conn.execute(f"SELECT id, content FROM memories WHERE id IN ({marks})", ids)
        with_word = {r["id"] for r in rows if self.word in r["content"]}
        changed = [
            adjusted(h, self.name, 0.5, f"mentions {self.word}") if h.memory_id in with_word else h
            for h in hits
        ]
        return resorted(changed)


def test_post_fusion_stages_rescore_and_explain(db: Database) -> None:
    engine = RecallEngine(db, channels=(LexicalChannel(),), weights={"lexical": 1}, stages=[
        DemoteWord("billing")
    ])  # fmt: skip
    try:
        plain = recall(engine, "postgres", stages=(), context=False, min_score=0)
        staged = recall(engine, "postgres", context=False, min_score=0)
    finally:
        engine.close()
    assert plain.hits[0].memory.content == TEXTS[0] and plain.hits[0].adjustments == ()
    billing = next(h for h in staged.hits if h.memory.content == TEXTS[0])
    assert staged.hits[0].memory.content == TEXTS[1]  # the demoted hit no longer leads
    assert billing.score == pytest.approx(plain.hits[0].score * 0.5)
    assert billing.adjustments == (HitAdjustment("demote", 0.5, "mentions billing"),)
    assert "demote" in stage_names(staged) and "demote" not in stage_names(plain)
    assert hit_json(billing)["adjustments"] == [
        {"stage": "demote", "factor": 0.5, "reason": "mentions billing"}
    ]
    with pytest.raises(InvalidInput, match="stages must be a subset of: demote"):
        recall(engine, "postgres", stages=("rerank",))


@dataclass
class FixedChannel:
    """A channel through the real protocol returning fixed evidence per content, with the
    measured model's calibration (as the semantic channel reports it for MiniLM)."""

    name: str
    evidence: dict[str, tuple[float, float]]  # content -> (score, raw)

    def start(self, conn: Connection, request: ChannelRequest, pool: Executor) -> Finish:
        rows = {
            str(r["content"]): str(r["id"])
            for r in conn.execute("SELECT id, content FROM memories")
        }

        def finish(clock: StageClock) -> ChannelOutcome:
            ranked = sorted(self.evidence.items(), key=lambda item: -item[1][0])
            hits = [
                Found(rows[text], ChannelEvidence(score, rank, raw))
                for rank, (text, (score, raw)) in enumerate(ranked, start=1)
            ]
            return ChannelOutcome(hits, calibration=MINILM if self.name == "semantic" else None)

        return finish


def test_weak_hits_are_kept_and_marked_and_relevant_only_drops_them(db: Database) -> None:
    """Relevance (recall.calibration): cosine >= 0.33, or a lexical score >= 0.5 once weighed
    by semantic support (none at cosine 0.25, unless the memory holds most of the words)."""
    semantic = FixedChannel(
        "semantic",
        {TEXTS[0]: (0.3, 0.51), TEXTS[1]: (0.0, 0.2), TEXTS[2]: (0.0, 0.29), TEXTS[3]: (0.0, 0.1)},
    )
    lexical = FixedChannel(
        "lexical", {TEXTS[1]: (0.45, -3.0), TEXTS[2]: (0.6, -2.0), TEXTS[3]: (0.9, -4.0)}
    )
    engine = RecallEngine(db, channels=(lexical, semantic), min_score=0.0)
    try:
        hits = recall(engine, "postgres billing").hits
        weak = {h.memory.content: h.weak for h in hits}
        # TEXTS[1]: 0.45 at cosine 0.2, no support; TEXTS[2]: 0.6 * 0.63 = 0.38; TEXTS[3]: 0.9
        # holds most of the words: relevant at any cosine.
        assert weak == {TEXTS[0]: False, TEXTS[1]: True, TEXTS[2]: True, TEXTS[3]: False}
        assert {h.memory.content: hit_json(h)["weak"] for h in hits} == weak
        only = recall(engine, "postgres billing", relevant_only=True).hits
        assert {h.memory.content for h in only} == {TEXTS[0], TEXTS[3]}
    finally:
        engine.close()
