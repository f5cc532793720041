"""kill -9 of the daemon mid-chunking and mid-indexing: after a restart every document ends
`done` once, with one memory and one link per distinct chunk.

The real `signet-desktop --headless` runs with `SIGNET_DOCUMENT_FAULT=<step>[:<n>]`
(service/documents/worker.py: STEPS), which SIGKILLs it at that step of an ingest: after
chunking, after a batch of chunk memories was written but before it was linked, after a batch
was linked, or on the way to `done`. The restarted daemon releases the orphaned lease on its
worker's first step and resumes the job; the result must equal a clean ingest.
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
import sqlean

from signet_desktop.ingest.chunking import chunk_text
from tests.e2e.launcher import Launcher, args_for, clean_env

pytestmark = pytest.mark.slow

CHUNK_SIZE = 400
DOCS = 2
# No embedder: chunk vectors follow the acknowledgement on their own path (the crash and
# vector tests cover it), and loading the model twice a case only took CPU from the steps
# under test.
AGENT_YAML = (
    "embedding:\n  provider: none\n"
    "memory:\n  pipelineV2:\n    worker:\n      pollMs: 200\n"
    f"    documents:\n      chunkSize: {CHUNK_SIZE}\n      chunkOverlap: 40\n"
)


def document_text(n: int) -> str:
    return "\n\n".join(
        f"Document {n}, part {p}. The release checklist says to tag, build, sign and upload; "
        f"step {p} of the runbook covers rollback for service {n}-{p}."
        for p in range(150)
    )


def rows(db_path: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlean.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        return [tuple(r) for r in conn.execute(sql).fetchall()]
    finally:
        conn.close()


def wait_for_done(url: str, ids: list[str], timeout: float = 120) -> list[dict[str, object]]:
    deadline = time.monotonic() + timeout
    with httpx.Client(base_url=url, timeout=10) as client:
        while True:
            docs = [client.get(f"/api/documents/{i}").json() for i in ids]
            if all(d["status"] == "done" for d in docs):
                return docs
            assert time.monotonic() < deadline, [(d["status"], d["error"]) for d in docs]
            time.sleep(0.2)


@pytest.mark.parametrize("fault", ["chunked", "batch.written:2", "batch.linked:1", "indexing"])
def test_kill_mid_ingest_then_restart_ends_done_once(launcher: Launcher, fault: str) -> None:
    workspace = launcher.tmp_path / "ws"
    workspace.mkdir()
    (workspace / "agent.yaml").write_text(AGENT_YAML, encoding="utf-8")
    env = clean_env(launcher.home, SIGNET_DOCUMENT_FAULT=fault)
    daemon = launcher.start(*args_for(workspace), env=env)
    url = daemon.wait_listening()
    acknowledged: list[str] = []
    with httpx.Client(base_url=url, timeout=10) as client:
        for n in range(DOCS):
            try:
                response = client.post(
                    "/api/documents", json={"source_type": "text", "content": document_text(n)}
                )
            except httpx.TransportError:  # on a loaded machine the first document's ingest
                break  # can reach the fault point before a later post is answered
            acknowledged.append(response.json()["id"])
    assert acknowledged, daemon.stderr()
    assert daemon.wait(90) == -9, daemon.stderr()  # killed at the fault point

    db_path = workspace / "memory" / "memories.db"
    restarted = launcher.start(*args_for(workspace))
    url = restarted.wait_listening()
    ids = [str(i) for (i,) in rows(db_path, "SELECT id FROM documents ORDER BY rowid")]
    assert ids[: len(acknowledged)] == acknowledged  # an unanswered post may have landed too
    docs = wait_for_done(url, ids)
    restarted.signal()

    for n, doc in enumerate(docs):
        expected = chunk_text(document_text(n), CHUNK_SIZE, 40)
        assert doc["chunk_count"] == len(expected) == doc["memory_count"]
        links = rows(
            db_path,
            "SELECT chunk_index, memory_id FROM document_memories "
            f"WHERE document_id = '{doc['id']}'",
        )
        assert sorted(i for i, _ in links) == list(range(len(expected)))
        assert len({m for _, m in links}) == len(expected)
        jobs = rows(db_path, f"SELECT status FROM memory_jobs WHERE document_id = '{doc['id']}'")
        assert jobs == [("completed",)]
    chunk_memories = rows(
        db_path,
        "SELECT COUNT(*), COUNT(DISTINCT source_id), COUNT(DISTINCT content_hash) "
        "FROM memories WHERE type = 'document_chunk'",
    )[0]
    total = sum(int(str(d["chunk_count"])) for d in docs)
    assert chunk_memories == (total, total, total)  # no duplicate and no orphaned chunk
    assert rows(db_path, "PRAGMA integrity_check") == [("ok",)]
