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
from fastapi import FastAPI
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from signet_desktop.api.mcp.stateless import StatelessMcp, mount_stateless
from signet_desktop.dreaming.tool_sessions import (
    DREAM_MCP_PATH,
    PassEnded,
    ToolSession,
    ToolSessions,
)
from signet_desktop.dreaming.tools import SPECS, result_text
from signet_desktop.inference.harness_agent import MCP_SERVER_NAME

INSTRUCTIONS = "Dreaming's tools for one pass: read the evidence, then apply cited operations."


def _bearer(headers: Any) -> str:
    scheme, _, token = str(headers.get("authorization", "")).partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


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
                session = self.sessions.get(_bearer(request.headers) if request else "")
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

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope)
        try:
            self.sessions.get(_bearer(request.headers))
        except PassEnded as exc:
            refusal = JSONResponse({"error": str(exc), "code": "pass_ended"}, status_code=401)
            await refusal(scope, receive, send)
            return
        await super().__call__(scope, receive, send)


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


def mount_dream_tools(app: FastAPI, sessions: ToolSessions, version: str) -> DreamToolsEndpoint:
    """Serve live passes' tools at /mcp/dream on `app`, with the app's lifespan."""
    endpoint = DreamToolsEndpoint(sessions, version)
    mount_stateless(app, DREAM_MCP_PATH, endpoint)
    return endpoint
