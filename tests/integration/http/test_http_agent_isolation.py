"""Agent scope: agent B can neither see, change, delete nor recover agent A's memories."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from http_helpers import memory_row, remember, row_counts

from signet_desktop.service.facade import SignetService

pytestmark = pytest.mark.anyio

A = {"x-signet-agent-id": "agent-a"}
SECRET = "Agent A's deploy key lives in the vault under ops/deploy."


async def a_memory(client: httpx.AsyncClient) -> str:
    created = await remember(client, SECRET, agentId="agent-a", tags=["vault"])
    memory_id: str = created["id"]
    return memory_id


# How agent B names itself: header, query parameter, or body field.
AS_B: list[dict[str, Any]] = [
    {"headers": {"x-signet-agent-id": "agent-b"}},
    {"params": {"agentId": "agent-b"}},
    {},  # no agent at all: the `default` scope is not agent A's either
]


def with_params(who: dict[str, Any], params: dict[str, str]) -> dict[str, Any]:
    """`who` plus extra query parameters."""
    return {**who, "params": {**who.get("params", {}), **params}}


@pytest.mark.parametrize("who", AS_B, ids=["header", "query", "default"])
async def test_b_cannot_read_a(client: httpx.AsyncClient, who: dict[str, Any]) -> None:
    memory_id = await a_memory(client)
    assert (await client.get(f"/api/memory/{memory_id}", **who)).status_code == 404
    history = await client.get(f"/api/memory/{memory_id}/history", **who)
    assert history.status_code == 404
    listing = (await client.get("/api/memories", **who)).json()
    assert listing["memories"] == [] and listing["stats"]["total"] == 0
    search_kwargs = with_params(who, {"q": "deploy vault"})
    search = (await client.get("/api/memory/search", **search_kwargs)).json()
    assert search["results"] == []
    recall = await client.post("/api/memory/recall", json={"query": "deploy key"}, **who)
    assert recall.status_code == 200 and recall.json()["results"] == []


async def test_b_cannot_read_a_naming_itself_in_the_body(client: httpx.AsyncClient) -> None:
    await a_memory(client)
    body = {"query": "deploy key", "agentId": "agent-b"}
    # The body wins over a header that claims agent A.
    recall = await client.post("/api/memory/recall", json=body, headers=A)
    assert recall.json()["results"] == []


@pytest.mark.parametrize("who", AS_B, ids=["header", "query", "default"])
async def test_b_cannot_modify_delete_or_recover_a(
    client: httpx.AsyncClient, service: SignetService, who: dict[str, Any]
) -> None:
    memory_id = await a_memory(client)
    before_row, before = memory_row(service, memory_id), row_counts(service)
    patch = await client.patch(
        f"/api/memory/{memory_id}", json={"tags": ["stolen"], "reason": "r"}, **who
    )
    forced = await client.request(
        "DELETE", f"/api/memory/{memory_id}", json={"reason": "r", "force": True}, **who
    )
    assert patch.status_code == 404 and forced.status_code == 404
    assert memory_row(service, memory_id) == before_row and row_counts(service) == before

    # A deletes it; B still cannot recover (or even see) it.
    deleted = await client.request(
        "DELETE", f"/api/memory/{memory_id}", json={"reason": "rotate"}, headers=A
    )
    assert deleted.status_code == 200
    deleted_row, after_delete = memory_row(service, memory_id), row_counts(service)
    recover = await client.post(f"/api/memory/{memory_id}/recover", json={"reason": "r"}, **who)
    assert recover.status_code == 404
    assert memory_row(service, memory_id) == deleted_row
    assert row_counts(service) == after_delete


async def test_b_cannot_write_into_a_by_body_agent_id(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    memory_id = await a_memory(client)
    before_row = memory_row(service, memory_id)
    body = {"tags": ["stolen"], "reason": "r", "agentId": "agent-b"}
    response = await client.patch(f"/api/memory/{memory_id}", json=body, headers=A)
    assert response.status_code == 404
    assert memory_row(service, memory_id) == before_row


async def test_same_content_in_two_agents_is_two_memories(client: httpx.AsyncClient) -> None:
    first = await remember(client, SECRET, agentId="agent-a")
    second = await remember(client, SECRET, agentId="agent-b")
    assert second["deduped"] is False and second["id"] != first["id"]


async def test_a_still_sees_its_own_memory_everywhere(client: httpx.AsyncClient) -> None:
    memory_id = await a_memory(client)
    assert (await client.get(f"/api/memory/{memory_id}", headers=A)).status_code == 200
    listing = (await client.get("/api/memories", params={"agentId": "agent-a"})).json()
    assert [m["id"] for m in listing["memories"]] == [memory_id]
    search = (await client.get("/api/memory/search", params={"q": "vault"}, headers=A)).json()
    assert [hit["id"] for hit in search["results"]] == [memory_id]
    history = (await client.get(f"/api/memory/{memory_id}/history", headers=A)).json()
    assert history["count"] == 1
