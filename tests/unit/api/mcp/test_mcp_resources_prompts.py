"""MCP resources (`memory://`) and prompts, in-process: scoped to the caller, texts as data,
protocol errors where the spec puts them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.client.client import Client
from mcp.shared.exceptions import MCPError
from support.mcp_inprocess import built_service, counts, mcp_client

from signet_desktop.domain.memory import Actor
from signet_desktop.domain.sessions import Turn
from signet_desktop.safety.defang import DATA_NOTE
from signet_desktop.service.facade import SignetService
from signet_desktop.service.hooks.service import HookContext
from signet_desktop.service.memories.service import RememberRequest

pytestmark = pytest.mark.anyio

SECRET = "alice's deploy runbook lives at https://wiki.example/runbook?token=abc"


@pytest.fixture
def service(tmp_path: Path) -> Iterator[SignetService]:
    with built_service(tmp_path) as svc:
        yield svc


def _remember(service: SignetService, agent: str, content: str) -> str:
    outcome = service.memories.remember(RememberRequest(agent_id=agent, content=content), Actor())
    return outcome.memory.id


def _retain(service: SignetService, agent: str, key: str, text: str) -> None:
    turns = [Turn("t1", "user", text), Turn("t2", "assistant", "Noted.")]
    ended = service.hooks.session_end(HookContext(agent, "claude-code", key), turns=turns)
    assert ended.capture is not None


async def _read(client: Client, uri: str) -> dict[str, Any]:
    result = await client.read_resource(uri)
    assert isinstance(result, types.ReadResourceResult)
    (content,) = result.contents
    assert isinstance(content, types.TextResourceContents)
    assert content.uri == uri and content.mime_type == "application/json"
    body: dict[str, Any] = json.loads(content.text)
    return body


async def test_lists_resources_templates_and_prompts(service: SignetService) -> None:
    async with mcp_client(service) as client:
        resources = (await client.list_resources()).resources
        templates = (await client.list_resource_templates()).resource_templates
        prompts = (await client.list_prompts()).prompts
    assert [r.uri for r in resources] == ["memory://memories/recent", "memory://sessions/recent"]
    assert [t.uri_template for t in templates] == [
        "memory://memories/{id}",
        "memory://sessions/{session_key}/transcript",
    ]
    assert {p.name: [a.name for a in p.arguments or ()] for p in prompts} == {
        "recall_before_starting": ["topic"],
        "remember_decision": ["decision", "why"],
    }


async def test_resources_serve_the_callers_data_as_data(service: SignetService) -> None:
    memory_id = _remember(service, "alice", SECRET)
    _retain(service, "alice", "alice-s1", "we ship from https://ci.example/job?id=7 on Fridays")
    async with mcp_client(service, "alice") as alice:
        recent = await _read(alice, "memory://memories/recent")
        one = await _read(alice, f"memory://memories/{memory_id}")
        sessions = await _read(alice, "memory://sessions/recent")
        transcript = await _read(alice, "memory://sessions/alice-s1/transcript")
    assert recent["note"] == DATA_NOTE and [m["id"] for m in recent["memories"]] == [memory_id]
    assert recent["stats"]["total"] == 1
    assert one["note"] == DATA_NOTE and one["id"] == memory_id and one["agent_id"] == "alice"
    # Recalled text is defanged: the link is inert, its query string gone.
    assert "hxxps://wiki[.]example/runbook" in one["content"] and "token=abc" not in one["content"]
    assert [s["sessionKey"] for s in sessions["sessions"]] == ["alice-s1"]
    assert [t["role"] for t in transcript["turns"]] == ["user", "assistant"]
    assert "id=7" not in transcript["turns"][0]["text"]


async def test_another_agent_reads_nothing_through_resources(service: SignetService) -> None:
    memory_id = _remember(service, "alice", SECRET)
    _retain(service, "alice", "alice-s1", "the launch code is 0000")
    async with mcp_client(service, "bob") as bob:
        for uri, code in (
            (f"memory://memories/{memory_id}", "not_found"),
            ("memory://sessions/alice-s1/transcript", "session_not_found"),
        ):
            with pytest.raises(MCPError) as refused:
                await bob.read_resource(uri)
            assert refused.value.code == types.INVALID_PARAMS
            assert refused.value.data == {"code": code}
            assert "deploy" not in refused.value.message
        recent = await _read(bob, "memory://memories/recent")
        sessions = await _read(bob, "memory://sessions/recent")
    assert recent["memories"] == [] and recent["stats"]["total"] == 0
    assert sessions["sessions"] == []


@pytest.mark.parametrize(
    "uri",
    [
        "memory://memories/no-such-id",
        "memory://nowhere/x",
        "memory://memories/a/b",
        "memory://sessions/k/turns",
        "memory://memories/%2F",
        "memory://memories/x?y=1",
        "file:///etc/passwd",
        "memory://memories/%00",
    ],
)
async def test_a_uri_not_served_is_invalid_params(service: SignetService, uri: str) -> None:
    before = counts(service)
    async with mcp_client(service) as client:
        with pytest.raises(MCPError) as refused:
            await client.read_resource(uri)
    assert refused.value.code == types.INVALID_PARAMS
    assert counts(service) == before


async def test_recall_prompt_quotes_the_callers_memories_as_data(service: SignetService) -> None:
    _remember(service, "alice", "Billing runs on Postgres 16, see https://db.example/x?k=1")
    _remember(service, "bob", "Billing secret of bob: Postgres password hunter2")
    async with mcp_client(service, "alice") as alice:
        got = await alice.get_prompt("recall_before_starting", {"topic": "billing Postgres"})
    (message,) = got.messages
    assert message.role == "user" and isinstance(message.content, types.TextContent)
    text = message.content.text
    assert "Billing runs on Postgres 16" in text and DATA_NOTE in text
    assert "hunter2" not in text and "k=1" not in text
    assert "knowledge_expand" in text


async def test_remember_prompt_asks_for_memory_store_and_writes_nothing(
    service: SignetService,
) -> None:
    before = counts(service)
    async with mcp_client(service) as client:
        got = await client.get_prompt(
            "remember_decision", {"decision": "Use Postgres for billing", "why": "ACID"}
        )
    text = got.messages[0].content.text  # type: ignore[union-attr]
    assert '"type": "decision"' in text and "memory_store" in text and "memory_search" in text
    assert "Decision: Use Postgres for billing Why: ACID" in text
    assert counts(service) == before


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("recall_before_starting", {}, "Missing required argument: topic"),
        ("recall_before_starting", {"topic": "   "}, "Missing required argument: topic"),
        ("remember_decision", {"why": "x"}, "Missing required argument: decision"),
        ("remember_decision", {"decision": "a\x00b"}, "decision: must not contain control"),
        ("remember_decision", {"decision": "x" * 5000}, "decision is longer than 4000"),
        ("no_such_prompt", {}, "Unknown prompt: no_such_prompt"),
    ],
)
async def test_bad_prompt_requests_are_invalid_params(
    service: SignetService, name: str, arguments: dict[str, str], message: str
) -> None:
    async with mcp_client(service) as client:
        with pytest.raises(MCPError) as refused:
            await client.get_prompt(name, arguments)
    assert refused.value.code == types.INVALID_PARAMS
    assert refused.value.message.startswith(message)
