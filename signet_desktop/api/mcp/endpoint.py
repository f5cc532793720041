"""Streamable HTTP at `/mcp` on the daemon's app: the tools over the facade, in-process.

Stateless (as Signet's `/mcp`: every POST is answered on its own, no MCP session to keep) with
JSON answers. The route sits inside the app, so the request gate (Host, Origin, bearer token,
body size) has run before the SDK sees a request; the SDK's own DNS-rebinding check stays off
rather than judging Hosts a second time by other rules. Each tool call is scoped by the headers
of the POST that carries it (`x-signet-agent-id`, `x-signet-actor[-type]`,
`x-signet-session-key`), exactly as an HTTP route is, and holds to the caller's token: read-only
tools need `read`, the others `write`, and the agent must be one the token is bound to.

The SDK's session manager needs a task group for as long as the app serves: it runs inside
the app's lifespan (the daemon's uvicorn runs it; a fresh manager per lifespan, since one
cannot be restarted). Without a lifespan, `/mcp` answers 503.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from signet_desktop.api.http.principal import Permission, principal_of
from signet_desktop.api.http.scope import resolve_agent
from signet_desktop.api.mcp.backend import MemoryBackend, ToolFailure
from signet_desktop.api.mcp.facade_backend import Caller, FacadeBackend
from signet_desktop.api.mcp.server import build_server
from signet_desktop.api.mcp.tools import TOOLS
from signet_desktop.domain.errors import SignetError
from signet_desktop.service.facade import SignetService

MCP_PATH = "/mcp"


class McpEndpoint:
    """The ASGI app at /mcp; `running()` is its lifetime (entered by the app's lifespan)."""

    def __init__(self, service: SignetService, version: str) -> None:
        self.service = service
        self.server = build_server(self.backend_for, version=version, authorize=self.authorize)
        self.manager: StreamableHTTPSessionManager | None = None

    def backend_for(self, ctx: ServerRequestContext[Any, Any]) -> MemoryBackend:
        request = ctx.request if isinstance(ctx.request, Request) else None
        return FacadeBackend(self.service, Caller.of(request))

    def authorize(self, ctx: ServerRequestContext[Any, Any], tool: str) -> ToolFailure | None:
        """The HTTP routes' rules for one tool call: read-only tools need `read`, the others
        `write`, and the agent (x-signet-agent-id, else the token's own) must be the caller's."""
        request = ctx.request if isinstance(ctx.request, Request) else None
        spec = TOOLS.get(tool)
        if request is None or spec is None:
            return None  # no HTTP caller (in-process), or call_tool answers `unknown_tool`
        needed: Permission = "read" if spec.read_only else "write"
        if not principal_of(request).may(needed):
            return ToolFailure(
                f"this token lacks the {needed!r} permission the {tool} tool needs",
                "permission_denied",
            )
        try:
            resolve_agent(request, None)
        except SignetError as exc:
            return ToolFailure(exc.message, exc.code)
        return None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        manager = StreamableHTTPSessionManager(
            app=self.server, stateless=True, json_response=True, security_settings=None
        )
        async with manager.run():
            self.manager = manager
            try:
                yield
            finally:
                self.manager = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        manager = self.manager
        if manager is None:
            refusal = JSONResponse(
                {"error": "the MCP endpoint is not running", "code": "unavailable"},
                status_code=503,
            )
            await refusal(scope, receive, send)
            return
        await manager.handle_request(scope, receive, send)


def mount_mcp(app: FastAPI, service: SignetService, version: str) -> McpEndpoint:
    """Serve the MCP tools at /mcp on `app`, started and stopped with the app's lifespan."""
    endpoint = McpEndpoint(service, version)
    app.router.routes.append(Route(MCP_PATH, endpoint=endpoint))
    previous = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(application: Any) -> AsyncIterator[Any]:
        async with previous(application) as state, endpoint.running():
            yield state

    app.router.lifespan_context = lifespan
    return endpoint
