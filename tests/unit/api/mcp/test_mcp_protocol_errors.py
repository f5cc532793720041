"""Protocol errors where the MCP spec (2025-11-25) puts them, tool errors everywhere else.

An unknown tool is JSON-RPC -32602; a refused argument of a known tool is a tool result with
`isError` (SEP-1303: the model must see it to correct itself). Neither writes anything.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from support.mcp_inprocess import built_service, counts, mcp_client

from signet_desktop.domain.memory import Actor
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest

pytestmark = pytest.mark.anyio


@pytest.fixture
def service(tmp_path: Path) -> Iterator[SignetService]:
    with built_service(tmp_path) as svc:
        yield svc


@pytest.mark.parametrize("name", ["memory_remember", "", "secret_exec", "x" * 500])
async def test_an_unknown_tool_is_invalid_params(service: SignetService, name: str) -> None:
    before = counts(service)
    async with mcp_client(service) as client:
        with pytest.raises(MCPError) as refused:
            await client.call_tool(name, {"content": "would be stored"})
        listed = await client.call_tool("memory_list", {})  # still serving
    assert refused.value.code == types.INVALID_PARAMS
    assert refused.value.message == f"Unknown tool: {name[:200]}"
    assert isinstance(listed, types.CallToolResult) and not listed.is_error
    assert counts(service) == before


def _stored(service: SignetService) -> str:
    request = RememberRequest(agent_id="default", content="ratable memory")
    return service.memories.remember(request, Actor()).memory.id


async def test_bad_arguments_of_new_tools_are_tool_errors_and_write_nothing(
    service: SignetService,
) -> None:
    memory_id = _stored(service)
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("memory_feedback", {"ratings": {memory_id: 1}}, "session_required"),
        ("memory_feedback", {"session_key": "s", "ratings": {}}, "ratings_invalid"),
        ("memory_feedback", {"session_key": "s", "ratings": {memory_id: 2}}, "ratings_invalid"),
        ("memory_feedback", {"session_key": "s", "ratings": {memory_id: "1"}}, "ratings_invalid"),
        ("memory_feedback", {"session_key": "s", "ratings": [memory_id]}, "invalid_request"),
        # one unknown id refuses the whole call: the known one is not recorded either
        ("memory_feedback", {"session_key": "s", "ratings": {memory_id: 1, "no": 0}}, "not_found"),
        ("session_bypass", {"session_key": "s"}, "invalid_request"),
        ("session_bypass", {"session_key": "s", "enabled": "yes"}, "invalid_request"),
        ("session_bypass", {"session_key": "a/b", "enabled": True}, "invalid_request"),
        ("session_bypass", {"enabled": True}, "invalid_request"),
        ("knowledge_expand", {}, "entity_required"),
        ("knowledge_expand", {"entity_name": "  "}, "entity_required"),
        ("knowledge_expand", {"entity_name": "x", "max_tokens": 0}, "invalid_request"),
        ("knowledge_expand", {"entity_name": "x", "max_tokens": 10_001}, "invalid_request"),
        ("knowledge_expand", {"entity_name": "x" * 201}, "invalid_request"),
        ("knowledge_expand", {"entity_name": "Nobody"}, "entity_not_found"),
    ]
    before = counts(service)
    async with mcp_client(service) as client:
        for tool, arguments, code in cases:
            result = await client.call_tool(tool, arguments)
            assert isinstance(result, types.CallToolResult)
            assert result.is_error, (tool, arguments)
            body = json.loads(result.content[0].text)  # type: ignore[union-attr]
            assert set(body) == {"error", "code"} and body["code"] == code, (tool, arguments, body)
    assert counts(service) == before
