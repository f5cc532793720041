"""Hybrid recall end to end through the facade: fallback, mirror repair, embedder faults."""

from __future__ import annotations

import threading

import pytest
from conftest import Factory
from support.db import database_of
from support.fakes import ScriptedEmbedder
from support.views import audit_json, status_json

from signet_desktop.api.views import backfill_json, resync_json
from signet_desktop.domain.errors import Unavailable
from signet_desktop.domain.memory import Actor
from signet_desktop.domain.recall import RecallQuery, RecallResult
from signet_desktop.embedding import vectors
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest

NOTES = (
    "the billing service uses postgres 16",
    "postgres backups run nightly at two",
    "the frontend is written in svelte",
    "ana prefers green tea in the morning",
    "deploys happen on fridays after lunch",
    "the mobile app caches images for a week",
)


def remember_all(service: SignetService, texts: tuple[str, ...] = NOTES) -> dict[str, str]:
    ids = {}
    for text in texts:
        outcome = service.memories.remember(RememberRequest(content=text), Actor())
        ids[outcome.memory.id] = text
    return ids


def recall(service: SignetService, query: str, **kw: object) -> RecallResult:
    return service.recall.search(RecallQuery(query=query, **kw))  # type: ignore[arg-type]


def ranking(result: RecallResult) -> list[tuple[str, float]]:
    return [(h.memory.id, round(h.score, 5)) for h in result.hits]


def table_count(service: SignetService, table: str) -> int:
    return int(database_of(service).reader().execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def test_remember_embeds_and_recall_is_hybrid_and_complete(service: SignetService) -> None:
    outcome = service.memories.remember(RememberRequest(content=NOTES[0]), Actor())
    assert outcome.embedded
    remember_all(service, NOTES[1:])
    result = recall(service, "which database does billing use")
    assert (result.method, result.vector_completeness, result.searched_window) == (
        "hybrid", "complete", None,
    )  # fmt: skip
    assert result.hits[0].memory.content == NOTES[0]
    assert list(result.hits[0].channels) == ["lexical", "semantic"]
    status = status_json(service)["embedding"]
    assert status["coverage"]["ratio"] == 1.0 and status["generation"]["status"] == "active"
    assert status["vectorSearch"] == "complete"


def test_without_sqlite_vec_recall_scans_the_recent_window_and_says_so(
    make_service: Factory, embedder: ScriptedEmbedder
) -> None:
    with_vec = make_service(embedder)
    remember_all(with_vec)
    expected = ranking(recall(with_vec, "postgres billing database"))
    with_vec.close()

    fallback = make_service(embedder, with_vec=False)
    assert not database_of(fallback).vec.available
    result = recall(fallback, "postgres billing database")
    assert result.vector_completeness == "recent-window"
    assert result.searched_window == 10_000  # search.vector_fallback_window default
    assert "sqlite-vec is not loaded" in result.notes[0]
    assert ranking(result) == expected  # every vector fits in the window: same answer
    assert status_json(fallback)["embedding"]["vectorSearch"] == "recent-window"


def test_the_fallback_window_is_configurable_and_bounds_the_scan(
    make_service: Factory, embedder: ScriptedEmbedder
) -> None:
    service = make_service(
        embedder, with_vec=False, config={"search": {"vector_fallback_window": 100}}
    )
    remember_all(service, tuple(f"postgres note number {i}" for i in range(120)))
    result = recall(service, "postgres note number 0", channels=("semantic",), limit=100)
    assert result.searched_window == 100
    newest = {f"postgres note number {i}" for i in range(20, 120)}
    assert {h.memory.content for h in result.hits} <= newest


def test_a_vec_mirror_missing_rows_still_answers_and_resync_restores_it(
    service: SignetService,
) -> None:
    remember_all(service)
    before = recall(service, "postgres", channels=("semantic",))
    generation = service.embeddings.parts.tracker.generation  # type: ignore[union-attr]
    with database_of(service).write() as conn:
        ids = sorted(vectors.mirror_ids(conn, generation))
        vectors.remove_from_mirror(conn, generation, ids[:3])
    degraded = recall(service, "postgres billing")
    assert degraded.hits and degraded.vector_completeness == "complete"
    audit = audit_json(service)
    assert audit["mirror"] == {"enabled": True, "error": None, "missing": 3, "orphans": 0}
    report = resync_json(service.embeddings.resync())
    assert (report["added"], report["removed"]) == (3, 0)
    assert audit_json(service)["mirror"]["missing"] == 0
    assert ranking(recall(service, "postgres", channels=("semantic",))) == ranking(before)


def test_the_worker_heals_a_stale_mirror_at_start(
    make_service: Factory, embedder: ScriptedEmbedder
) -> None:
    service = make_service(embedder)
    remember_all(service)
    service.close()
    offline = make_service(embedder, with_vec=False)  # vectors written while vec is missing
    remember_all(offline, ("written without the extension",))
    offline.close()
    service = make_service(embedder)
    assert audit_json(service)["mirror"]["missing"] == 1
    service.embeddings.parts.worker.run_once()  # type: ignore[union-attr]
    assert audit_json(service)["mirror"]["missing"] == 0


def test_resync_without_sqlite_vec_is_refused_clearly(
    make_service: Factory, embedder: ScriptedEmbedder
) -> None:
    service = make_service(embedder, with_vec=False)
    with pytest.raises(Unavailable, match="sqlite-vec is not loaded"):
        resync_json(service.embeddings.resync())


def test_embedder_down_during_remember_saves_and_queues(
    service: SignetService, embedder: ScriptedEmbedder
) -> None:
    embedder.mode = "down"
    outcome = service.memories.remember(
        RememberRequest(content="written while the embedder was down"), Actor()
    )
    assert outcome.embedded is False
    assert service.memories.get("default", outcome.memory.id).content.startswith("written while")
    audit = audit_json(service)
    assert audit["jobs"]["pending"] == 1 and audit["coverage"]["missing"] == 1
    assert table_count(service, "embeddings") == 0
    # A duplicate remember never queues twice.
    service.memories.remember(
        RememberRequest(content="written while the embedder was down"), Actor()
    )
    assert audit_json(service)["jobs"]["pending"] == 1
    # Lexical recall finds it meanwhile; once the embedder is back the worker embeds it.
    assert recall(service, "embedder down").hits
    embedder.mode = "ok"
    worker = service.embeddings.parts.worker  # type: ignore[union-attr]
    assert worker.run_once()
    audit = audit_json(service)
    assert audit["jobs"]["completed"] == 1 and audit["coverage"]["missing"] == 0
    result = recall(service, "written while the embedder was down", channels=("semantic",))
    assert result.hits[0].memory.id == outcome.memory.id


def test_embedder_slow_during_remember_does_not_block_it(
    make_service: Factory, embedder: ScriptedEmbedder
) -> None:
    service = make_service(embedder, config={"embedding": {"timeout_ms": 200}})
    embedder.mode, embedder.delay_s = "slow", 1.0
    outcome = service.memories.remember(
        RememberRequest(content="saved despite a slow embedder"), Actor()
    )
    assert outcome.embedded is False
    assert audit_json(service)["jobs"]["pending"] == 1


@pytest.mark.parametrize("mode", ["wrong_dims", "nan", "empty"])
def test_bad_vectors_during_remember_are_rejected_and_nothing_is_lost(
    service: SignetService, embedder: ScriptedEmbedder, mode: str
) -> None:
    embedder.mode = mode
    outcome = service.memories.remember(
        RememberRequest(content="a memory with a broken vector"), Actor()
    )
    assert outcome.embedded is False
    assert table_count(service, "embeddings") == 0
    assert table_count(service, "memories") == 1
    assert audit_json(service)["jobs"]["pending"] == 1


def test_a_backfill_request_embeds_and_reports(
    service: SignetService, embedder: ScriptedEmbedder
) -> None:
    embedder.mode = "down"
    remember_all(service)
    with pytest.raises(Unavailable, match="embedder unavailable"):
        backfill_json(service.embeddings.backfill(limit=10))
    assert backfill_json(service.embeddings.backfill(limit=10, dry_run=True))["missing"] == len(
        NOTES
    )
    embedder.mode = "ok"
    report = backfill_json(service.embeddings.backfill(limit=100))
    assert report["embedded"] == len(NOTES) and report["coverage"]["missing"] == 0


def test_changing_the_model_re_embeds_and_never_mixes(make_service: Factory) -> None:
    old = make_service(ScriptedEmbedder(64, "model-a"))
    remember_all(old)
    old.close()

    service = make_service(ScriptedEmbedder(32, "model-b"))
    status = status_json(service)["embedding"]
    assert status["model"] == "model-b" and status["generation"]["status"] == "building"
    assert status["coverage"]["missing"] == len(NOTES)
    during = recall(service, "postgres billing")
    assert during.method == "keyword" and during.vector_completeness == "unavailable"
    assert "being rebuilt" in during.notes[0]
    assert all("semantic" not in h.channels for h in during.hits)

    stop = threading.Event()
    worker = service.embeddings.parts.worker  # type: ignore[union-attr]
    thread = threading.Thread(target=worker.run_forever, args=(stop,), daemon=True)
    thread.start()
    try:
        for _ in range(200):
            if status_json(service)["embedding"]["generation"]["status"] == "active":
                break
            stop.wait(0.05)
    finally:
        stop.set()
        thread.join(5)
    assert not thread.is_alive()
    generations = {g["model"]: g for g in audit_json(service)["generations"]}
    assert generations["model-a"]["status"] == "retired"
    assert generations["model-b"]["status"] == "active"
    assert generations["model-b"]["vectors"] == len(NOTES)
    after = recall(service, "postgres billing")
    assert after.method == "hybrid" and after.vector_completeness == "complete"


def test_no_embedder_means_lexical_recall_and_a_clear_status(make_service: Factory) -> None:
    service = make_service(None)
    outcome = service.memories.remember(
        RememberRequest(content="postgres without vectors"), Actor()
    )
    assert outcome.embedded is False
    assert table_count(service, "memory_jobs") == 0  # nothing could ever consume them
    result = recall(service, "postgres")
    assert result.method == "keyword" and result.hits
    assert "no embedder" in result.notes[0]
    assert status_json(service)["embedding"]["provider"] == "none"
    with pytest.raises(Unavailable, match="no embedder"):
        backfill_json(service.embeddings.backfill())
