"""JSON responses rendered and encoded in the worker thread pool, for large replies.

A page of 1,000 memories is megabytes of JSON; building the dicts and encoding them on the
event loop stalls every other request (a 30 MB page held `/health/live` for 186 ms). The bytes
are the same as `JSONResponse` would send.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from starlette.responses import Response

from signet_desktop.api.http.scope import off_loop

T = TypeVar("T")


def encode_json(render: Callable[[], Any]) -> bytes:
    """`render()` encoded exactly as Starlette's JSONResponse encodes content."""
    content = render()
    return json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


async def json_off_loop(fetch: Callable[[], T], render: Callable[[T], Any]) -> Response:
    """Fetch, render and encode in one trip to the thread pool (recall is on the hot path)."""
    body = await off_loop(lambda: encode_json(lambda: render(fetch())))
    return Response(body, media_type="application/json")
