"""The MCP server object both transports serve: the tools over a backend chosen per call.

Built on the SDK's low-level `Server` rather than `MCPServer`: `MCPServer` derives each
tool's arguments from a Python signature and validates them itself, wording refusals its own
way, while our tools must refuse with HTTP's messages and codes and declare their schemas once
(`tools.py`). Light to import (no FastAPI): `signet-mcp` builds it too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from signet_desktop.api.mcp.backend import MemoryBackend, ToolFailure
from signet_desktop.api.mcp.tools import call_tool, error_result, tool_definitions

SERVER_NAME = "signet"
INSTRUCTIONS = (
    "Signet memory: memory_search before answering from past context, memory_store for "
    "durable facts, preferences and decisions worth keeping across sessions."
)

BackendFor = Callable[[ServerRequestContext[Any, Any]], MemoryBackend]
# Whether this caller may run this tool: None, or the refusal to answer with.
Authorize = Callable[[ServerRequestContext[Any, Any], str], ToolFailure | None]


def build_server(
    backend_for: BackendFor, *, version: str, authorize: Authorize | None = None
) -> Server[Any]:
    """A server whose tool calls run over `backend_for(ctx)` (the caller's connection).

    `authorize` (the daemon's /mcp: the caller's permission and agent binding) is asked
    before each call; `signet-mcp` leaves it out, since the daemon's routes check its calls.
    """
    definitions = tool_definitions()

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=definitions)

    async def run_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        refusal = None if authorize is None else authorize(ctx, params.name)
        if refusal is not None:
            return error_result(refusal.message, refusal.code)
        return await call_tool(params.name, params.arguments, backend_for(ctx))

    return Server(
        SERVER_NAME,
        version=version,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=run_tool,
    )
