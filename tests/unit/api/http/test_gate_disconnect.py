"""A client that goes away mid-body (or is cut by the server's read deadline) reaches no handler."""

from __future__ import annotations

from typing import Any

import pytest

from signet_desktop.api.http.security import RequestGate
from signet_desktop.api.http.settings import HttpSettings

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_partial_body_then_disconnect_never_reaches_the_app() -> None:
    called: list[bytes] = []
    sent: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        called.append((await receive())["body"])

    messages = iter(
        [
            {"type": "http.request", "body": b'{"content": "half a', "more_body": True},
            {"type": "http.disconnect"},
        ]
    )

    async def receive() -> dict[str, Any]:
        return next(messages)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/api/memory/remember",
        "headers": [(b"host", b"127.0.0.1:3850"), (b"content-type", b"application/json")],
        "client": ("127.0.0.1", 1),
    }
    await RequestGate(app, HttpSettings())(scope, receive, send)
    assert called == [] and sent == []
