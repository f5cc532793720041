"""`session_bypass` through MCP turns the hooks off for that session only, and back on."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.client.client import Client
from support.mcp_inprocess import built_service, mcp_client

from signet_desktop.domain.memory import Actor
from signet_desktop.domain.sessions import Turn
from signet_desktop.service.facade import SignetService
from signet_desktop.service.hooks.service import HookContext
from signet_desktop.service.memories.service import RememberRequest

pytestmark = pytest.mark.anyio

FACT = "The Apollo deploy window is Friday 14:00 UTC"


@pytest.fixture
def service(tmp_path: Path) -> Iterator[SignetService]:
    with built_service(tmp_path) as svc:
        svc.memories.remember(RememberRequest(agent_id="alice", content=FACT), Actor())
        svc.memories.remember(RememberRequest(agent_id="bob", content=FACT), Actor())
        yield svc


async def _bypass(client: Client, key: str, enabled: bool) -> dict[str, Any]:
    result = await client.call_tool("session_bypass", {"session_key": key, "enabled": enabled})
    assert isinstance(result, types.CallToolResult) and not result.is_error
    body: dict[str, Any] = json.loads(result.content[0].text)  # type: ignore[union-attr]
    return body


def _ctx(agent: str, key: str) -> HookContext:
    return HookContext(agent, "claude-code", key)


async def test_a_bypassed_session_gets_nothing_from_its_hooks(service: SignetService) -> None:
    hooks = service.hooks
    async with mcp_client(service, "alice") as alice:
        assert await _bypass(alice, "s-quiet", True) == {"sessionKey": "s-quiet", "bypassed": True}
    start = hooks.session_start(_ctx("alice", "s-quiet"))
    prompt = hooks.user_prompt_submit(_ctx("alice", "s-quiet"), "when is the Apollo deploy?")
    end = hooks.session_end(_ctx("alice", "s-quiet"), turns=[Turn("t1", "user", "hello")])
    assert (start.bypassed, start.inject, start.memories) == (True, "", ())
    assert (prompt.bypassed, prompt.inject, prompt.memory_count) == (True, "", 0)
    assert end.bypassed and end.capture is None
    assert service.transcripts.sessions("alice").rows == []  # no transcript kept
    # Controls: the same question in another session of alice's, and bob's own "s-quiet".
    other = hooks.session_start(_ctx("alice", "s-other"))
    bobs = hooks.session_start(_ctx("bob", "s-quiet"))
    assert FACT in other.inject and not other.bypassed
    assert FACT in bobs.inject and not bobs.bypassed


async def test_bypass_off_brings_the_hooks_back(service: SignetService) -> None:
    async with mcp_client(service, "alice") as alice:
        await _bypass(alice, "s-1", True)
        assert service.hooks.session_start(_ctx("alice", "s-1")).inject == ""
        assert await _bypass(alice, "s-1", False) == {"sessionKey": "s-1", "bypassed": False}
    assert FACT in service.hooks.session_start(_ctx("alice", "s-1")).inject
