"""MCP over Streamable HTTP at /mcp on a real daemon, with the SDK's own client."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

import httpx
import mcp_scenarios as scenarios
import pytest
from conftest import Daemon, http_session
from mcp.client.session import ClientSession

pytestmark = pytest.mark.anyio


def opener(daemon: Daemon) -> scenarios.Open:
    def open_session(agent: str | None) -> AbstractAsyncContextManager[ClientSession]:
        return http_session(daemon.url, agent)

    return open_session


async def test_lists_the_tools(daemon: Daemon) -> None:
    await scenarios.lists_the_tools(opener(daemon))


async def test_round_trip_through_the_store(daemon: Daemon) -> None:
    await scenarios.round_trip(opener(daemon), daemon, "http-agent")


async def test_bad_arguments_are_tool_errors_and_write_nothing(daemon: Daemon) -> None:
    await scenarios.bad_arguments_write_nothing(opener(daemon), daemon)


async def test_refused_changes_write_nothing(daemon: Daemon) -> None:
    await scenarios.modify_and_forget_refusals_write_nothing(opener(daemon), daemon)


async def test_one_agent_cannot_reach_another(daemon: Daemon) -> None:
    await scenarios.agents_are_isolated(opener(daemon), daemon)


async def test_as_of_answers_relative_questions(daemon: Daemon) -> None:
    await scenarios.as_of_answers_relative_questions(opener(daemon), daemon, "http-as-of")


async def test_errors_are_the_http_routes_errors(daemon: Daemon) -> None:
    await scenarios.errors_match_http(opener(daemon), daemon)


async def test_session_search_is_scoped_and_answers_as_http(daemon: Daemon) -> None:
    await scenarios.session_search_is_scoped_and_matches_http(
        opener(daemon), daemon, "http-sessions"
    )


def test_the_request_gate_guards_mcp(daemon: Daemon) -> None:
    """A foreign Origin or Host never reaches the MCP handler (DNS rebinding, CSRF)."""
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "memory_store", "arguments": {"content": "from a web page"}},
    }
    accept = {"accept": "application/json, text/event-stream"}
    before = daemon.counts()
    with httpx.Client(base_url=daemon.url, timeout=10) as http:
        origin = http.post("/mcp", json=call, headers={**accept, "origin": "https://evil.example"})
        host = http.post("/mcp", json=call, headers={**accept, "host": "evil.example"})
    assert origin.status_code == 403 and origin.json()["code"] == "origin_not_allowed"
    assert host.status_code == 403 and host.json()["code"] == "host_not_allowed"
    assert daemon.counts() == before
