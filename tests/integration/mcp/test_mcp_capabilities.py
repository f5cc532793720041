"""Issue 26's MCP surface on both transports against a real daemon: protocol errors, structured
results for every tool, memory_feedback, session_bypass (the hooks then inject nothing),
knowledge_expand, and the memory:// resources and prompts, each scoped to the caller."""

from __future__ import annotations

import json
from contextlib import AbstractAsyncContextManager
from typing import Any

import httpx
import mcp_types as types
import pytest
from conftest import Daemon, http_session, ok, stdio_session
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from mcp_scenarios import retain_session

from signet_desktop.api.mcp.knowledge_tools import EXPANDED
from signet_desktop.api.mcp.tools import TOOLS, as_data
from signet_desktop.safety.defang import DATA_NOTE

pytestmark = pytest.mark.anyio
TRANSPORTS = ["http", "stdio"]


def session_for(
    daemon: Daemon, transport: str, agent: str
) -> AbstractAsyncContextManager[ClientSession]:
    if transport == "http":
        return http_session(daemon.url, agent)
    return stdio_session(daemon.home, daemon.url, "--agent", agent)


def post(daemon: Daemon, path: str, body: dict[str, Any], agent: str) -> Any:
    with httpx.Client(base_url=daemon.url, timeout=10) as http:
        answer = http.post(path, json=body, headers={"x-signet-agent-id": agent})
    assert answer.status_code in (200, 201), answer.text
    return answer.json()


def seed_apollo(daemon: Daemon, agent: str) -> str:
    structured = {
        "entities": [{"name": "Apollo", "type": "project"}],
        "aspects": [{"entity": "Apollo", "name": "storage", "claims": ["billing in Postgres"]}],
    }
    body = {"content": "Apollo keeps billing in Postgres, see https://db.example/x?k=1"}
    stored = post(daemon, "/api/memory/remember", {**body, "structured": structured}, agent)
    return str(stored["id"])


async def call(session: ClientSession, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A successful call: its structured content validates and is the text's JSON."""
    result = await session.call_tool(name, arguments)  # the SDK client validates already
    answer = ok(result)
    await session.validate_tool_result(name, result)
    assert result.structured_content == answer
    return answer


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_an_unknown_tool_is_a_protocol_error(daemon: Daemon, transport: str) -> None:
    before = daemon.counts()
    async with session_for(daemon, transport, "proto") as session:
        with pytest.raises(MCPError) as refused:
            await session.call_tool("memory_remember", {"content": "x"})
        assert ok(await session.call_tool("memory_list", {"limit": 1}))["memories"] == []
    assert refused.value.code == types.INVALID_PARAMS
    assert refused.value.message == "Unknown tool: memory_remember"
    assert daemon.counts() == before


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_every_tool_answers_structured_content(daemon: Daemon, transport: str) -> None:
    agent = f"structured-{transport}"
    retain_session(daemon, agent, f"{agent}-s1", "we moved billing to Postgres today")
    called: set[str] = set()
    async with session_for(daemon, transport, agent) as session:
        tools = (await session.list_tools()).tools
        assert all(tool.output_schema for tool in tools)

        async def run(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            called.add(name)
            return await call(session, name, arguments)

        memory_id = (await run("memory_store", {"content": "Apollo bills in euros"}))["id"]
        await run("memory_search", {"query": "Apollo euros", "expand": True})
        await run("memory_get", {"id": memory_id})
        await run("memory_list", {})
        await run("memory_modify", {"id": memory_id, "reason": "r", "importance": 0.8})
        await run("memory_feedback", {"session_key": "s", "ratings": {memory_id: 1}})
        found = await run("session_search", {"query": "billing Postgres"})
        assert [hit["sessionKey"] for hit in found["hits"]] == [f"{agent}-s1"]
        await run("session_bypass", {"session_key": "s", "enabled": False})
        seed_apollo(daemon, agent)
        listed = await run("knowledge_list_entities", {})
        await run("knowledge_get_entity", {"id": listed["items"][0]["id"]})
        await run("knowledge_expand", {"entity_name": "Apollo"})
        await run("memory_forget", {"id": memory_id, "reason": "done"})
        await run("secret_list", {})
    assert called == set(TOOLS)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_feedback_is_recorded_for_the_callers_memories(
    daemon: Daemon, transport: str
) -> None:
    agent = f"rater-{transport}"
    mine = post(daemon, "/api/memory/remember", {"content": f"{agent} memory"}, agent)["id"]
    theirs = post(daemon, "/api/memory/remember", {"content": "other's"}, f"{agent}-x")["id"]
    async with session_for(daemon, transport, agent) as session:
        rated = await call(session, "memory_feedback", {"session_key": "k", "ratings": {mine: -1}})
        before = daemon.counts()
        refused = await session.call_tool(
            "memory_feedback", {"session_key": "k", "ratings": {mine: 1, theirs: 1}}
        )
    assert rated["recorded"] == 1 and rated["ratings"][0]["score"] == -1
    assert refused.is_error and daemon.counts() == before
    rows = daemon.rows(
        "SELECT agent_id, session_key, score, ratings FROM memory_feedback WHERE memory_id = :m",
        m=mine,
    )
    assert rows == [(agent, "k", -1.0, 1)]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_after_bypass_the_hooks_inject_nothing(daemon: Daemon, transport: str) -> None:
    agent, fact = f"bypass-{transport}", "The Hermes deploy window is Friday 14:00 UTC"
    post(daemon, "/api/memory/remember", {"content": fact}, agent)
    key = f"{agent}-session"
    async with session_for(daemon, transport, agent) as session:
        bypassed = await call(session, "session_bypass", {"session_key": key, "enabled": True})
    assert bypassed == {"sessionKey": key, "bypassed": True}
    hook = {"harness": "claude-code", "sessionKey": key, "agentId": agent}
    start = post(daemon, "/api/hooks/session-start", hook, agent)
    prompt = post(
        daemon, "/api/hooks/user-prompt-submit", {**hook, "userPrompt": "Hermes deploy?"}, agent
    )
    native = post(
        daemon, "/api/hooks/claude-code/session-start", {"session_id": key, "cwd": "/w"}, agent
    )
    assert (start["inject"], start["bypassed"]) == ("", True)
    assert (prompt["inject"], prompt["bypassed"]) == ("", True)
    assert native == {}
    control = post(daemon, "/api/hooks/session-start", {**hook, "sessionKey": "other"}, agent)
    assert fact in control["inject"]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_knowledge_expand_is_the_route_as_data(daemon: Daemon, transport: str) -> None:
    agent = f"expand-{transport}"
    memory_id = seed_apollo(daemon, agent)
    route = post(daemon, "/api/knowledge/expand", {"entity": "Apollo"}, agent)
    async with session_for(daemon, transport, agent) as session:
        expanded = await call(session, "knowledge_expand", {"entity_name": "Apollo"})
    async with session_for(daemon, transport, f"{agent}-other") as other:
        missing = await other.call_tool("knowledge_expand", {"entity_name": "Apollo"})
    assert expanded == json.loads(as_data(json.dumps(route), EXPANDED))
    assert expanded["note"] == DATA_NOTE and expanded["memories"][0]["id"] == memory_id
    assert "k=1" not in expanded["memories"][0]["content"]
    assert missing.is_error and "entity_not_found" in missing.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_resources_and_prompts_serve_only_the_caller(daemon: Daemon, transport: str) -> None:
    agent = f"reader-{transport}"
    memory_id = seed_apollo(daemon, agent)
    retain_session(daemon, agent, f"{agent}-s1", "Apollo moved billing to Postgres")
    async with session_for(daemon, transport, agent) as session:
        resources = {r.uri for r in (await session.list_resources()).resources}
        one = await session.read_resource(f"memory://memories/{memory_id}")
        transcript = await session.read_resource(f"memory://sessions/{agent}-s1/transcript")
        prompt = await session.get_prompt("recall_before_starting", {"topic": "Apollo billing"})
    assert resources == {"memory://memories/recent", "memory://sessions/recent"}
    assert json.loads(one.contents[0].text)["id"] == memory_id  # type: ignore[union-attr]
    turns = json.loads(transcript.contents[0].text)["turns"]  # type: ignore[union-attr]
    assert turns[0]["text"] == "Apollo moved billing to Postgres"
    assert "Apollo keeps billing in Postgres" in prompt.messages[0].content.text  # type: ignore[union-attr]
    async with session_for(daemon, transport, f"{agent}-other") as other:
        for uri in (f"memory://memories/{memory_id}", f"memory://sessions/{agent}-s1/transcript"):
            with pytest.raises(MCPError) as refused:
                await other.read_resource(uri)
            assert refused.value.code == types.INVALID_PARAMS
        recent = await other.read_resource("memory://memories/recent")
        their_prompt = await other.get_prompt("recall_before_starting", {"topic": "Apollo"})
    assert json.loads(recent.contents[0].text)["memories"] == []  # type: ignore[union-attr]
    assert "billing" not in their_prompt.messages[0].content.text  # type: ignore[union-attr]


def test_malformed_call_params_are_invalid_params_over_http(daemon: Daemon) -> None:
    """A `tools/call` that does not fit the request schema never reaches a tool."""
    accept = {"accept": "application/json, text/event-stream"}
    before = daemon.counts()
    with httpx.Client(base_url=daemon.url, timeout=10) as http:
        for params in (
            {"name": "memory_store", "arguments": ["content", "x"]},
            {"arguments": {"content": "x"}},
            {"name": 5, "arguments": {}},
        ):
            call_ = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
            answer = http.post("/mcp", json=call_, headers=accept).json()
            assert answer["id"] == 7 and answer["error"]["code"] == types.INVALID_PARAMS, answer
        unknown = {"name": "nope", "arguments": {}}
        answer = http.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": unknown},
            headers=accept,
        ).json()
    assert answer["error"] == {"code": types.INVALID_PARAMS, "message": "Unknown tool: nope"}
    assert daemon.counts() == before
