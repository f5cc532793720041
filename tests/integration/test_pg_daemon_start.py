"""The daemon on PostgreSQL: `storage.url` in agent.yaml, the real HTTP app, every worker.

A whole start: lock, service over the server (migrated already, as the template is), the
declared workers hosted, start-up tasks run, the HTTP app serving. Memories remembered over
HTTP get their vectors from the embedding batches and are recalled; /api/status reports the
backend, every worker running without an error and every start-up task done; the daemon
log holds no ERROR line; no SQLite file is created.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from signet_desktop.daemon.runtime import DaemonRuntime, RuntimeOptions
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.main import http_app
from signet_desktop.service.container import BuildOptions

pytestmark = pytest.mark.postgres


def test_the_daemon_serves_a_postgresql_store_with_every_worker(
    tmp_path: Path, pg_url: str
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    workspace.joinpath("agent.yaml").write_text(f"storage:\n  url: {pg_url}\n")
    runtime = DaemonRuntime(
        RuntimeOptions(
            app_factory=http_app,
            workspace=str(workspace),
            port=0,
            env={},
            log_to_stderr=False,
            build=BuildOptions(embedder=HashEmbedder(64)),
        )
    )
    runtime.open()
    paths = runtime.paths
    assert paths is not None

    async def scenario() -> tuple[int, dict[str, Any], list[dict[str, Any]]]:
        ready = asyncio.Event()
        runtime.on_ready(ready.set)
        serving = asyncio.create_task(runtime.serve())
        await asyncio.wait_for(ready.wait(), 30)
        async with httpx.AsyncClient(base_url=runtime.url, timeout=30) as client:
            for topic in ("billing runs on postgres", "deploys on tuesdays", "the vault key"):
                saved = await client.post("/api/memory/remember", json={"content": topic})
                assert saved.status_code == 200, saved.text
            hits: list[dict[str, Any]] = []
            for _ in range(100):  # the vectors follow from the embedding batches
                await asyncio.sleep(0.1)
                body = (
                    await client.post("/api/memory/recall", json={"query": "billing postgres"})
                ).json()
                hits = body["results"]
                if body.get("vectorCompleteness") == "complete":
                    break
            for _ in range(100):  # workers start once the server listens
                status = (await client.get("/api/status")).json()
                states = [w["state"] for w in status["workers"].values()]
                tasks = [t["state"] for t in status["startup"].values()]
                if all(s != "pending" for s in states) and all(t == "done" for t in tasks):
                    break
                await asyncio.sleep(0.1)
            await asyncio.sleep(2)  # a few worker rounds on the server
            status = (await client.get("/api/status")).json()
        runtime.request_stop()
        return await asyncio.wait_for(serving, 30), status, hits

    try:
        code, status, hits = asyncio.run(scenario())
    finally:
        runtime.close()
    assert code == 0
    assert hits and hits[0]["content"] == "billing runs on postgres"
    assert hits[0]["source"] == "hybrid"
    assert status["database"]["backend"] == "postgresql" and status["database"]["path"] is None
    workers = status["workers"]
    assert {"embedding", "documents", "hints", "dreaming", "retention"} <= set(workers)
    assert all(w["state"] == "running" and w["error"] is None for w in workers.values()), workers
    startup = status["startup"]
    assert all(t["state"] == "done" and t.get("error") is None for t in startup.values()), startup
    log_text = (paths.logs_dir / "daemon.log").read_text()
    assert "listening on" in log_text and " ERROR " not in log_text, log_text[-3000:]
    assert "PostgreSQL store (preview)" in log_text  # what is and is not proven there, once
    assert not paths.db_path.exists()
