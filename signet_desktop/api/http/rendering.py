"""JSON responses rendered and encoded in the worker thread pool, for large replies.

A page of 1,000 memories is megabytes of JSON; building the dicts and encoding them on the
event loop stalls every other request (a 30 MB page held `/health/live` for 186 ms). The bytes
are the same as `JSONResponse` would send.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from starlette.responses import Response

from signet_desktop.api.http.scope import off_loop


def encode_json(render: Callable[[], Any]) -> bytes:
    """`render()` encoded exactly as Starlette's JSONResponse encodes content."""
    content = render()
    return json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


async def json_off_loop(render: Callable[[], Any]) -> Response:
    """A JSON response whose body is rendered and encoded off the event loop."""
    return Response(await off_loop(encode_json, render), media_type="application/json")
