"""The HTTP side of `signet embed audit|backfill` and `signet repair resync-vec`."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from support.db import database_of
from support.fakes import ScriptedEmbedder

from signet_desktop.api.http.app import create_app
from signet_desktop.api.http.routes import embeddings as embedding_routes
from signet_desktop.api.http.settings import HttpSettings
from signet_desktop.domain.memory import Actor
from signet_desktop.embedding import vectors
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def client(service: SignetService, tmp_path: object) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(service, HttpSettings(agents_dir=str(tmp_path)))
    if not any(getattr(r, "path", "") == "/api/embeddings/status" for r in app.routes):
        app.include_router(embedding_routes.router)  # until app.py registers it
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:3850") as c:
        yield c


def remember(service: SignetService, *texts: str) -> None:
    for text in texts:
        service.memories.remember(RememberRequest(content=text), Actor())


async def test_status_reports_generations_coverage_mirror_and_jobs(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    remember(service, "postgres for billing", "svelte for the frontend")
    response = await client.get("/api/embeddings/status")
    assert response.status_code == 200
    body = response.json()
    assert body["provider"] == "scripted" and body["dimensions"] == 64
    assert body["coverage"]["embedded"] == 2 and body["coverage"]["ratio"] == 1.0
    assert [g["status"] for g in body["generations"]] == ["active"]
    assert body["mirror"]["missing"] == 0 and body["jobs"]["pending"] == 0
    status = (await client.get("/api/status")).json()["embedding"]
    assert status["model"] == "scripted-64" and status["coverage"]["total"] == 2


async def test_backfill_embeds_what_is_missing(
    client: httpx.AsyncClient, service: SignetService, embedder: ScriptedEmbedder
) -> None:
    embedder.mode = "down"
    remember(service, "one", "two", "three")
    down = await client.post("/api/embeddings/backfill", json={"limit": 10})
    assert down.status_code == 503 and "embedder unavailable" in down.json()["error"]
    dry = await client.post("/api/embeddings/backfill", json={"dryRun": True})
    assert dry.json() == {"dryRun": True, "generation": 1, "missing": 3}
    embedder.mode = "ok"
    done = await client.post("/api/embeddings/backfill")
    assert done.status_code == 200 and done.json()["embedded"] == 3
    assert done.json()["coverage"]["missing"] == 0


@pytest.mark.parametrize(
    "body", [{"limit": 0}, {"limit": 10_001}, {"limit": "5"}, {"dryRun": "yes"}, {"bogus": 1}]
)
async def test_backfill_refuses_bad_input(
    client: httpx.AsyncClient, service: SignetService, body: dict[str, object]
) -> None:
    remember(service, "kept")
    response = await client.post("/api/embeddings/backfill", json=body)
    assert response.status_code in (400, 422)
    assert "error" in response.json()


async def test_resync_restores_the_mirror(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    remember(service, "alpha note", "beta note", "gamma note")
    generation = service.embeddings.parts.tracker.generation  # type: ignore[union-attr]
    with database_of(service).write() as conn:
        vectors.remove_from_mirror(conn, generation, sorted(vectors.mirror_ids(conn, generation)))
    dry = await client.post("/api/repair/resync-vec", json={"dryRun": True})
    assert dry.status_code == 200 and dry.json()["added"] == 3 and dry.json()["dryRun"]
    assert len(vectors.mirror_ids(database_of(service).reader(), generation)) == 0
    done = await client.post("/api/repair/resync-vec")
    assert done.status_code == 200 and done.json()["added"] == 3
    assert len(vectors.mirror_ids(database_of(service).reader(), generation)) == 3
    full = await client.post("/api/repair/resync-vec", json={"full": True})
    assert full.json()["rebuilt"] is True


async def test_resync_of_an_unknown_generation_is_404(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/repair/resync-vec", json={"generation": 42})
    assert response.status_code == 404
