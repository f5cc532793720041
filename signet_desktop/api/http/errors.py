"""Every failure as `{"error": ..., "code": ...}` with the right status; never a stack trace."""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from signet_desktop.api.views import error_details_json
from signet_desktop.domain.errors import (
    Conflict,
    Forbidden,
    InvalidInput,
    NotFound,
    SignetError,
    Unavailable,
)

logger = logging.getLogger("signet_desktop.api.http")

STATUS_BY_ERROR: tuple[tuple[type[SignetError], int], ...] = (
    (InvalidInput, 400),
    (NotFound, 404),
    (Forbidden, 403),
    (Conflict, 409),
    (Unavailable, 503),
)
CODE_BY_STATUS = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    415: "unsupported_media_type",
}
MAX_REPORTED_ERRORS = 10
HTTP_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
_FASTAPI_BODY_PARSE_DETAIL = "There was an error parsing the body"


# Control, format (bidi overrides, zero-width), separator and surrogate code points.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


class FieldProblem(BaseModel):
    """One schema error of a 422: where, and what is wrong (never the input)."""

    model_config = ConfigDict(populate_by_name=True)

    path: str
    in_: str = Field(alias="in", description="body, query, path or header")
    message: str
    type: str


class ErrorBody(BaseModel):
    """Every error response: `{"error", "code"}` plus, by case, `fields` or `requestId`."""

    model_config = ConfigDict(extra="allow")

    error: str = Field(description="what went wrong, for a person (control characters escaped)")
    code: str = Field(description="a stable machine-readable tag, e.g. not_found")
    fields: list[FieldProblem] | None = Field(default=None, description="422 only")
    requestId: str | None = Field(default=None, description="500 only")


def escape_text(text: str) -> str:
    """`text` with control, bidi and other invisible code points as `\\uXXXX` (one line)."""
    if text.isprintable():
        return text
    return "".join(
        f"\\u{ord(ch):04x}" if unicodedata.category(ch) in _UNSAFE_CATEGORIES else ch for ch in text
    )


def error_response(status: int, message: str, code: str, /, **extra: Any) -> JSONResponse:
    """The one error body shape. The message may quote a caller's id: it is escaped here."""
    body = {"error": escape_text(message), "code": code, **extra}
    return JSONResponse(body, status_code=status)


def allowed_methods(request: Request) -> list[str]:
    """Every method some route serves at this path (a 405's `Allow`), in a fixed order.

    Asked of the router with a fresh scope per method, because Starlette's 405 names only the
    first route whose path matched (GET for `/api/memory/{id}`, not PATCH and DELETE).
    """
    routes = request.app.router.routes
    allowed = []
    for method in HTTP_METHODS:
        probe: Scope = {
            "type": "http",
            "method": method,
            "path": request.scope["path"],
            "root_path": request.scope.get("root_path", ""),
        }
        if any(route.matches(probe)[0] is Match.FULL for route in routes):
            allowed.append(method)
    return allowed


def status_for(exc: SignetError) -> int:
    """HTTP status for a core error, by its class."""
    for cls, status in STATUS_BY_ERROR:
        if isinstance(exc, cls):
            return status
    return 400


# pydantic prefixes messages raised by our validators; a user needs only what follows.
_PYDANTIC_PREFIXES = ("Value error, ", "Assertion failed, ")


def _plain(message: object) -> str:
    text = str(message)
    for prefix in _PYDANTIC_PREFIXES:
        text = text.removeprefix(prefix)
    return text


def describe_validation(errors: Sequence[Any]) -> tuple[str, list[dict[str, str]]]:
    """A readable one-line summary plus per-field details (never echoing the input)."""
    fields: list[dict[str, str]] = []
    for error in errors[:MAX_REPORTED_ERRORS]:
        loc = [str(part) for part in error.get("loc", ())]
        where = loc[0] if loc else "body"
        path = escape_text(".".join(loc[1:]) or where)
        kind = str(error.get("type", "invalid"))
        message = "unknown field" if kind == "extra_forbidden" else _plain(error.get("msg", kind))
        fields.append({"path": path, "in": where, "message": message, "type": kind})
    summary = "; ".join(f"{f['path']}: {f['message']}" for f in fields)
    if len(errors) > MAX_REPORTED_ERRORS:
        summary += f"; and {len(errors) - MAX_REPORTED_ERRORS} more"
    return f"invalid request: {summary}", fields


async def _signet_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, SignetError)
    extra = error_details_json(exc.code, exc.details)
    return error_response(status_for(exc), exc.message, exc.code, **extra)


async def _validation_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = list(exc.errors())
    for error in errors:
        if error.get("type") == "json_invalid":
            detail = (error.get("ctx") or {}).get("error", "malformed JSON")
            loc = error.get("loc", ())
            position = f" at position {loc[1]}" if len(loc) > 1 else ""
            return error_response(400, f"invalid JSON{position}: {detail}", "invalid_json")
    message, fields = describe_validation(errors)
    return error_response(422, message, "invalid_request", fields=fields)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    status = exc.status_code
    if status == 400 and exc.detail == _FASTAPI_BODY_PARSE_DETAIL:
        return error_response(400, "request body is not valid JSON", "invalid_json")
    message = exc.detail if isinstance(exc.detail, str) else "request failed"
    response = error_response(status, message.lower(), CODE_BY_STATUS.get(status, "error"))
    for name, value in (exc.headers or {}).items():
        response.headers[name] = value
    if status == 405:  # Starlette names only the first matching route's methods
        response.headers["allow"] = ", ".join(allowed_methods(request))
    return response


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers that turn exceptions into error bodies."""
    app.add_exception_handler(SignetError, _signet_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)


class ErrorBoundary:
    """Pure ASGI: an unexpected exception becomes a logged 500 with the request id, once."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception:
            request_id = scope.get("state", {}).get("request_id")
            logger.exception(
                "unhandled error in %s %s (request %s)",
                scope.get("method"),
                scope.get("path"),
                request_id,
            )
            if started:
                raise
            response = error_response(500, "internal error", "internal_error", requestId=request_id)
            await response(scope, receive, send)
