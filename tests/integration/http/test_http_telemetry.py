"""GET/DELETE /api/telemetry/memory-search: opt-in, agent-scoped, refused to agent callers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from http_helpers import make_client

from signet_desktop.api.http.app import create_app
from signet_desktop.api.http.settings import HttpSettings
from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService

pytestmark = pytest.mark.anyio
PATH = "/api/telemetry/memory-search"
ALPHA = {"x-signet-agent-id": "alpha"}


@pytest.fixture
def recording(tmp_path: Path) -> Iterator[SignetService]:
    config = SignetConfig.model_validate({"search": {"telemetry": {"enabled": True}}})
    options = BuildOptions(embedder=HashEmbedder(64), inline_vectors=True)
    svc = build_service(WorkspacePaths.for_root(tmp_path), config, options)
    yield svc
    svc.close()


@pytest.fixture
async def http(recording: SignetService, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(recording, HttpSettings(agents_dir=str(tmp_path)))
    async with make_client(app) as c:
        yield c


async def remember_and_recall(http: httpx.AsyncClient, agent: str, query: str) -> list[str]:
    headers = {"x-signet-agent-id": agent}
    for text in ("billing runs on Postgres 16", "backups run nightly", "svelte frontend"):
        r = await http.post("/api/memory/remember", json={"content": text}, headers=headers)
        assert r.status_code in (200, 201), r.text
    r = await http.post("/api/memory/recall", json={"query": query}, headers=headers)
    return [hit["id"] for hit in r.json()["results"]]


async def test_a_recall_is_recorded_and_read_back(http: httpx.AsyncClient) -> None:
    ids = await remember_and_recall(http, "alpha", "billing postgres")
    r = await http.get(PATH, headers=ALPHA)
    assert r.status_code == 200
    body = r.json()
    assert body["enabled"] is True and body["count"] == 1
    [record] = body["records"]
    assert record["query"] == "billing postgres" and record["agentId"] == "alpha"
    assert [hit["id"] for hit in record["results"]] == ids
    assert "content" not in record["results"][0]


async def test_another_agent_sees_none_of_it(http: httpx.AsyncClient) -> None:
    await remember_and_recall(http, "alpha", "billing postgres")
    r = await http.get(PATH, params={"agentId": "beta"})
    assert r.status_code == 200 and r.json()["records"] == []
    cleared = await http.delete(PATH, headers={"x-signet-agent-id": "beta"})
    assert cleared.json() == {"removed": 0}
    assert (await http.get(PATH, headers=ALPHA)).json()["count"] == 1


async def test_agent_callers_are_refused(http: httpx.AsyncClient) -> None:
    await remember_and_recall(http, "alpha", "billing postgres")
    agent = {**ALPHA, "x-signet-actor-type": "agent"}
    r = await http.get(PATH, headers=agent)
    assert r.status_code == 403 and r.json()["code"] == "analytics_forbidden"
    r = await http.delete(PATH, headers=agent)
    assert r.status_code == 403
    assert (await http.get(PATH, headers=ALPHA)).json()["count"] == 1  # nothing removed


async def test_off_by_default(client: httpx.AsyncClient) -> None:
    await remember_and_recall(client, "alpha", "billing postgres")
    r = await client.get(PATH, headers=ALPHA)
    assert r.json() == {"enabled": False, "records": [], "count": 0}


async def test_bad_parameters_are_refused(http: httpx.AsyncClient) -> None:
    assert (await http.get(PATH, params={"limit": 0})).status_code == 422
    assert (await http.get(PATH, params={"limit": 10_000})).status_code == 422
