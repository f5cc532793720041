"""A stop mid-ingest: the document goes back to `queued` and resumes; work past the stop
budget meets the closed database without a traceback and without failing the document."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest
import sqlean

from signet_desktop.domain.documents import DocumentRequest
from tests.support.documents import config, count, drain, job_of, make_service, make_worker
from tests.unit.service.documents.test_documents import PARAGRAPH, GatedEmbedder

CFG = config(chunkSize=200, chunkOverlap=0)
TEXT = "\n\n".join(f"Paragraph {n}: {PARAGRAPH} {'z' * 80}" for n in range(120))


def test_a_stop_between_batches_requeues_the_document_and_the_next_run_finishes_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    embedder = GatedEmbedder()
    service = make_service(tmp_path / "ws", CFG, embedder)
    try:
        ticket = service.documents.submit("default", DocumentRequest("text", content=TEXT))
        worker = make_worker(service, CFG)
        stop = threading.Event()
        run = threading.Thread(target=worker.run_forever, args=(stop,))
        with caplog.at_level(logging.INFO):
            run.start()
            assert embedder.entered.wait(10)  # inside the first batch
            stop.set()
            embedder.release.set()  # the batch finishes; the next one is not started
            run.join(10)
        assert not run.is_alive()
        document = service.documents.get("default", ticket.id)
        assert document.status == "queued"
        job = job_of(service, ticket.id)
        assert (job.status, job.attempts, job.lease_token) == ("pending", 0, None)
        written = count(service, "SELECT COUNT(*) FROM document_memories")
        assert 0 < written < 120
        assert not [r for r in caplog.records if r.exc_info]

        assert drain(make_worker(service, CFG)) == 1  # the next start resumes it
        document = service.documents.get("default", ticket.id)
        assert document.status == "done" and document.memory_count == document.chunk_count
        chunks = count(service, "SELECT COUNT(*) FROM memories WHERE type = 'document_chunk'")
        assert chunks == document.chunk_count  # the first run's batch was not written twice
    finally:
        service.close()


def test_a_batch_past_the_budget_meets_the_closed_database_quietly(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    embedder = GatedEmbedder()
    service = make_service(tmp_path / "ws", CFG, embedder)
    ticket = service.documents.submit("default", DocumentRequest("text", content=TEXT))
    worker = make_worker(service, CFG)
    stop = threading.Event()
    run = threading.Thread(target=worker.run_forever, args=(stop,))
    with caplog.at_level(logging.INFO):
        run.start()
        assert embedder.entered.wait(10)
        stop.set()
        service.close()  # the stop budget ran out: the database closes under the batch
        embedder.release.set()
        run.join(10)
    assert not run.is_alive()
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records]
    assert any("abandoned at shutdown" in r.getMessage() for r in caplog.records)
    conn = sqlean.connect(f"file:{tmp_path / 'ws' / 'memory' / 'memories.db'}?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT status FROM documents WHERE id = ?", (ticket.id,)).fetchone()
    finally:
        conn.close()
    assert row[0] == "embedding"  # not `failed`: the host's release or the next start requeues
