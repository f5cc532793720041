"""`signet embed ...` and `signet repair resync-vec` against the real app on a loopback socket."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from support.daemon import Capture, CliDaemon, run_daemon
from support.db import database_of
from support.fakes import SwitchableEmbedder

from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.embedding.provider import EmbeddingProvider

StartDaemon = Callable[..., CliDaemon]


@pytest.fixture
def start_daemon(tmp_path: Path) -> Iterator[StartDaemon]:
    """build_service + create_app served by uvicorn in a thread; stopped after the test."""
    with ExitStack() as stack:

        def start(
            embedder: EmbeddingProvider | None = None,
            *,
            with_vec: bool = True,
            config: dict[str, Any] | None = None,
        ) -> CliDaemon:
            served = run_daemon(
                tmp_path / "ws", embedder or HashEmbedder(64), with_vec=with_vec, config=config
            )
            return stack.enter_context(served)

        yield start


def embedding_id(daemon: CliDaemon, memory_id: str) -> int:
    return daemon.scalar("SELECT id FROM embeddings WHERE source_id = :m", m=memory_id)


def generation_row(out: str, generation_id: int = 1) -> list[str]:
    return next(line.split() for line in out.splitlines() if line.startswith(f"{generation_id} "))


def semantic_evidence(daemon: CliDaemon, capsys: Capture, query: str, memory_id: str) -> object:
    code, out, err = daemon.cli(capsys, "recall", query, "--json")
    assert code == 0, err
    (hit,) = [hit for hit in json.loads(out)["results"] if hit["id"] == memory_id]
    return hit["semantic"]


def test_audit_shows_full_coverage_after_remembers(
    start_daemon: StartDaemon, capsys: Capture
) -> None:
    daemon = start_daemon()
    for text in ("billing uses postgres", "frontend uses svelte", "deploys run on fridays"):
        daemon.remember(capsys, text)
    code, out, err = daemon.cli(capsys, "embed", "audit")
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == "embedder       hash · hash-64 · 64 dims"
    assert "vector search  complete" in out
    assert generation_row(out) == [
        "1",
        "hash-64",
        "64",
        "active",
        "100.0%",
        "(3/3)",
        "3",
        "3/3",
        "0",
    ]
    assert "hint:" not in out
    code, out, _ = daemon.cli(capsys, "embed", "audit", "--json")
    body = json.loads(out)
    assert body["coverage"]["ratio"] == 1.0 and body["mirror"]["missing"] == 0
    code, out, _ = daemon.cli(capsys, "embed", "backfill", "--all")
    assert (code, out) == (0, "nothing to embed: coverage 100.0% (3/3)\n")


def test_resync_vec_restores_dropped_mirror_rows(
    start_daemon: StartDaemon, capsys: Capture
) -> None:
    daemon = start_daemon()
    billing = daemon.remember(capsys, "the billing service stores invoices in postgres")
    frontend = daemon.remember(capsys, "the frontend team writes svelte components")
    daemon.remember(capsys, "deploys happen on friday afternoons")
    assert semantic_evidence(daemon, capsys, "billing invoices postgres", billing) is not None

    dropped = [embedding_id(daemon, billing), embedding_id(daemon, frontend)]
    with database_of(daemon.service).write() as conn:
        for rowid in dropped:
            conn.execute("DELETE FROM vec_embeddings_g1 WHERE rowid = :id", {"id": rowid})

    code, out, _ = daemon.cli(capsys, "embed", "audit")
    assert generation_row(out)[-2:] == ["1/3", "0"]
    assert "hint: the vec0 mirror is out of step (2 vectors missing): " in out
    # Recall searches the canonical vectors in memory, not the mirror: it still finds it.
    assert semantic_evidence(daemon, capsys, "billing invoices postgres", billing) is not None

    code, out, err = daemon.cli(capsys, "repair", "resync-vec", "--dry-run")
    assert (code, err) == (0, "")
    assert out == (
        "dry run: generation 1 has 1/3 canonical vectors mirrored; resync would add "
        "2 missing vectors (nothing changed)\n"
    )
    assert daemon.scalar("SELECT COUNT(*) FROM vec_embeddings_g1") == 1

    code, out, err = daemon.cli(capsys, "repair", "resync-vec")
    assert (code, err) == (0, "")
    assert out == (
        "resynced the vec0 mirror of generation 1 (had 1/3 canonical vectors mirrored): "
        "added 2 vectors\n"
    )
    assert daemon.scalar("SELECT COUNT(*) FROM vec_embeddings_g1") == 3
    assert semantic_evidence(daemon, capsys, "billing invoices postgres", billing) is not None
    code, out, _ = daemon.cli(capsys, "embed", "audit")
    assert generation_row(out)[-2:] == ["3/3", "0"] and "hint:" not in out

    code, out, _ = daemon.cli(capsys, "repair", "resync-vec", "--full", "--json")
    assert json.loads(out)["rebuilt"] is True
    assert daemon.scalar("SELECT COUNT(*) FROM vec_embeddings_g1") == 3
    assert semantic_evidence(daemon, capsys, "svelte components", frontend) is not None


def test_backfill_with_a_failing_embedder_keeps_memories(
    start_daemon: StartDaemon, capsys: Capture
) -> None:
    embedder = SwitchableEmbedder()
    # One memory per tracker step, so `--limit 1` rounds embed exactly one each.
    tracker = {"memory": {"pipelineV2": {"embeddingTracker": {"batchSize": 1}}}}
    daemon = start_daemon(embedder, config=tracker)
    embedder.down = True
    code, out, _ = daemon.cli(capsys, "remember", "the cache layer is redis")
    assert code == 0 and "not embedded yet" in out
    daemon.remember(capsys, "the queue is rabbitmq")

    code, out, _ = daemon.cli(capsys, "embed", "backfill", "--dry-run")
    assert out.startswith("dry run: 2 live memories lack a vector in generation 1")
    code, out, err = daemon.cli(capsys, "embed", "backfill", "--all")
    assert code == 1 and out == ""
    assert err.splitlines()[0].startswith(
        "error: embedder unavailable: switchable: connection refused [embedder_unavailable] "
        "(request id "
    )
    assert err.splitlines()[1].startswith("hint: memories stay saved")
    assert daemon.scalar("SELECT COUNT(*) FROM memories WHERE is_deleted = 0") == 2
    assert daemon.scalar("SELECT COUNT(*) FROM embeddings") == 0
    code, out, _ = daemon.cli(capsys, "recall", "redis cache")
    assert code == 0 and "the cache layer is redis" in out

    embedder.down = False
    code, out, err = daemon.cli(capsys, "embed", "backfill", "--all", "--limit", "1")
    assert (code, err) == (0, ""), out
    lines = out.splitlines()
    assert [line.split(" · ")[0] for line in lines[:-1]] == [
        "embedded 1/2 (50.0%)",
        "embedded 2/2 (100.0%)",
    ]
    assert lines[-1].startswith("done: embedded 2 memories in ")
    assert lines[-1].endswith("; coverage 100.0% (2/2)")
    assert daemon.scalar("SELECT COUNT(*) FROM embeddings") == 2


def test_without_sqlite_vec_resync_is_refused_and_audit_says_why(
    start_daemon: StartDaemon, capsys: Capture
) -> None:
    daemon = start_daemon(with_vec=False)
    daemon.remember(capsys, "vectors without the extension")
    code, out, err = daemon.cli(capsys, "repair", "resync-vec")
    assert (code, out) == (1, "")
    assert err.startswith("error: sqlite-vec is not loaded")
    assert "hint: the daemon could not load sqlite-vec" in err
    code, out, _ = daemon.cli(capsys, "embed", "audit")
    assert code == 0
    assert "vector search  recent-window: sqlite-vec is not loaded" in out
    assert generation_row(out)[-2:] == ["off", "0"]
