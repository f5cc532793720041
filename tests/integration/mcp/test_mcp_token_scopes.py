"""Scoped tokens hold over both MCP transports: `signet-mcp` (stdio, through the routes) and
`/mcp` (in-process), on a real daemon: permission, agent binding, revocation."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import httpx2
import pytest
from conftest import Daemon, ok, refused, stdio_session
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

pytestmark = pytest.mark.anyio


def _issue(daemon: Daemon, name: str, permissions: list[str], agent: str) -> str:
    body = {"name": name, "permissions": permissions, "agents": [agent]}
    created = httpx.post(f"{daemon.url}/api/tokens", json=body, timeout=10)
    assert created.status_code == 201, created.text
    secret: str = created.json()["secret"]
    return secret


@asynccontextmanager
async def _http(url: str, headers: dict[str, str]) -> AsyncIterator[ClientSession]:
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def test_a_read_token_reads_its_agent_and_writes_nothing_over_stdio(daemon: Daemon) -> None:
    secret = _issue(daemon, "mcp-stdio-read", ["read"], "mcp-scoped-a")
    before = daemon.counts()
    async with stdio_session(daemon.home, daemon.url, env={"SIGNET_TOKEN": secret}) as session:
        found = ok(await session.call_tool("memory_search", {"query": "anything"}))
        assert found["results"] == []
        store = await session.call_tool("memory_store", {"content": "not with a read token"})
        assert refused(store)["code"] == "permission_denied"
    async with stdio_session(
        daemon.home, daemon.url, "--agent", "mcp-scoped-b", env={"SIGNET_TOKEN": secret}
    ) as session:
        other = await session.call_tool("memory_search", {"query": "anything"})
        assert refused(other)["code"] == "agent_not_allowed"
    assert daemon.counts() == before


async def test_a_write_token_stores_for_its_own_agent_over_http(daemon: Daemon) -> None:
    secret = _issue(daemon, "mcp-http-write", ["read", "write"], "mcp-scoped-w")
    bearer = {"authorization": f"Bearer {secret}"}
    async with _http(daemon.url, bearer) as session:
        stored = ok(await session.call_tool("memory_store", {"content": "kept for w"}))
    assert daemon.memory(stored["id"])["agent_id"] == "mcp-scoped-w"  # type: ignore[index]
    before = daemon.counts()
    async with _http(daemon.url, {**bearer, "x-signet-agent-id": "default"}) as session:
        other = await session.call_tool("memory_store", {"content": "into default"})
        assert refused(other)["code"] == "agent_not_allowed"
    assert daemon.counts() == before


async def test_a_revoked_token_opens_nothing_over_stdio(daemon: Daemon) -> None:
    secret = _issue(daemon, "mcp-revoked", ["read", "write"], "mcp-scoped-r")
    assert httpx.delete(f"{daemon.url}/api/tokens/mcp-revoked", timeout=10).status_code == 200
    before = daemon.counts()
    async with stdio_session(daemon.home, daemon.url, env={"SIGNET_TOKEN": secret}) as session:
        gone = await session.call_tool("memory_store", {"content": "after revocation"})
        assert refused(gone)["code"] == "token_revoked"
    assert daemon.counts() == before


async def test_resources_and_prompts_hold_to_the_tokens_agent_over_http(daemon: Daemon) -> None:
    secret = _issue(daemon, "mcp-http-resources", ["read"], "mcp-scoped-res")
    bearer = {"authorization": f"Bearer {secret}"}
    async with _http(daemon.url, bearer) as session:  # its one agent
        recent = await session.read_resource("memory://memories/recent")
        prompt = await session.get_prompt("recall_before_starting", {"topic": "anything"})
    assert recent.contents and prompt.messages
    async with _http(daemon.url, {**bearer, "x-signet-agent-id": "default"}) as session:
        for read in (
            session.read_resource("memory://memories/recent"),
            session.get_prompt("recall_before_starting", {"topic": "anything"}),
        ):
            with pytest.raises(MCPError) as refused:
                await read
            assert refused.value.code == INVALID_PARAMS
            assert refused.value.data == {"code": "agent_not_allowed"}
