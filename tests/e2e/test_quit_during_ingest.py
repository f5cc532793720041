"""SIGTERM while the daemon ingests a document and embeds a burst of remembers: a clean stop.

The real `signet-desktop`, headless and as the Qt app (offscreen; its workers in QThreads,
its quit the same `request_stop` the tray's Quit calls), with the native embedder, is
stopped mid-ingest. It must exit 0
with no traceback, leave the document `queued` with its job `pending` (nothing mid-state,
no lease held), and, once restarted, finish the document exactly once with one memory per
chunk, the remembered memories all kept. How fast the quit is lives in bench/quit_latency.py.
"""

from __future__ import annotations

import os
import time

import httpx
import pytest

from signet_desktop.ingest.chunking import chunk_text
from tests.e2e.launcher import Launcher, args_for, clean_env, no_traceback
from tests.e2e.test_document_crash import rows, wait_for_done

pytestmark = pytest.mark.slow

CHUNK_SIZE = 400
OVERLAP = 40
REMEMBERS = 20
AGENT_YAML = (
    "memory:\n  pipelineV2:\n    worker:\n      pollMs: 200\n"
    f"    documents:\n      chunkSize: {CHUNK_SIZE}\n      chunkOverlap: {OVERLAP}\n"
)


def runbook() -> str:
    return "\n\n".join(
        f"Part {p}. To roll back service {p % 23}, drain its traffic, restore the snapshot "
        f"taken before the deploy and replay the queue from offset {p * 17}."
        for p in range(600)
    )


def wait_embedding(client: httpx.Client, doc_id: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while client.get(f"/api/documents/{doc_id}").json()["status"] != "embedding":
        assert time.monotonic() < deadline, "the document never started embedding"
        time.sleep(0.05)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("headless", [True, pytest.param(False, marks=pytest.mark.gui)])
def test_sigterm_mid_ingest_exits_cleanly_and_the_document_resumes_once(
    launcher: Launcher, headless: bool
) -> None:
    workspace = launcher.tmp_path / "ws"
    workspace.mkdir()
    (workspace / "agent.yaml").write_text(AGENT_YAML, encoding="utf-8")
    env = clean_env(
        launcher.home,
        QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"),
        XDG_CONFIG_HOME=str(launcher.home / ".config"),  # QSettings stay under tmp
    )
    daemon = launcher.start(*args_for(workspace), env=env, headless=headless)
    with httpx.Client(base_url=daemon.wait_listening(), timeout=30) as client:
        body = {"source_type": "text", "content": runbook()}
        doc_id = client.post("/api/documents", json=body).json()["id"]
        wait_embedding(client, doc_id)
        for n in range(REMEMBERS):  # their vectors follow in the background batcher
            fact = {"content": f"quit test fact {n}: the canary runs in zone {n % 3}"}
            client.post("/api/memory/remember", json=fact).raise_for_status()
        assert client.get(f"/api/documents/{doc_id}").json()["status"] == "embedding"
    assert daemon.signal() == 0, daemon.stderr()
    no_traceback(daemon.stderr())
    assert "database is closed" not in daemon.stderr(), daemon.stderr()

    db_path = workspace / "memory" / "memories.db"
    where = f"WHERE document_id = '{doc_id}'"
    assert rows(db_path, f"SELECT status FROM documents WHERE id = '{doc_id}'") == [("queued",)]
    assert rows(db_path, f"SELECT status, lease_token FROM memory_jobs {where}") == [
        ("pending", None)
    ]

    restarted = launcher.start(*args_for(workspace))
    (doc,) = wait_for_done(restarted.wait_listening(), [doc_id], timeout=480)
    assert restarted.signal() == 0
    no_traceback(restarted.stderr())

    expected = chunk_text(runbook(), CHUNK_SIZE, OVERLAP)
    assert doc["chunk_count"] == len(expected) == doc["memory_count"]
    links = rows(db_path, f"SELECT chunk_index, memory_id FROM document_memories {where}")
    assert sorted(i for i, _ in links) == list(range(len(expected)))
    assert rows(db_path, f"SELECT status FROM memory_jobs {where}") == [("completed",)]
    chunks = rows(
        db_path,
        "SELECT COUNT(*), COUNT(DISTINCT source_id) FROM memories WHERE type = 'document_chunk'",
    )
    assert chunks == [(len(expected), len(expected))]  # no chunk written twice
    facts = rows(db_path, "SELECT COUNT(*) FROM memories WHERE content LIKE 'quit test fact %'")
    assert facts == [(REMEMBERS,)]
