"""The real thing: DaemonRuntime serving the API (main.http_app) with uvicorn on a socket."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx

from signet_desktop.daemon.runtime import DaemonRuntime, RuntimeOptions
from signet_desktop.main import http_app


def test_daemon_serves_the_api_over_a_socket(tmp_path: Path) -> None:
    runtime = DaemonRuntime(
        RuntimeOptions(
            app_factory=http_app,
            workspace=str(tmp_path),
            port=0,
            env={},
            log_to_stderr=False,
        )
    )
    runtime.open()

    async def scenario() -> dict[str, Any]:
        ready = asyncio.Event()
        runtime.on_ready(ready.set)
        serving = asyncio.create_task(runtime.serve())
        await asyncio.wait_for(ready.wait(), 10)
        seen: dict[str, Any] = {}
        # The first recall loads the native model: ~2 s of CPU, which took longer than 10 s
        # with 8 test workers on 2 cores at load 15. A bound against a hang, not a speed check.
        async with httpx.AsyncClient(base_url=runtime.url, timeout=120) as client:
            seen["health"] = (await client.get("/health")).json()
            created = await client.post(
                "/api/memory/remember", json={"content": "Served over a real socket."}
            )
            seen["remember"] = created.status_code
            recall = await client.post("/api/memory/recall", json={"query": "socket"})
            seen["recall"] = [hit["content"] for hit in recall.json()["results"]]
            foreign = await client.get("/health", headers={"host": "evil.example"})
            seen["foreign_host"] = foreign.status_code
            big = await client.post("/api/memory/remember", json={"content": "x" * 2_000_000})
            seen["too_big"] = big.status_code
            seen["status"] = (await client.get("/api/status")).json()
        runtime.request_stop()
        seen["exit"] = await asyncio.wait_for(serving, 15)
        return seen

    try:
        seen = asyncio.run(scenario())
    finally:
        runtime.close()
    assert seen["exit"] == 0
    assert seen["health"]["status"] == "healthy" and seen["health"]["port"] == runtime.port
    assert seen["health"]["agentsDir"] == str(tmp_path)
    assert seen["remember"] == 200
    assert seen["recall"] == ["Served over a real socket."]
    assert seen["foreign_host"] == 403
    assert seen["too_big"] == 413
    assert seen["status"]["runtime"]["port"] == runtime.port
