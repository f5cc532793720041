"""`/mcp/dream`: a running harness pass's tools, over Streamable HTTP, for that pass alone.

A Dreaming pass with `executor: acpx` starts the user's harness with this URL and a secret in
`Authorization: Bearer sdp_…` (`dreaming/harness_pass.py`). Only a live pass's secret is
served: before the pass or after it ends every request is a 401 `pass_ended`, and a call runs
through that pass's tools (agent scope, caps, the apply seam) and is recorded in its trace
(`dreaming/tool_sessions.py`). The request gate still judges Host and Origin; the API token is
not asked for here, the pass secret stands in for it.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from starlette.requests import Request

from signet_desktop.api.mcp.mount import bearer
from signet_desktop.api.mcp.stateless import StatelessMcp
from signet_desktop.dreaming.tool_sessions import (
    PassEnded,
    ToolSession,
    ToolSessions,
)
from signet_desktop.dreaming.tools import SPECS, result_text
from signet_desktop.inference.harness_agent import MCP_SERVER_NAME

INSTRUCTIONS = "Dreaming's tools for one pass: read the evidence, then apply cited operations."


def _tool(spec: Any) -> types.Tool:
    return types.Tool(name=spec.name, description=spec.description, input_schema=spec.parameters)


class DreamToolsEndpoint(StatelessMcp):
    """The ASGI app at /mcp/dream; `running()` is its lifetime (the app's lifespan)."""

    def __init__(self, sessions: ToolSessions, version: str) -> None:
        self.sessions = sessions
        definitions = [_tool(spec) for spec in SPECS]

        async def list_tools(
            ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
        ) -> types.ListToolsResult:
            return types.ListToolsResult(tools=definitions)

        async def call_tool(
            ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
        ) -> types.CallToolResult:
            request = ctx.request if isinstance(ctx.request, Request) else None
            try:
                session = self.sessions.get(bearer(request.headers) if request else "")
            except PassEnded as exc:
                return _error(str(exc))
            return await anyio.to_thread.run_sync(_run, session, params)

        server: Server[Any] = Server(
            MCP_SERVER_NAME,
            version=version,
            instructions=INSTRUCTIONS,
            on_list_tools=list_tools,
            on_call_tool=call_tool,
        )
        super().__init__(server, "Dreaming tool endpoint")


def _run(session: ToolSession, params: types.CallToolRequestParams) -> types.CallToolResult:
    outcome = session.call(params.name, params.arguments or {})
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=result_text(outcome))],
        is_error=outcome.status != "ok",
    )


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], is_error=True
    )
