"""`RuntimeOptions.defer_app` (the desktop): the HTTP app is built in `serve()`, not `open()`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from signet_desktop.daemon.runtime import DaemonRuntime, RuntimeOptions, ServeContext, StartupError


def ok_app(context: ServeContext) -> Callable[..., Any]:
    """An ASGI app answering 204 to everything (lifespan included)."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    return app


def options(workspace: Path, factory: Callable[[ServeContext], Any]) -> RuntimeOptions:
    return RuntimeOptions(
        app_factory=factory,
        workspace=str(workspace),
        port=0,
        env={},
        log_to_stderr=False,
        defer_app=True,
    )


def test_deferred_app_is_built_by_serve_and_answers(tmp_path: Path) -> None:
    built: list[ServeContext] = []

    def factory(context: ServeContext) -> Any:
        built.append(context)
        return ok_app(context)

    runtime = DaemonRuntime(options(tmp_path / "ws", factory))
    runtime.open()
    assert built == []  # open() bound the port and built the service, not the app

    async def scenario() -> tuple[int, int]:
        ready = asyncio.Event()
        runtime.on_ready(ready.set)
        serving = asyncio.create_task(runtime.serve())
        await asyncio.wait_for(ready.wait(), 10)
        async with httpx.AsyncClient(base_url=runtime.url) as client:
            answered = (await client.get("/api/status")).status_code
        runtime.request_stop()
        return await asyncio.wait_for(serving, 15), answered

    try:
        code, answered = asyncio.run(scenario())
    finally:
        runtime.close()
    assert (code, answered) == (0, 204)
    assert [context.port for context in built] == [runtime.port]
    assert built[0].service is runtime.service


def test_deferred_app_that_refuses_ends_serve_with_its_exit_code(tmp_path: Path) -> None:
    def refuse(context: ServeContext) -> Any:
        raise StartupError("no app today", 2)

    runtime = DaemonRuntime(options(tmp_path, refuse))
    runtime.open()
    try:
        assert asyncio.run(asyncio.wait_for(runtime.serve(), 10)) == 2
    finally:
        runtime.close()
    again = DaemonRuntime(options(tmp_path, ok_app))
    again.open()  # the lock was released and the database closed
    again.close()
