"""Large list and recall replies are rendered and encoded off the event loop (issue 8).

Each view is replaced by a spy that records its thread and then waits until `/health/live`
has answered. Rendered on the loop, the spy would hold the loop and `/health/live` could not
answer until the spy gave up; off the loop, health answers while the page is being built.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import anyio
import httpx
import pytest
from http_helpers import remember

from signet_desktop.api.http.routes import memories as memories_routes
from signet_desktop.api.http.routes import memory as memory_routes

pytestmark = pytest.mark.anyio

WAIT_S = 10.0  # only reached when the view blocks the loop, i.e. when the test fails


class Spy:
    """Wraps a view: records the rendering thread and blocks until released."""

    def __init__(self, view: Callable[..., Any]) -> None:
        self.view = view
        self.threads: list[int] = []
        self.released = threading.Event()
        self.released_in_time: list[bool] = []

    def __call__(self, *args: Any) -> Any:
        self.threads.append(threading.get_ident())
        self.released_in_time.append(self.released.wait(WAIT_S))
        return self.view(*args)


async def _serve_while_live(
    client: httpx.AsyncClient, spy: Spy, method: str, path: str, **kwargs: Any
) -> httpx.Response:
    replies: dict[str, httpx.Response] = {}

    async def big() -> None:
        replies["big"] = await client.request(method, path, **kwargs)

    async with anyio.create_task_group() as group:
        group.start_soon(big)
        with anyio.fail_after(WAIT_S * 2):
            while not spy.threads:  # the page is being rendered now
                await anyio.sleep(0.005)
        live = await client.get("/health/live")
        spy.released.set()
    assert live.status_code == 200
    return replies["big"]


@pytest.mark.parametrize(
    ("module", "view", "method", "path", "kwargs"),
    [
        (memories_routes, "page_json", "GET", "/api/memories?limit=1000", {}),
        (
            memory_routes,
            "recall_json",
            "POST",
            "/api/memory/recall",
            {"json": {"query": "marmot burrow"}},
        ),
        (memory_routes, "recall_json", "GET", "/api/memory/search?q=marmot", {}),
    ],
)
async def test_large_reply_is_rendered_off_the_loop(
    client: httpx.AsyncClient,
    monkeypatch: pytest.MonkeyPatch,
    module: Any,
    view: str,
    method: str,
    path: str,
    kwargs: dict[str, Any],
) -> None:
    for n in range(30):
        await remember(client, f"marmot number {n} " + "burrow " * 300)
    spy = Spy(getattr(module, view))
    monkeypatch.setattr(module, view, spy)
    loop_thread = threading.get_ident()
    response = await _serve_while_live(client, spy, method, path, **kwargs)
    assert response.status_code == 200, response.text
    assert spy.threads and spy.threads[0] != loop_thread
    assert spy.released_in_time == [True]  # /health/live answered while the page was built
    body = response.json()
    assert len(body.get("memories", body.get("results", []))) >= 10
    assert response.headers["content-type"] == "application/json"
