"""`signet-mcp` over stdio, spawned by the SDK's own client, against a real daemon process."""

from __future__ import annotations

import json
import subprocess
import sys
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import mcp_scenarios as scenarios
import pytest
from conftest import SIGNET_MCP, Daemon, ok, refused, stdio_session
from mcp.client.session import ClientSession

from signet_desktop.api.mcp.tools import TOOLS
from tests.e2e.launcher import clean_env
from tests.support.daemon import closed_loopback_url

pytestmark = pytest.mark.anyio


def opener(daemon: Daemon) -> scenarios.Open:
    def open_session(agent: str | None) -> AbstractAsyncContextManager[ClientSession]:
        args = ("--agent", agent) if agent else ()
        return stdio_session(daemon.home, daemon.url, *args)

    return open_session


async def test_lists_the_tools(daemon: Daemon) -> None:
    await scenarios.lists_the_tools(opener(daemon))


async def test_round_trip_through_the_store(daemon: Daemon) -> None:
    await scenarios.round_trip(opener(daemon), daemon, "stdio-agent")


async def test_bad_arguments_are_tool_errors_and_write_nothing(daemon: Daemon) -> None:
    await scenarios.bad_arguments_write_nothing(opener(daemon), daemon)


async def test_refused_changes_write_nothing(daemon: Daemon) -> None:
    await scenarios.modify_and_forget_refusals_write_nothing(opener(daemon), daemon)


async def test_one_agent_cannot_reach_another(daemon: Daemon) -> None:
    await scenarios.agents_are_isolated(opener(daemon), daemon)


async def test_as_of_answers_relative_questions(daemon: Daemon) -> None:
    await scenarios.as_of_answers_relative_questions(opener(daemon), daemon, "stdio-as-of")


async def test_errors_are_the_http_routes_errors(daemon: Daemon) -> None:
    await scenarios.errors_match_http(opener(daemon), daemon)


async def test_session_search_is_scoped_and_answers_as_http(daemon: Daemon) -> None:
    await scenarios.session_search_is_scoped_and_matches_http(
        opener(daemon), daemon, "stdio-sessions"
    )


async def test_agent_from_the_environment(daemon: Daemon) -> None:
    env = {"SIGNET_AGENT_ID": "env-agent"}
    async with stdio_session(daemon.home, daemon.url, env=env) as session:
        stored = ok(await session.call_tool("memory_store", {"content": "scoped by env"}))
    row = daemon.memory(stored["id"])
    assert row is not None and row["agent_id"] == "env-agent"


async def test_daemon_down_is_a_tool_error_and_the_server_stays_up(tmp_path: Path) -> None:
    url = closed_loopback_url()
    async with stdio_session(tmp_path, url) as session:
        assert len((await session.list_tools()).tools) == len(TOOLS)  # listed without a daemon
        for _ in range(2):  # still answering after a failed call
            body = refused(await session.call_tool("memory_search", {"query": "anything"}))
            assert body["code"] == "daemon_unreachable"
            assert body["error"].startswith(f"Signet daemon is not running at {url}")
            assert "signet-desktop --headless" in body["error"]


def test_help_and_bad_options(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    shown = subprocess.run([SIGNET_MCP, "--help"], capture_output=True, text=True, env=env)
    assert shown.returncode == 0
    for text in ("signet-mcp", "SIGNET_DAEMON_URL", "mcpServers", "[mcp_servers.signet]"):
        assert text in shown.stdout
    bad = subprocess.run(
        [SIGNET_MCP], capture_output=True, text=True, env={**env, "SIGNET_DAEMON_URL": "ftp://x"}
    )
    assert bad.returncode == 2 and "SIGNET_DAEMON_URL must be an http(s) URL" in bad.stderr
    assert bad.stdout == ""


def test_the_stdio_server_imports_no_fastapi_or_numpy() -> None:
    probe = (
        "import json, sys\n"
        "import signet_desktop.api.mcp.stdio, signet_desktop.api.mcp.daemon_backend\n"
        "import signet_desktop.api.mcp.server, mcp.server.stdio\n"
        "print(json.dumps([m for m in ('fastapi', 'numpy', 'signet_desktop.storage',"
        " 'signet_desktop.service', 'signet_desktop.api.http') if m in sys.modules]))\n"
    )
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout) == []
