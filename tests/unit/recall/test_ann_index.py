"""The HNSW index beyond the exact range: build, reopen, kept in step, torn and stale files,
generation change, scope and filters, and what the response says."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from signet_desktop.domain.memory import Actor, MemoryPatch
from signet_desktop.domain.recall import RecallFilters, RecallQuery
from signet_desktop.embedding.generations import Generation, activate_generation
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.embedding.index import VectorIndex
from signet_desktop.embedding.vectors import PendingVector, embed_writes
from signet_desktop.recall.ann import AnnIndexes
from signet_desktop.recall.ann_file import (
    OpenedIndex,
    index_directory,
    partition_paths,
    read_stamp,
)
from signet_desktop.recall.engine import RecallEngine
from signet_desktop.recall.lexical import LexicalChannel
from signet_desktop.recall.vector import SemanticChannel, SemanticOutcome, channel_outcome
from signet_desktop.service.embeddings.vectors import EmbeddingVectors
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.storage.database import Database, open_database

EMBEDDER = HashEmbedder(64)
TOPICS = ["postgres", "svelte", "backups", "tea", "deploys"]


class Workspace:
    """A database with embedded memories and an ANN-backed channel (exact range lowered)."""

    def __init__(self, path: Path) -> None:
        self.db: Database = open_database(path)
        self.index = VectorIndex(self.db)
        self.generation = self.index.ensure_generation(
            provider="hash", model=EMBEDDER.model, dimensions=EMBEDDER.dimensions
        )
        self.port = EmbeddingVectors(self.index, EMBEDDER, self.generation)
        self.memories = MemoryService(self.db, self.port)
        self.ann_dir = index_directory(path)

    def remember(self, text: str, **kw: object) -> str:
        request = RememberRequest(content=text, **kw)  # type: ignore[arg-type]
        return self.memories.remember(request, Actor()).memory.id

    def indexes(self, **kw: object) -> AnnIndexes:
        return AnnIndexes(self.ann_dir, self.db.reader, **kw)  # type: ignore[arg-type]

    def channel(self, ann: AnnIndexes, embedder: HashEmbedder = EMBEDDER) -> SemanticChannel:
        return SemanticChannel(embedder, vec_available=True, exact_max_rows=0, ann=ann)

    def search(
        self,
        channel: SemanticChannel,
        query: str,
        *,
        agent: str = "default",
        filters: RecallFilters | None = None,
        k: int = 5,
    ) -> SemanticOutcome:
        generation = channel.generation(self.db.reader())
        assert isinstance(generation, Generation)
        vector = channel.embed_query(query)
        conn = self.db.reader()
        return channel.search(conn, generation, vector, agent, filters or RecallFilters(), k)


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    workspace = Workspace(tmp_path / "a.db")
    for i in range(60):
        workspace.remember(f"note {i} about {TOPICS[i % 5]} number {i}")
    yield workspace
    workspace.port.close()
    workspace.db.close()


def built(ws: Workspace, **kw: object) -> tuple[AnnIndexes, SemanticChannel]:
    """An index whose first search started the build, waited for."""
    ann = ws.indexes(**kw)
    channel = ws.channel(ann)
    ws.search(channel, "warm up")
    assert ann.wait(10)
    return ann, channel


def exact(ws: Workspace, query: str, **kw: object) -> SemanticOutcome:
    return ws.search(SemanticChannel(EMBEDDER, vec_available=True), query, **kw)  # type: ignore[arg-type]


def test_the_prefilter_answers_while_the_graph_builds_then_the_graph(ws: Workspace) -> None:
    ann = ws.indexes()
    channel = ws.channel(ann)
    first = ws.search(channel, "postgres note")
    assert first.strategy == "prefilter" and first.completeness == "approximate"
    assert first.note is not None and "being built" in first.note
    assert ann.wait(10)
    outcome = ws.search(channel, "postgres note")
    wire = channel_outcome(outcome)
    assert (wire.completeness, wire.index, outcome.note) == ("approximate", "hnsw-usearch", None)
    reference = exact(ws, "postgres note")
    assert [h.memory_id for h in outcome.hits] == [h.memory_id for h in reference.hits]
    assert [h.evidence.raw for h in outcome.hits] == pytest.approx(
        [h.evidence.raw for h in reference.hits], abs=1e-6
    )  # rescored from the canonical float32 vectors
    [status] = ann.statuses()
    assert status.ready and status.indexed == 60 and status.delta == 0


def test_a_persisted_graph_is_reopened_without_a_rebuild(ws: Workspace) -> None:
    built(ws)
    index_file, stamp_file = partition_paths(ws.ann_dir, ws.generation.id, "default")
    stamp = read_stamp(stamp_file)
    assert stamp is not None and stamp.count == 60 and stamp.scalar == "i8"
    written = index_file.stat().st_mtime_ns
    reopened = ws.indexes()
    outcome = ws.search(ws.channel(reopened), "svelte note")
    assert outcome.strategy == "ann"
    assert not reopened.statuses()[0].building
    assert index_file.stat().st_mtime_ns == written


def test_remember_modify_and_forget_are_followed(ws: Workspace) -> None:
    ann, channel = built(ws)
    fresh = ws.remember("ana drinks espresso every morning")
    top = ws.search(channel, "ana drinks espresso every morning").hits[0]
    assert top.memory_id == fresh and top.evidence.raw == pytest.approx(1.0, abs=1e-5)
    change = ws.memories.modify(
        "default",
        fresh,
        MemoryPatch(content="bob rides a red bicycle"),
        reason="test",
        if_version=None,
        actor=Actor(),
    )
    assert change.memory.id == fresh
    assert ws.search(channel, "bob rides a red bicycle").hits[0].memory_id == fresh
    ws.memories.forget("default", fresh, reason="test", actor=Actor())
    hits = ws.search(channel, "bob rides a red bicycle").hits
    assert fresh not in {h.memory_id for h in hits}
    assert ann.statuses()[0].delta == 2  # the espresso and the bicycle vectors


def test_a_grown_delta_is_folded_into_the_graph(ws: Workspace) -> None:
    ann, channel = built(ws, refresh_rows=2)
    for i in range(5):  # more than refresh_rows and 5% of the graph
        ws.remember(f"a fresh thought {i} about gardening")
    first = ws.db.reader().execute("SELECT id FROM memories ORDER BY created_at LIMIT 1")
    patch = MemoryPatch(content="a changed note")  # its old vector is deleted: a dead key
    ws.memories.modify(
        "default", first.fetchone()[0], patch, reason="t", if_version=None, actor=Actor()
    )
    ws.search(channel, "gardening")  # sees the delta outgrown: updates in the background
    assert ann.wait(10)
    [status] = ann.statuses()
    assert (status.indexed, status.delta) == (65, 0)  # 60 + 5 + 1 new - 1 dead
    assert ws.search(channel, "a fresh thought 1 about gardening").strategy == "ann"


@pytest.mark.parametrize("damage", ["truncate", "flip", "stamp", "stale"])
def test_a_torn_or_stale_file_is_never_served_and_is_rebuilt(ws: Workspace, damage: str) -> None:
    built(ws)
    index_file, stamp_file = partition_paths(ws.ann_dir, ws.generation.id, "default")
    data = bytearray(index_file.read_bytes())
    if damage == "truncate":
        index_file.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        data[len(data) // 2] ^= 0xFF
        index_file.write_bytes(bytes(data))
    elif damage == "stamp":
        stamp_file.write_text("{not json")
    else:  # covers embedding ids this database never had (e.g. restored from an older copy)
        stamp_file.write_text(
            stamp_file.read_text().replace('"max_embedding_id": ', '"max_embedding_id": 9')
        )
    reopened = ws.indexes()
    channel = ws.channel(reopened)
    assert ws.search(channel, "postgres note").strategy == "prefilter"
    assert reopened.wait(10)
    assert ws.search(channel, "postgres note").strategy == "ann"
    stamp = read_stamp(stamp_file)
    assert stamp is not None and stamp.count == 60


def test_a_failed_write_keeps_the_prefilter_and_says_why(ws: Workspace) -> None:
    ws.ann_dir.write_text("a file where the index directory should be")  # as good as disk full
    ann = ws.indexes()
    channel = ws.channel(ann)
    ws.search(channel, "postgres")
    assert ann.wait(10)
    outcome = ws.search(channel, "postgres")
    assert outcome.strategy == "prefilter" and outcome.completeness == "approximate"
    [status] = ann.statuses()
    assert not status.ready and not status.building and status.reason


def test_a_new_generation_gets_its_own_graph_and_the_old_files_go(ws: Workspace) -> None:
    built(ws)
    old_index, _ = partition_paths(ws.ann_dir, ws.generation.id, "default")
    assert old_index.exists()
    other = HashEmbedder(32)
    generation = ws.index.ensure_generation(provider="hash", model=other.model, dimensions=32)
    rows = ws.db.reader().execute("SELECT id, agent_id, content, content_hash FROM memories")
    pending = [PendingVector(r[0], r[1], r[2], r[3]) for r in rows]
    writes = embed_writes(other, 32, pending)
    with ws.db.write() as conn:
        ws.index.store(conn, generation, writes)
        activate_generation(conn, generation.id)
    ann = ws.indexes()
    channel = ws.channel(ann, other)
    ws.search(channel, "postgres")
    assert ann.wait(10)
    outcome = ws.search(channel, "note 7 about backups number 7")
    assert outcome.strategy == "ann" and outcome.hits[0].evidence.raw == pytest.approx(1.0)
    assert partition_paths(ws.ann_dir, generation.id, "default")[0].exists()
    assert not old_index.exists()


def test_agents_stay_apart_and_filters_widen_the_candidates(ws: Workspace) -> None:
    theirs = ws.remember("note 1 about svelte number 1", agent_id="other-agent")
    rare = ws.remember("a svelte component for maps", who="rare")
    ann = ws.indexes()
    channel = SemanticChannel(
        EMBEDDER, vec_available=True, exact_max_rows=0, ann=ann, ann_candidates=2
    )
    ws.search(channel, "warm up")
    ws.search(channel, "warm up", agent="other-agent")
    assert ann.wait(10)
    mine = ws.search(channel, "note 1 about svelte number 1")
    assert mine.strategy == "ann" and theirs not in {h.memory_id for h in mine.hits}
    other = ws.search(channel, "note 1 about svelte number 1", agent="other-agent")
    assert [h.memory_id for h in other.hits] == [theirs]
    narrow = ws.search(channel, "postgres note", filters=RecallFilters(who="rare"), k=1)
    assert narrow.strategy == "ann" and [h.memory_id for h in narrow.hits] == [rare]


def test_a_build_killed_mid_write_leaves_nothing_that_is_served(ws: Workspace) -> None:
    """kill -9 during a build: a temporary file and no stamp. Never opened; rebuilt; cleaned."""
    ws.ann_dir.mkdir()
    index_file, stamp_file = partition_paths(ws.ann_dir, ws.generation.id, "default")
    leftover = index_file.with_name(index_file.name + ".tmp-999999")
    leftover.write_bytes(b"half an index")
    index_file.write_bytes(b"renamed, but its stamp never written")
    ann = ws.indexes()
    channel = ws.channel(ann)
    first = ws.search(channel, "postgres")
    assert first.strategy == "prefilter" and first.note and "being built" in first.note
    assert ann.wait(10)
    assert ws.search(channel, "postgres").strategy == "ann"
    assert not leftover.exists() and stamp_file.exists()


def test_within_the_exact_range_the_exact_path_answers_and_no_index_is_built(
    ws: Workspace,
) -> None:
    ann = ws.indexes()
    channel = SemanticChannel(EMBEDDER, vec_available=True, exact_max_rows=60, ann=ann)
    outcome = ws.search(channel, "postgres note")
    assert (outcome.strategy, outcome.completeness) == ("matrix", "complete")
    assert channel_outcome(outcome).index == "exact-in-memory"
    assert ann.statuses() == [] and not ws.ann_dir.exists()


def test_the_recall_result_says_approximate_and_names_the_index(ws: Workspace) -> None:
    _, channel = built(ws)
    engine = RecallEngine(ws.db, channels=(LexicalChannel(), channel))
    try:
        result = engine.recall(RecallQuery(query="postgres note", limit=5))
    finally:
        engine.close()
    assert (result.vector_completeness, result.vector_index) == ("approximate", "hnsw-usearch")
    assert result.hits


def test_filters_thinner_than_the_widest_request_hand_over_to_the_prefilter(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    rare = ws.remember("a svelte component for maps", who="rare")
    ann = ws.indexes()
    channel = SemanticChannel(
        EMBEDDER, vec_available=True, exact_max_rows=0, ann=ann, ann_candidates=2
    )
    ws.search(channel, "warm up")
    assert ann.wait(10)
    monkeypatch.setattr("signet_desktop.recall.vector.ANN_MAX_CANDIDATES", 4)
    outcome = ws.search(channel, "postgres note", filters=RecallFilters(who="rare"), k=1)
    assert outcome.strategy == "prefilter" and [h.memory_id for h in outcome.hits] == [rare]
    assert outcome.note is not None and "filters left too few" in outcome.note


class SlowOpen(AnnIndexes):
    """Opening the default agent's file blocks until released (a CRC check of a 1M file)."""

    def __init__(self, *args: object, **kw: object) -> None:
        super().__init__(*args, **kw)  # type: ignore[arg-type]
        self.entered, self.release = threading.Event(), threading.Event()
        self.opens: Counter[str] = Counter()

    def _open(self, generation: Generation, agent_id: str) -> OpenedIndex | str:
        self.opens[agent_id] += 1
        if agent_id == "default":
            self.entered.set()
            assert self.release.wait(30)
        return super()._open(generation, agent_id)


def test_a_partitions_first_open_waits_behind_no_other_partitions_open(ws: Workspace) -> None:
    """The open held the indexes' lock, so every partition's first recall waited for it."""
    ws.remember("a svelte component for maps", agent_id="bob")
    ann = ws.indexes()
    channel = ws.channel(ann)
    ws.search(channel, "warm up")
    ws.search(channel, "warm up", agent="bob")
    assert ann.wait(10)  # both graphs written; a new process opens them from disk
    slow = SlowOpen(ws.ann_dir, ws.db.reader)
    channel = ws.channel(slow)
    strategies: list[str | None] = []

    def recall_default() -> None:
        strategies.append(ws.search(channel, "postgres note").strategy)

    first, second = threading.Thread(target=recall_default), threading.Thread(target=recall_default)
    first.start()
    assert slow.entered.wait(10)
    second.start()  # the same partition: waits for the one opener
    bob: list[str | None] = []
    other = threading.Thread(
        target=lambda: bob.append(ws.search(channel, "svelte maps", agent="bob").strategy)
    )
    other.start()
    other.join(20)
    answered = not other.is_alive()
    slow.release.set()
    other.join(30)
    assert answered and bob == ["ann"]  # bob's partition answered during default's open
    first.join(30)
    second.join(30)
    assert strategies == ["ann", "ann"]
    assert slow.opens == {"default": 1, "bob": 1}
