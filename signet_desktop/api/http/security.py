"""The request gate, as pure ASGI middleware: request id, Host, Origin, bearer token, body size.

It runs before any route: a refused request never reaches a handler, and a body is read in
full (up to the limit) before the app sees it, so an oversized upload is answered 413 without
touching the service. Pure ASGI rather than BaseHTTPMiddleware so streaming responses and
cancellation behave.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import re
import uuid
from urllib.parse import urlsplit

import anyio.to_thread
from starlette.datastructures import MutableHeaders
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from signet_desktop.api.http.principal import CONFIGURED_TOKEN, LOCAL_USER, Principal
from signet_desktop.api.http.ratelimit import RateLimiter, retry_after, route_rules
from signet_desktop.api.http.settings import (
    HttpSettings,
    is_wildcard_host,
    normalise_host,
)
from signet_desktop.domain.tokens import TOKEN_PREFIX, ApiToken
from signet_desktop.service.tokens import TokenService

log = logging.getLogger(__name__)

REQUEST_ID_HEADER = "x-signet-request-id"
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
PUBLIC_PATHS = frozenset({"/health", "/health/live", "/health/ready"})
# Answered only for their own secret, not the API token: a harness pass's tools (its
# `Authorization` carries the pass secret, `api/mcp/dream_endpoint.py`).
SELF_AUTHENTICATED_PATHS = frozenset({"/mcp/dream"})
# Headers the gate decides on: two copies could make it and the app disagree, so refuse them.
SINGLE_HEADERS = frozenset({"host", "origin", "authorization", "content-length"})
_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_PORT = re.compile(r"\d{1,5}")


def split_host_header(value: str) -> str | None:
    """The host part of a Host header (`[::1]:3850` -> `::1`), or None when malformed."""
    value = value.strip()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        rest = value[end + 1 :]
        if rest and not (rest.startswith(":") and _PORT.fullmatch(rest[1:])):
            return None
        return normalise_host(value[: end + 1])
    if value.count(":") == 1:
        host, port = value.split(":")
        return normalise_host(host) if _PORT.fullmatch(port) else None
    return normalise_host(value) or None  # bare name, or a bare IPv6 like ::1


def _client_is_loopback(scope: Scope) -> bool:
    client = scope.get("client")
    if not client:
        return False
    try:
        return ipaddress.ip_address(client[0]).is_loopback
    except ValueError:
        return False


def _headers(scope: Scope) -> tuple[dict[str, str], bool]:
    """Headers by lowercase name, and whether a header we decide on was sent twice."""
    headers: dict[str, str] = {}
    repeated = False
    for raw_name, raw_value in scope.get("headers", []):
        name = raw_name.decode("latin-1").lower()
        repeated = repeated or (name in SINGLE_HEADERS and name in headers)
        headers[name] = raw_value.decode("latin-1")
    return headers, repeated


def _refusal(
    status: int, message: str, code: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse({"error": message, "code": code}, status_code=status, headers=headers)


class RequestGate:
    """Refuses foreign Hosts, cross-site Origins, missing tokens and oversized bodies."""

    def __init__(
        self, app: ASGIApp, settings: HttpSettings, tokens: TokenService | None = None
    ) -> None:
        self.app = app
        self.settings = settings
        self.tokens = tokens
        self.allowed_hosts = set(LOOPBACK_NAMES)
        bind = normalise_host(settings.host)
        self.any_host = is_wildcard_host(settings.host)
        if not self.any_host:
            self.allowed_hosts.add(bind)
        self.limiter = RateLimiter(settings.rate_limits) if settings.rate_limits else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers, repeated = _headers(scope)
        request_id = headers.get(REQUEST_ID_HEADER, "")
        if not _REQUEST_ID.fullmatch(request_id):
            request_id = uuid.uuid4().hex
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        refusal: JSONResponse | None
        try:
            scoped = await self.scoped_token(headers)
        except Exception:  # fail closed: a token we cannot look up opens nothing
            log.exception("looking up a scoped token failed")
            refusal = _refusal(503, "token store unavailable", "unavailable")
        else:
            refusal = self.check(scope, headers, scoped)
        if repeated:
            refusal = _refusal(
                400, "repeated Host, Origin, Authorization or Content-Length", "bad_request"
            )
        if scope["type"] == "websocket":
            if refusal is not None:
                await send({"type": "websocket.close", "code": 1008})
                return
            await self.app(scope, receive, send)
            return
        send = _tag_responses(send, request_id)
        body = b""
        if refusal is None:
            try:
                limit = self.settings.body_limit(str(scope.get("path", "")))
                body, refusal = await self.read_body(receive, headers, limit)
            except _ClientGone:
                return  # a partial body must never reach a handler, and nobody awaits an answer
        if refusal is None:
            refusal = self.rate_limited(scope, headers, body)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)

    def check(
        self, scope: Scope, headers: dict[str, str], scoped: ApiToken | None = None
    ) -> JSONResponse | None:
        """Host, then Origin, then bearer token; a response when the request is refused.

        A wildcard bind answers any Host only for a caller that must show the token: one
        served on trust alone (no token configured, or `hybrid` and on loopback) is what a
        DNS-rebinding page in a local browser looks like, so its Host must be ours. A
        cross-site Origin is refused whatever the method, so such a page can neither change
        nor read anything. A scoped token (`scoped`, found by the caller's bearer string)
        names the principal even where trust alone would serve the caller: it never widens
        what a caller may do, and an expired or revoked one is refused (401).
        """
        configured = self.presents_token(headers)
        presented = configured or scoped is not None
        on_trust = self.trusted_without_token(scope) and not presented
        host = split_host_header(headers.get("host", ""))
        host_free = self.any_host and not on_trust
        if host is None or not (host_free or host in self.allowed_hosts):
            return _refusal(403, "host not allowed", "host_not_allowed")
        origin = headers.get("origin")
        if origin is not None and not self.origin_allowed(origin):
            return _refusal(403, "cross-site request refused", "origin_not_allowed")
        if scoped is not None:
            refusal = _token_refusal(scoped)
            if refusal is not None:
                return refusal
        authenticated = presented or on_trust
        scope["state"]["authenticated"] = authenticated
        if authenticated:
            scope["state"]["principal"] = (
                token_principal(scoped)
                if scoped is not None
                else CONFIGURED_TOKEN
                if configured
                else LOCAL_USER
            )
        path = scope.get("path")
        if not authenticated and path not in PUBLIC_PATHS | SELF_AUTHENTICATED_PATHS:
            return _refusal(
                401,
                "unauthorized: send 'Authorization: Bearer <auth.token or a scoped token>'",
                "unauthorized",
                {"WWW-Authenticate": 'Bearer realm="signet"'},
            )
        return None

    async def scoped_token(self, headers: dict[str, str]) -> ApiToken | None:
        """The scoped token whose secret the caller shows (any state), or None.

        Only a bearer string shaped like one of ours is looked up (off the event loop: it is
        a database read); the configured `auth.token` never is.
        """
        if self.tokens is None:
            return None
        scheme, _, presented = headers.get("authorization", "").partition(" ")
        presented = presented.strip()
        if scheme.lower() != "bearer" or not presented.startswith(TOKEN_PREFIX):
            return None
        if self.presents_token(headers):
            return None
        return await anyio.to_thread.run_sync(self.tokens.find, presented)

    def origin_allowed(self, origin: str) -> bool:
        """Only pages served from this machine's loopback (or the bind host) may mutate."""
        try:
            parts = urlsplit(origin.strip())
            hostname = parts.hostname
            _ = parts.port  # raises ValueError for a malformed port
        except ValueError:
            return False
        if parts.scheme not in ("http", "https") or not hostname:
            return False
        return normalise_host(hostname) in self.allowed_hosts

    def trusted_without_token(self, scope: Scope) -> bool:
        """No token configured, or `hybrid` mode and a caller on a loopback address."""
        if not self.settings.auth_token:
            return True
        return self.settings.trust_loopback_clients and _client_is_loopback(scope)

    def presents_token(self, headers: dict[str, str]) -> bool:
        """The request carries `Authorization: Bearer <the configured token>`."""
        token = self.settings.auth_token
        if not token:
            return False
        scheme, _, presented = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer":
            return False
        return hmac.compare_digest(presented.strip().encode(), token.encode())

    def rate_limited(
        self, scope: Scope, headers: dict[str, str], body: bytes
    ) -> JSONResponse | None:
        """429 with Retry-After when this caller used up a limit of this route (team/hybrid).

        The caller is who the gate authenticated (`rate_key`), never a header it chose.
        """
        if self.limiter is None:
            return None
        rules = route_rules(
            scope.get("method", "GET"), scope.get("path", ""), scope.get("query_string", b""), body
        )
        if not rules:
            return None
        exhausted = self.limiter.acquire(rules, rate_key(scope))
        if exhausted is None:
            return None
        name, wait = exhausted
        limit, seconds = self.limiter.limits[name], retry_after(wait)
        return _refusal(
            429,
            f"rate limit exceeded: at most {limit.max} {name} calls per "
            f"{limit.window_seconds:g} s (auth.rateLimits.{name}); retry after {seconds} s",
            "rate_limited",
            {"Retry-After": seconds},
        )

    async def read_body(
        self, receive: Receive, headers: dict[str, str], limit: int | None = None
    ) -> tuple[bytes, JSONResponse | None]:
        """The whole request body, or a refusal: 413 past the limit, 400 for non-UTF-8 JSON."""
        limit = self.settings.max_body_bytes if limit is None else limit
        declared = headers.get("content-length")
        if declared is not None:
            if not declared.strip().isdigit():
                return b"", _refusal(400, "invalid Content-Length", "bad_request")
            if int(declared) > limit:
                return b"", _too_large(limit)
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                raise _ClientGone  # went away (or the server's read deadline closed it)
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                return b"", _too_large(limit)
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if body and _is_json(headers.get("content-type")):
            try:
                body.decode("utf-8")
            except UnicodeDecodeError as exc:
                return b"", _refusal(
                    400,
                    f"request body is not valid UTF-8 (byte {exc.start})",
                    "invalid_utf8",
                )
        return body, None


def token_principal(token: ApiToken) -> Principal:
    """The principal a live scoped token stands for: its permissions and agents."""
    return Principal(
        name=f"token:{token.name}",
        local=False,
        permissions=token.permissions,
        agents=token.agents,
        token_id=token.id,
    )


def _token_refusal(token: ApiToken) -> JSONResponse | None:
    """401 `token_revoked` / `token_expired` for a token that no longer opens anything."""
    state = token.state(TokenService.now())
    if state == "active":
        return None
    when = token.revoked_at if state == "revoked" else token.expires_at
    return _refusal(
        401,
        f"token {token.name!r} was {state} at {when}; create a new one (`signet token create`)",
        f"token_{state}",
        {"WWW-Authenticate": 'Bearer realm="signet", error="invalid_token"'},
    )


def rate_key(scope: Scope) -> str:
    """Whom rate limits count against: the scoped token's id, the configured token, or the
    peer address (the local user, or anyone the gate served on trust) — never a header."""
    principal = scope.get("state", {}).get("principal")
    if isinstance(principal, Principal) and principal.token_id is not None:
        return f"token:{principal.token_id}"
    if principal is CONFIGURED_TOKEN:
        return "token:configured"
    client = scope.get("client")
    return f"peer:{client[0]}" if client else "peer:unknown"


class _ClientGone(Exception):
    """The client disconnected before its request body was complete."""


def _too_large(limit: int) -> JSONResponse:
    return _refusal(413, f"request body exceeds {limit:,} bytes", "payload_too_large")


def _is_json(content_type: str | None) -> bool:
    if not content_type:
        return True  # we parse bodies without a Content-Type as JSON (Signet's clients)
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive that yields the buffered body once, then defers to the server (disconnects)."""
    delivered = False

    async def replay() -> Message:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _tag_responses(send: Send, request_id: str) -> Send:
    """Put the request id on every response start."""

    async def tagged(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = MutableHeaders(scope=message)
            headers[REQUEST_ID_HEADER] = request_id
        await send(message)

    return tagged
