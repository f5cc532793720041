"""A route class that reads a `text/plain` body as JSON, as Signet's clients send some.

JavaScript's `fetch(url, {body: JSON.stringify(x)})` without headers labels the body
`text/plain;charset=UTF-8`; Signet's CLI sends some hook bodies that way and Signet reads them
as JSON. A missing Content-Type is already read as JSON (`strict_content_type=False` in
`app.py`); this class drops a `text/plain` one so the same rule applies. Other media types
(forms, multipart) are still not JSON. Browsers send such bodies cross-origin without a
preflight, which is why the request gate's Origin check refuses foreign origins on writes.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute

PLAIN_TEXT = b"text/plain"


def _is_plain_text(value: bytes) -> bool:
    return value.split(b";", 1)[0].strip().lower() == PLAIN_TEXT


class JsonBodyRoute(APIRoute):
    """An APIRoute whose handler sees a `text/plain` request as one without a Content-Type."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Response:
            headers = request.scope.get("headers", [])
            if any(k == b"content-type" and _is_plain_text(v) for k, v in headers):
                scope = dict(request.scope)
                scope["headers"] = [(k, v) for k, v in headers if k != b"content-type"]
                request = Request(scope, request.receive)
            return await handler(request)

        return route
