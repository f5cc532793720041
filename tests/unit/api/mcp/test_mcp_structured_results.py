"""Every tool declares an outputSchema, and a call's structuredContent validates against it.

The SDK's own client checks each successful call against the listed schema (a mismatch raises);
these tests also check it explicitly, show the check can fail, and cover every tool.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.client.client import Client
from pydantic import SecretStr
from support.mcp_inprocess import built_service, mcp_client

from signet_desktop.api.mcp.tools import TOOLS
from signet_desktop.domain.memory import Actor
from signet_desktop.service.facade import SignetService

pytestmark = pytest.mark.anyio


@pytest.fixture
def service(tmp_path: Path) -> Iterator[SignetService]:
    with built_service(tmp_path) as svc:
        yield svc


CONTENT = "Apollo stores billing events in Postgres"


def _text(result: types.CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    return block.text


async def _call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A successful call whose structured content validates and equals its text."""
    result = await client.call_tool(name, arguments)  # the SDK validates here already
    assert isinstance(result, types.CallToolResult)
    assert not result.is_error, _text(result)
    await client.session.validate_tool_result(name, result)
    assert result.structured_content == json.loads(_text(result))
    return result.structured_content


async def test_every_tool_lists_an_output_schema(service: SignetService) -> None:
    async with mcp_client(service) as client:
        tools = (await client.list_tools()).tools
    assert {tool.name for tool in tools} == set(TOOLS)
    for tool in tools:
        schema = tool.output_schema
        assert schema is not None and schema["type"] == "object", tool.name
        assert schema["required"], tool.name


async def test_every_tool_answers_structured_content_that_validates(
    service: SignetService,
) -> None:
    called: set[str] = set()
    async with mcp_client(service) as client:

        async def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            called.add(name)
            return await _call(client, name, arguments)

        stored = await call("memory_store", {"content": CONTENT, "tags": ["billing"]})
        memory_id = stored["id"]
        await call("memory_search", {"query": "billing events Postgres", "expand": True})
        await call("memory_get", {"id": memory_id})
        await call("memory_list", {"limit": 5})
        await call("memory_modify", {"id": memory_id, "reason": "vital", "importance": 0.9})
        await call("memory_feedback", {"session_key": "s-1", "ratings": {memory_id: 1}})
        await call("session_search", {"query": "billing"})
        await call("session_bypass", {"session_key": "s-1", "enabled": True})
        entity, _ = service.knowledge.create_entity("default", "Apollo", actor=Actor())
        service.knowledge.add_claim(
            "default", entity.id, "never store card numbers", actor=Actor(),
            aspect="security", kind="constraint",
        )  # fmt: skip
        await call("knowledge_list_entities", {})
        await call("knowledge_get_entity", {"id": entity.id})
        expanded = await call("knowledge_expand", {"entity_name": "Apollo"})
        assert expanded["constraints"][0]["content"] == "never store card numbers"
        await call("memory_forget", {"id": memory_id, "reason": "done"})
        assert await call("secret_list", {}) == {"secrets": []}
    assert called == set(TOOLS)


async def test_secret_list_names_the_agent_s_secrets_and_never_a_value(
    service: SignetService,
) -> None:
    service.secrets.put("default", "GH_TOKEN", SecretStr("ghp_do_not_show"), actor=Actor())
    service.secrets.put("other", "OTHER_KEY", SecretStr("sk_other"), actor=Actor())
    async with mcp_client(service) as client:
        result = await client.call_tool("secret_list", {})
    assert result.structured_content == {"secrets": ["GH_TOKEN"]}
    assert "ghp_do_not_show" not in _text(result) and "OTHER_KEY" not in _text(result)


async def test_a_result_off_its_schema_is_caught(service: SignetService) -> None:
    async with mcp_client(service) as client:
        result = await client.call_tool("memory_list", {})
        assert isinstance(result, types.CallToolResult) and result.structured_content
        broken = result.model_copy(
            update={"structured_content": {**result.structured_content, "memories": "none"}}
        )
        with pytest.raises(RuntimeError, match="Invalid structured content"):
            await client.session.validate_tool_result("memory_list", broken)
        missing = result.model_copy(update={"structured_content": {"memories": []}})
        with pytest.raises(RuntimeError, match="stats"):
            await client.session.validate_tool_result("memory_list", missing)


async def test_a_refusal_carries_no_structured_content(service: SignetService) -> None:
    async with mcp_client(service) as client:
        result = await client.call_tool("memory_get", {"id": "no-such-memory"})
    assert isinstance(result, types.CallToolResult)
    assert result.is_error and result.structured_content is None
    assert json.loads(_text(result))["code"] == "not_found"
