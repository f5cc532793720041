"""MCP knowledge tools on both transports: the HTTP routes' answers, scoped to the caller."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any

import httpx
import pytest
from conftest import Daemon, http_session, ok, refused, stdio_session
from mcp.client.session import ClientSession

pytestmark = pytest.mark.anyio


def seed(daemon: Daemon, agent: str, name: str) -> str:
    headers = {"x-signet-agent-id": agent}
    with httpx.Client(base_url=daemon.url, timeout=10, headers=headers) as http:
        made = http.post("/api/knowledge/entities", json={"name": name, "type": "project"})
        assert made.status_code in (200, 201), made.text
        entity_id = str(made.json()["entity"]["id"])
        claim = http.post(
            f"/api/knowledge/entities/{entity_id}/claims",
            json={"aspect": "status", "content": f"{name} ships in May"},
        )
        assert claim.status_code == 201, claim.text
    return entity_id


def http_detail(daemon: Daemon, agent: str, path: str) -> Any:
    with httpx.Client(base_url=daemon.url, timeout=10) as http:
        return http.get(path, headers={"x-signet-agent-id": agent}).json()


def sessions(
    daemon: Daemon, transport: str, agent: str
) -> AbstractAsyncContextManager[ClientSession]:
    if transport == "http":
        return http_session(daemon.url, agent)
    return stdio_session(daemon.home, daemon.url, "--agent", agent)


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_tools_answer_as_the_routes_and_stay_in_scope(daemon: Daemon, transport: str) -> None:
    owner, other = f"kg-{transport}-a", f"kg-{transport}-b"
    entity_id = seed(daemon, owner, f"Apollo {transport}")
    async with sessions(daemon, transport, owner) as session:
        listed = ok(await session.call_tool("knowledge_list_entities", {"query": "apollo"}))
        detail = ok(await session.call_tool("knowledge_get_entity", {"id": entity_id}))
        typed = ok(await session.call_tool("knowledge_list_entities", {"type": "person"}))
        bad_type = refused(await session.call_tool("knowledge_list_entities", {"type": "planet"}))
        bad_limit = refused(await session.call_tool("knowledge_list_entities", {"limit": "5"}))
        no_id = refused(await session.call_tool("knowledge_get_entity", {}))
    assert [e["id"] for e in listed["items"]] == [entity_id]
    assert listed == http_detail(daemon, owner, "/api/knowledge/entities?q=apollo")
    assert detail == http_detail(daemon, owner, f"/api/knowledge/entities/{entity_id}")
    assert detail["aspects"][0]["attributes"][0]["content"].endswith("ships in May")
    assert typed["items"] == []
    assert bad_type["code"] == "invalid_request" and "person" in bad_type["error"]
    assert bad_limit["code"] == "invalid_request" and no_id["code"] == "invalid_request"
    async with sessions(daemon, transport, other) as session:
        theirs = ok(await session.call_tool("knowledge_list_entities", {}))
        missing = refused(await session.call_tool("knowledge_get_entity", {"id": entity_id}))
    assert theirs["items"] == [] and theirs["total"] == 0
    assert missing["code"] == "entity_not_found" and "Apollo" not in missing["error"]
