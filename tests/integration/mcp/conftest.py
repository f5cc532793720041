"""MCP fixtures: one real `signet-desktop --headless` per module, and SDK clients to it.

The daemon runs without an embedder (keyword recall; no model load), so it starts at once.
Effects are read from its database file directly (read-only), not through the API under test.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
import sqlean
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.e2e.launcher import Launcher, args_for, clean_env

NO_EMBEDDER_CONFIG = "embedding:\n  provider: none\n"
SIGNET_MCP = str(Path(sys.executable).parent / "signet-mcp")


@dataclass(frozen=True, slots=True)
class Daemon:
    """A running daemon: its base URL, database file and the home its clients run in."""

    url: str
    db_path: Path
    home: Path

    def rows(self, sql: str, **params: object) -> list[tuple[Any, ...]]:
        """`sql` on the database file, read-only (the daemon owns writes)."""
        conn = sqlean.connect(f"file:{self.db_path}?mode=ro", uri=True)
        try:
            return [tuple(row) for row in conn.execute(sql, params).fetchall()]
        finally:
            conn.close()

    def memory(self, memory_id: str) -> dict[str, Any] | None:
        """The memory's row (deleted or not), or None."""
        found = self.rows(
            "SELECT agent_id, content, importance, tags, version, is_deleted FROM memories "
            "WHERE id = :id",
            id=memory_id,
        )
        if not found:
            return None
        agent_id, content, importance, tags, version, is_deleted = found[0]
        return {
            "agent_id": agent_id,
            "content": content,
            "importance": importance,
            "tags": json.loads(tags),
            "version": version,
            "is_deleted": bool(is_deleted),
        }

    def counts(self) -> tuple[int, int, int]:
        """(memories, history rows, feedback rows): what a refused call must leave unchanged."""
        return (
            self.rows("SELECT COUNT(*) FROM memories")[0][0],
            self.rows("SELECT COUNT(*) FROM memory_history")[0][0],
            self.rows("SELECT COUNT(*) FROM memory_feedback")[0][0],
        )

    def history(self, memory_id: str) -> list[tuple[str, str, str]]:
        """(event, changed_by, actor_type) of the memory, oldest first."""
        return [
            (str(a), str(b), str(c))
            for a, b, c in self.rows(
                "SELECT event, changed_by, actor_type FROM memory_history "
                "WHERE memory_id = :id ORDER BY created_at, rowid",
                id=memory_id,
            )
        ]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """One real headless daemon for the whole module (no embedder, a free port)."""
    launcher = Launcher(tmp_path_factory.mktemp("mcp-daemon"))
    workspace = launcher.tmp_path / "ws"
    workspace.mkdir()
    (workspace / "agent.yaml").write_text(NO_EMBEDDER_CONFIG)
    try:
        process = launcher.start(*args_for(workspace))
        url = process.wait_listening()
        yield Daemon(url, workspace / "memory" / "memories.db", launcher.home)
    finally:
        launcher.cleanup()


@asynccontextmanager
async def http_session(url: str, agent: str | None = None) -> AsyncIterator[ClientSession]:
    """An initialised SDK client session over Streamable HTTP at `url/mcp`."""
    headers = {"x-signet-agent-id": agent} if agent else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def stdio_session(
    home: Path, url: str, *args: str, env: dict[str, str] | None = None
) -> AsyncIterator[ClientSession]:
    """An initialised SDK client session to a spawned `signet-mcp --url URL ARGS`."""
    params = StdioServerParameters(
        command=SIGNET_MCP,
        args=["--url", url, *args],
        env=clean_env(home, **(env or {})),
    )
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def text_of(result: types.CallToolResult) -> str:
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def ok(result: types.CallToolResult) -> dict[str, Any]:
    """The JSON answer of a successful call."""
    assert not result.is_error, text_of(result)
    answer: dict[str, Any] = json.loads(text_of(result))
    return answer


def refused(result: types.CallToolResult) -> dict[str, Any]:
    """The `{"error", "code"}` body of a tool error."""
    assert result.is_error, text_of(result)
    body: dict[str, Any] = json.loads(text_of(result))
    assert set(body) == {"error", "code"}, body
    return body
