"""The embedding worker loop on a real thread: busy while there is work, backs off when down."""

from __future__ import annotations

import threading
import time

from conftest import Factory
from support.db import database_of
from support.fakes import ScriptedEmbedder
from support.views import audit_json

from signet_desktop.domain.memory import Actor
from signet_desktop.embedding.index import VectorIndex
from signet_desktop.service.embeddings.worker import EmbeddingWorker
from signet_desktop.service.memories.service import RememberRequest


def run_for(worker: EmbeddingWorker, seconds: float) -> None:
    stop = threading.Event()
    thread = threading.Thread(target=worker.run_forever, args=(stop,), daemon=True)
    thread.start()
    time.sleep(seconds)
    stop.set()
    thread.join(2)
    assert not thread.is_alive(), "run_forever must return promptly once stop is set"


def test_a_down_embedder_is_retried_with_backoff_not_hammered(
    make_service: Factory, embedder: ScriptedEmbedder
) -> None:
    service = make_service(embedder)
    embedder.mode = "down"
    for i in range(3):
        service.memories.remember(RememberRequest(content=f"memory {i}"), Actor())
    calls_at_start = embedder.calls
    tracker = service.embeddings.parts.tracker  # type: ignore[union-attr]
    worker = EmbeddingWorker(
        tracker, VectorIndex(database_of(service)), poll_s=0.01, max_backoff_s=0.08
    )
    run_for(worker, 0.4)
    attempts = embedder.calls - calls_at_start
    assert 1 <= attempts <= 15  # 0.01, 0.02, 0.04, 0.08, 0.08 ... not thousands
    assert worker.last_error and "connection refused" in worker.last_error
    embedder.mode = "ok"
    run_for(worker, 0.3)
    assert audit_json(service)["coverage"]["missing"] == 0


def test_an_unexpected_error_does_not_kill_the_loop(
    make_service: Factory, embedder: ScriptedEmbedder
) -> None:
    service = make_service(embedder)
    embedder.mode = "crash"
    service.memories.remember(
        RememberRequest(content="remembered while the embedder crashes"), Actor()
    )
    tracker = service.embeddings.parts.tracker  # type: ignore[union-attr]
    worker = EmbeddingWorker(tracker, VectorIndex(database_of(service)), poll_s=0.01)
    stop = threading.Event()
    thread = threading.Thread(target=worker.run_forever, args=(stop,), daemon=True)
    thread.start()
    time.sleep(0.1)
    assert thread.is_alive() and worker.last_error == "unexpected error; see the log"
    embedder.mode = "ok"
    time.sleep(0.2)
    stop.set()
    thread.join(2)
    assert audit_json(service)["coverage"]["missing"] == 0
