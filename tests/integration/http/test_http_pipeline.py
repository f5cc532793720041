"""/api/pipeline/status, /pause and /resume over HTTP, acting on a real threads host."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from http_helpers import make_client, remember
from support.fakes import SwitchableEmbedder

from signet_desktop.api.http.app import create_app
from signet_desktop.api.http.settings import HttpSettings
from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.daemon.workers import WorkerThreads
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService

pytestmark = pytest.mark.anyio

STATUS = "/api/pipeline/status"
STATES = {"pending", "leased", "completed", "failed", "dead"}
FAST_TRACKER = {"memory": {"pipelineV2": {"embeddingTracker": {"pollMs": 1000}}}}


@pytest.fixture
def embedder() -> SwitchableEmbedder:
    return SwitchableEmbedder()


@pytest.fixture
def service(tmp_path: Path, embedder: SwitchableEmbedder) -> Iterator[SignetService]:
    config = SignetConfig.model_validate(FAST_TRACKER)
    svc = build_service(
        WorkspacePaths.for_root(tmp_path),
        config,
        BuildOptions(embedder=embedder, inline_vectors=True),
    )
    yield svc
    svc.close()


@pytest.fixture
def host(service: SignetService) -> Iterator[WorkerThreads]:
    """The daemon's threads host over the service's declared workers, attached and started."""
    workers = WorkerThreads(service.pipeline.workers, service.events)
    service.pipeline.attach(workers)
    workers.start()
    yield workers
    assert workers.stop(10)
    service.pipeline.detach()


@pytest.fixture
async def client(service: SignetService, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    async with make_client(create_app(service, HttpSettings(agents_dir=str(tmp_path)))) as c:
        yield c


async def status_until(client: httpx.AsyncClient, check: Any, timeout: float = 10) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        body = (await client.get(STATUS)).json()
        if check(body):
            return body
        assert time.monotonic() < deadline, f"pipeline never reached the state: {body}"
        await asyncio.sleep(0.02)


async def test_status_lists_declared_workers_and_queue_counts(
    client: httpx.AsyncClient,
) -> None:
    response = await client.get(STATUS)
    assert response.status_code == 200
    body = response.json()
    assert (body["mode"], body["paused"], body["hosted"]) == ("controlled-write", False, False)
    assert body["workers"]["embedding"]["state"] == "pending"
    assert body["workers"]["embedding"]["jobTypes"] == ["embedding_backfill"]
    assert body["queues"] == {"memory": dict.fromkeys(STATES, 0)}
    assert body["jobTypes"] == {}


async def test_pause_holds_jobs_and_resume_runs_them(
    client: httpx.AsyncClient,
    service: SignetService,
    embedder: SwitchableEmbedder,
    host: WorkerThreads,
) -> None:
    await status_until(client, lambda b: b["workers"]["embedding"]["state"] == "running")
    paused = await client.post("/api/pipeline/pause")
    assert paused.status_code == 200
    assert paused.json()["mode"] == "paused" and paused.json()["workers"]["embedding"]["paused"]
    await status_until(client, lambda b: b["workers"]["embedding"]["state"] == "paused")

    embedder.down = True
    await remember(client, "saved while the embedder was down")
    embedder.down = False
    await asyncio.sleep(0.1)
    body = (await client.get(STATUS)).json()
    assert body["queues"]["memory"]["pending"] == 1, "a paused pipeline takes no jobs"
    assert body["jobTypes"]["embedding_backfill"]["pending"] == 1

    resumed = await client.post("/api/pipeline/resume")
    assert resumed.status_code == 200 and resumed.json()["mode"] == "controlled-write"
    done = await status_until(client, lambda b: b["queues"]["memory"]["completed"] == 1)
    assert done["workers"]["embedding"]["state"] == "running"
    assert service.status().process["workers"]["embedding"]["state"] == "running"


async def test_a_pause_before_the_host_attaches_applies_to_it(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    assert (await client.post("/api/pipeline/pause")).json()["mode"] == "paused"
    workers = WorkerThreads(service.pipeline.workers, service.events)
    service.pipeline.attach(workers)
    workers.start()
    try:
        body = await status_until(client, lambda b: b["workers"]["embedding"]["state"] == "paused")
        assert body["hosted"] is True
    finally:
        assert workers.stop(10)


async def test_wrong_method_is_a_json_error(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/pipeline/pause")
    assert response.status_code == 405
    assert response.json()["code"] == "method_not_allowed"
