"""Streamable HTTP at `/mcp` on the daemon's app: the tools over the facade, in-process.

Stateless (as Signet's `/mcp`: every POST is answered on its own, no MCP session to keep) with
JSON answers. The route sits inside the app, so the request gate (Host, Origin, bearer token,
body size) has run before the SDK sees a request; the SDK's own DNS-rebinding check stays off
rather than judging Hosts a second time by other rules. Each tool call is scoped by the headers
of the POST that carries it (`x-signet-agent-id`, `x-signet-actor[-type]`,
`x-signet-session-key`), exactly as an HTTP route is, and holds to the caller's token: read-only
tools, resources and prompts need `read`, the other tools `write`, and the agent must be one
the token is bound to.

The SDK's session manager needs a task group for as long as the app serves: it runs inside
the app's lifespan (the daemon's uvicorn runs it; a fresh manager per lifespan, since one
cannot be restarted). Without a lifespan, `/mcp` answers 503.
"""

from __future__ import annotations

from starlette.requests import Request

from signet_desktop.api.http.principal import principal_of
from signet_desktop.api.http.scope import resolve_agent
from signet_desktop.api.mcp.backend import MemoryBackend, ToolFailure
from signet_desktop.api.mcp.facade_backend import Caller, FacadeBackend
from signet_desktop.api.mcp.server import Context, Permission, build_server
from signet_desktop.api.mcp.stateless import StatelessMcp
from signet_desktop.domain.errors import SignetError
from signet_desktop.service.facade import SignetService


class McpEndpoint(StatelessMcp):
    """The ASGI app at /mcp; `running()` is its lifetime (entered by the app's lifespan)."""

    def __init__(self, service: SignetService, version: str) -> None:
        self.service = service
        server = build_server(self.backend_for, version=version, authorize=self.authorize)
        super().__init__(server, "MCP endpoint")

    def backend_for(self, ctx: Context) -> MemoryBackend:
        request = ctx.request if isinstance(ctx.request, Request) else None
        return FacadeBackend(self.service, Caller.of(request))

    def authorize(self, ctx: Context, needed: Permission, what: str) -> ToolFailure | None:
        """The HTTP routes' rules for one call: reads (read-only tools, resources, prompts)
        need `read`, the other tools `write`, and the agent (x-signet-agent-id, else the
        token's own) must be the caller's."""
        request = ctx.request if isinstance(ctx.request, Request) else None
        if request is None:
            return None  # no HTTP caller (in-process)
        if not principal_of(request).may(needed):
            return ToolFailure(
                f"this token lacks the {needed!r} permission {what} needs", "permission_denied"
            )
        try:
            resolve_agent(request, None)
        except SignetError as exc:
            return ToolFailure(exc.message, exc.code)
        return None
