"""GET /api/embeddings/projection: 202 while the background run computes, then 200 from cache."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from http_helpers import remember
from support.projection_fakes import FAILING, use_reducer

from signet_desktop.service.facade import SignetService

pytestmark = pytest.mark.anyio

PATH = "/api/embeddings/projection"


async def ready(client: httpx.AsyncClient, **params: Any) -> httpx.Response:
    """Poll like Signet's dashboard until the route stops answering 202."""
    for _ in range(300):
        response = await client.get(PATH, params=params)
        if response.status_code != 202:
            return response
        await asyncio.sleep(0.1)
    raise AssertionError("still computing after 30 s")


async def seed(client: httpx.AsyncClient, count: int, **fields: Any) -> list[str]:
    topics = ["postgres billing ledger", "kubernetes deploy helm", "react css layout"]
    ids = []
    for i in range(count):
        body = await remember(
            client, f"{topics[i % 3]} note {i}", tags=[topics[i % 3].split()[0]], **fields
        )
        ids.append(body["id"])
    return ids


async def test_computing_then_ready(client: httpx.AsyncClient, service: SignetService) -> None:
    use_reducer(service)
    ids = await seed(client, 6)
    first = await client.get(PATH, params={"dimensions": 2})
    assert first.status_code == 202
    body = first.json()
    assert body["status"] == "computing" and body["dimensions"] == 2 and body["total"] == 6
    assert body["progress"]["state"] == "running"
    response = await ready(client, dimensions=2)
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ready" and body["method"] == "umap" and body["cachedAt"]
    assert body["count"] == body["total"] == 6 and body["hasMore"] is False
    assert sorted(n["id"] for n in body["nodes"]) == sorted(ids)
    node = body["nodes"][0]
    assert set(node) >= {"x", "y", "content", "who", "importance", "type", "tags", "pinned"}
    assert "z" not in node and node["sourceType"] == "memory"
    assert all(0 <= a < 6 and 0 <= b < 6 for a, b in body["edges"])
    again = await client.get(PATH)  # dimensions defaults to 2; served from the cache
    assert again.status_code == 200 and again.json()["cachedAt"] == body["cachedAt"]


async def test_three_dimensions_have_z(client: httpx.AsyncClient, service: SignetService) -> None:
    use_reducer(service)
    await seed(client, 4)
    assert (await client.get(PATH, params={"dimensions": 3})).status_code == 202
    body = (await ready(client, dimensions=3)).json()
    assert all("z" in node for node in body["nodes"])


async def test_few_vectors_are_ready_at_once(client: httpx.AsyncClient) -> None:
    empty = await client.get(PATH)
    assert empty.status_code == 200 and empty.json()["nodes"] == []
    await seed(client, 2)
    two = await client.get(PATH)
    assert two.status_code == 200 and two.json()["method"] == "trivial"
    assert len(two.json()["nodes"]) == 2


@pytest.mark.parametrize("value", ["4", "0", "two", "2.5"])
async def test_bad_dimensions_are_422_and_start_nothing(
    client: httpx.AsyncClient, service: SignetService, value: str
) -> None:
    use_reducer(service)
    await seed(client, 4)
    response = await client.get(PATH, params={"dimensions": value})
    assert response.status_code == 422 and response.json()["code"] == "invalid_request"
    assert service.projection.job_status("default").state == "idle"


async def test_agents_are_scoped(client: httpx.AsyncClient, service: SignetService) -> None:
    use_reducer(service)
    await seed(client, 4, agentId="alpha")
    other = await client.get(PATH, params={"agentId": "beta"})
    assert other.status_code == 200 and other.json()["nodes"] == []
    header = await client.get(PATH, headers={"x-signet-agent-id": "alpha"})
    assert header.status_code == 202
    body = (await ready(client, agentId="alpha")).json()
    assert len(body["nodes"]) == 4
    bad = await client.get(PATH, params={"agentId": "bad agent!"})
    assert bad.status_code in (400, 422)


async def test_a_failed_run_is_503(client: httpx.AsyncClient, service: SignetService) -> None:
    use_reducer(service, FAILING)
    await seed(client, 4)
    assert (await client.get(PATH)).status_code == 202
    response = await ready(client)
    assert response.status_code == 503
    assert response.json()["code"] == "projection_failed"
    assert "MemoryError" in response.json()["error"]


async def test_the_document_declares_202_and_503(client: httpx.AsyncClient) -> None:
    document = (await client.get("/openapi.json")).json()
    responses = document["paths"][PATH]["get"]["responses"]
    assert {"200", "202", "503"} <= set(responses)
