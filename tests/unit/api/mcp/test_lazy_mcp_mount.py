"""`/mcp` is built at its first request: one build, served until the lifespan ends, 503 before."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest
from starlette.types import Message, Receive, Scope, Send

from signet_desktop.api.mcp.mount import LazyMcp

pytestmark = pytest.mark.anyio


class FakeEndpoint:
    """An endpoint whose lifetime and requests are visible to the test."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        self.log.append("start")
        try:
            yield
        finally:
            self.log.append("stop")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.log.append("request")
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


async def call(app: LazyMcp) -> int:
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    await app({"type": "http", "method": "POST", "path": "/mcp", "headers": []}, receive, send)
    return int(sent[0]["status"])


async def test_built_once_at_the_first_request_and_stopped_with_the_lifespan() -> None:
    log: list[str] = []
    builds: list[str] = []

    def build() -> FakeEndpoint:
        builds.append(threading.current_thread().name)
        return FakeEndpoint(log)

    lazy = LazyMcp(build, "MCP endpoint")
    assert await call(lazy) == 503  # no lifespan: not running
    async with lazy.running():
        assert builds == [] and log == []  # nothing built by the lifespan itself
        async with anyio.create_task_group() as group:
            for _ in range(3):
                group.start_soon(call, lazy)
        assert len(builds) == 1 and builds[0] != threading.current_thread().name  # off the loop
        assert log == ["start", "request", "request", "request"]
    assert log[-1] == "stop"
    assert await call(lazy) == 503


def test_importing_the_daemons_app_imports_no_mcp_module() -> None:
    code = (
        "import json, sys\n"
        "from signet_desktop.api.http import app\n"
        "sdk = [m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types')]\n"
        "print(json.dumps(sdk))\n"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(found.stdout) == []
