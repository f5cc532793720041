"""`/mcp` and `/mcp/dream` on the daemon's app, with the MCP SDK imported at their first request.

The SDK and the tool modules over it are ~17 MiB of the daemon's memory and a part of its
start-up; most sessions of the desktop app never see an MCP client. So each endpoint is
mounted as a `LazyMcp`: the app's lifespan opens a task group and nothing else; the first
request builds the endpoint (imports off the event loop) and starts its session manager in a
task of that group, where it runs until the lifespan ends. Without a lifespan the endpoint
answers 503, as before.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any, Protocol

import anyio
from anyio.abc import TaskGroup, TaskStatus
from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from signet_desktop.dreaming.tool_sessions import DREAM_MCP_PATH, PassEnded, ToolSessions

if TYPE_CHECKING:
    from signet_desktop.service.facade import SignetService

MCP_PATH = "/mcp"


def not_running(name: str) -> JSONResponse:
    """The 503 an MCP endpoint answers while it is not serving (`name`: "Dreaming MCP")."""
    return JSONResponse(
        {"error": f"the {name} is not running", "code": "unavailable"}, status_code=503
    )


class Endpoint(Protocol):
    """What `StatelessMcp` is: an ASGI app with a lifetime."""

    def running(self) -> AbstractAsyncContextManager[None]: ...

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]: ...


class LazyMcp:
    """An endpoint built at its first request and served until the app's lifespan ends."""

    def __init__(
        self,
        build: Callable[[], Endpoint],
        name: str,
        refuse: Callable[[Scope], JSONResponse | None] | None = None,
    ) -> None:
        self._build = build
        self.name = name  # for the 503
        self._refuse = refuse  # judged before anything is built
        self._group: TaskGroup | None = None
        self._lock: anyio.Lock | None = None
        self.endpoint: Endpoint | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with anyio.create_task_group() as group:
            self._group, self._lock = group, anyio.Lock()
            try:
                yield
            finally:
                self._group = self._lock = self.endpoint = None
                group.cancel_scope.cancel()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = self._refuse(scope) if self._refuse is not None else None
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        endpoint = self.endpoint or await self._start()
        if endpoint is None:
            await not_running(self.name)(scope, receive, send)
            return
        await endpoint(scope, receive, send)

    async def _start(self) -> Endpoint | None:
        group, lock = self._group, self._lock
        if group is None or lock is None:
            return None
        async with lock:  # the first requests wait for one build
            if self.endpoint is None:
                await group.start(self._serve)
        return self.endpoint

    async def _serve(self, *, task_status: TaskStatus[None]) -> None:
        endpoint = await anyio.to_thread.run_sync(self._build)  # the imports, off the loop
        async with endpoint.running():  # entered and left in this one task, as anyio asks
            self.endpoint = endpoint
            task_status.started()
            await anyio.sleep_forever()


def bearer(headers: Any) -> str:
    """The token of an `Authorization: Bearer …` header ("" without one)."""
    scheme, _, token = str(headers.get("authorization", "")).partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def mount_lazy(app: FastAPI, path: str, endpoint: Any) -> None:
    """Route `path` to `endpoint`, running for as long as the app's lifespan."""
    app.router.routes.append(Route(path, endpoint=endpoint))
    previous = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(application: Any) -> AsyncIterator[Any]:
        async with previous(application) as state, endpoint.running():
            yield state

    app.router.lifespan_context = lifespan


def mount_mcp(app: FastAPI, service: SignetService, version: str) -> LazyMcp:
    """The tools over the facade at /mcp, behind the app's request gate."""

    def build() -> Endpoint:
        from signet_desktop.api.mcp.endpoint import McpEndpoint

        return McpEndpoint(service, version)

    endpoint = LazyMcp(build, "MCP endpoint")
    mount_lazy(app, MCP_PATH, endpoint)
    return endpoint


def mount_dream_tools(app: FastAPI, sessions: ToolSessions, version: str) -> LazyMcp:
    """A live harness pass's tools at /mcp/dream, for the holder of its secret only."""

    def build() -> Endpoint:
        from signet_desktop.api.mcp.dream_endpoint import DreamToolsEndpoint

        return DreamToolsEndpoint(sessions, version)

    def refuse(scope: Scope) -> JSONResponse | None:
        try:
            sessions.get(bearer(Request(scope).headers))
        except PassEnded as exc:
            return JSONResponse({"error": str(exc), "code": "pass_ended"}, status_code=401)
        return None

    endpoint = LazyMcp(build, "Dreaming tool endpoint", refuse)
    mount_lazy(app, DREAM_MCP_PATH, endpoint)
    return endpoint
