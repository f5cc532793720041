"""Signet's `embed audit|backfill` routes: /api/repair/embedding-gaps and /api/repair/re-embed."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from support.fakes import ScriptedEmbedder

from signet_desktop.api.http.app import create_app
from signet_desktop.api.http.settings import HttpSettings
from signet_desktop.domain.memory import Actor
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def client(service: SignetService, tmp_path: object) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(service, HttpSettings(agents_dir=str(tmp_path)))
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:3850") as c:
        yield c


async def test_gaps_and_re_embed(
    client: httpx.AsyncClient, service: SignetService, embedder: ScriptedEmbedder
) -> None:
    service.memories.remember(RememberRequest(content="embedded now"), Actor())
    embedder.mode = "down"
    for text in ("one", "two", "three"):
        service.memories.remember(RememberRequest(content=text), Actor())
    gaps = (await client.get("/api/repair/embedding-gaps")).json()
    assert gaps == {"unembedded": 3, "total": 4, "coverage": "25.0%", "generation": 1}
    dry = (await client.post("/api/repair/re-embed", json={"batchSize": 2, "dryRun": True})).json()
    assert dry["action"] == "reEmbedMissingVectors" and dry["success"] is True
    assert dry["affected"] == 2 and dry["dryRun"] is True
    down = await client.post("/api/repair/re-embed", json={"batchSize": 2})
    assert down.status_code == 503
    embedder.mode = "ok"
    done = await client.post("/api/repair/re-embed", json={"batchSize": 2, "mode": "ignored"})
    assert done.status_code == 200 and done.json()["affected"] == 2
    assert (await client.get("/api/repair/embedding-gaps")).json()["unembedded"] == 1
    default = (await client.post("/api/repair/re-embed")).json()
    assert default["affected"] == 1 and default["success"] is True
    bad = await client.post("/api/repair/re-embed", json={"batchSize": 0})
    assert bad.status_code == 422
