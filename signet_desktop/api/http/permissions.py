"""Which permission each route needs, decided in one place and checked before the handler.

Reads need `read`, mutations `write`, and the routes that act on the whole daemon rather than
one agent's data (pipeline, repair, maintenance, Dreaming runs, projections rebuilt from
everything, telemetry wipes, tokens, stored secrets) need `admin`. A route is a read when
its method is GET, or it is one of the POSTs that only search (`READ_POSTS`); every other
route writes. The check runs as a dependency of every router (`app.py`), so a refused caller
gets 403 `permission_denied` before its body is even validated, and nothing is read or
written.
"""

from __future__ import annotations

from fastapi import Request
from starlette.routing import Route

from signet_desktop.api.http.principal import Permission, principal_of
from signet_desktop.domain.errors import Forbidden

# POST routes that search and change nothing a caller could see as a write.
READ_POSTS: frozenset[str] = frozenset(
    {"/api/memory/recall", "/api/hooks/recall", "/api/sessions/search", "/api/knowledge/expand"}
)
# (method, path template) of the daemon-wide operations.
ADMIN_ROUTES: frozenset[tuple[str, str]] = frozenset(
    {
        ("POST", "/api/pipeline/pause"),
        ("POST", "/api/pipeline/resume"),
        ("POST", "/api/embeddings/backfill"),
        ("POST", "/api/repair/resync-vec"),
        ("GET", "/api/repair/embedding-gaps"),
        ("POST", "/api/repair/re-embed"),
        ("POST", "/api/repair/retention-sweep"),
        ("POST", "/api/maintenance/run"),
        ("POST", "/api/diagnostics/queue/repair"),
        ("POST", "/api/memory-md/rebuild"),
        ("POST", "/api/artifacts/reindex"),
        ("POST", "/api/dream/trigger"),
        ("POST", "/api/dream/passes/{pass_id}/revert"),
        ("POST", "/api/dream/passes/{pass_id}/cancel"),
        ("DELETE", "/api/telemetry/memory-search"),
        ("GET", "/api/tokens"),
        ("POST", "/api/tokens"),
        ("DELETE", "/api/tokens/{token_ref}"),
        # A stored secret is a credential the daemon's providers use (`$secret:` in
        # agent.yaml): storing or deleting one is not an agent's write. Names are `read`.
        ("POST", "/api/secrets/{name}"),
        ("DELETE", "/api/secrets/{name}"),
    }
)


def route_permission(method: str, path: str) -> Permission:
    """The permission a request to this route (its path template) needs."""
    method = method.upper()
    if (method, path) in ADMIN_ROUTES:
        return "admin"
    if method in ("GET", "HEAD") or (method == "POST" and path in READ_POSTS):
        return "read"
    return "write"


async def require_route_permission(request: Request) -> None:
    """Router dependency: 403 `permission_denied` when the caller lacks the route's permission."""
    route = request.scope.get("route")
    path = route.path if isinstance(route, Route) else request.url.path
    needed = route_permission(request.method, path)
    principal = principal_of(request)
    if not principal.may(needed):
        raise Forbidden(
            f"this token lacks the {needed!r} permission {request.method} {path} needs",
            code="permission_denied",
        )
