"""A stateless Streamable HTTP MCP server mounted on the app, living as long as its lifespan.

The SDK's session manager needs a task group while the app serves, so it runs inside the
app's lifespan (a fresh manager per lifespan: one cannot be restarted); without a lifespan
the endpoint answers 503. Both MCP endpoints (`/mcp`, `/mcp/dream`) are one of these, built
at their first request (`mount.py`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.types import Receive, Scope, Send

from signet_desktop.api.mcp.mount import not_running


class StatelessMcp:
    """Serves `server` statelessly with JSON answers; `running()` is its lifetime."""

    def __init__(self, server: Server[Any], name: str) -> None:
        self.server = server
        self.name = name  # for the 503
        self.manager: StreamableHTTPSessionManager | None = None

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
            await not_running(self.name)(scope, receive, send)
            return
        await manager.handle_request(scope, receive, send)
