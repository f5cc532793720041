"""The route permission table names real routes, and classes every route of the app."""

from __future__ import annotations

from typing import Any

from fastapi.routing import APIRoute

from signet_desktop.api.http.app import create_app
from signet_desktop.api.http.permissions import ADMIN_ROUTES, READ_POSTS, route_permission
from signet_desktop.api.http.settings import HttpSettings


class _Service:
    """Just what create_app reads before serving (no route runs here)."""

    class documents:
        max_request_bytes = 1024

    tokens = None

    class dreaming:
        tool_sessions = None


def _routes() -> set[tuple[str, str]]:
    app = create_app(_Service(), HttpSettings())  # type: ignore[arg-type]
    found: set[tuple[str, str]] = set()
    pending: list[Any] = list(app.routes)
    while pending:
        route = pending.pop()
        if getattr(route, "original_router", None) is not None:
            pending.extend(route.original_router.routes)
        elif isinstance(route, APIRoute):
            found.update((method, route.path) for method in route.methods)
    return found


def test_every_table_entry_is_a_route_of_the_app() -> None:
    routes = _routes()
    assert routes >= ADMIN_ROUTES, ADMIN_ROUTES - routes
    assert {("POST", path) for path in READ_POSTS} <= routes


def test_classes() -> None:
    routes = _routes()
    classes = {route: route_permission(*route) for route in routes}
    assert classes[("GET", "/api/memories")] == "read"
    assert classes[("POST", "/api/memory/recall")] == "read"
    assert classes[("POST", "/api/memory/remember")] == "write"
    assert classes[("DELETE", "/api/memory/{memory_id}")] == "write"
    assert classes[("POST", "/api/pipeline/pause")] == "admin"
    assert classes[("GET", "/api/tokens")] == "admin"
    # Every mutation that is not admin needs write: no non-GET route slips into `read` by
    # accident (only the named searching POSTs do).
    reads = {route for route, needed in classes.items() if needed == "read"}
    assert {m for m, _ in reads} <= {"GET", "HEAD", "POST"}
    assert {p for m, p in reads if m == "POST"} == set(READ_POSTS)
