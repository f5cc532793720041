"""Secrets in replies: a caller without the `admin` permission never sees one verbatim.

`ReplyRedaction` sits inside the request gate (which names the `Principal`). For a caller that
holds `admin` (the local user, the configured token) it does nothing. For any other caller it
rewrites every reply body that carries stored text — memories, document chunks, transcripts,
documents, MCP results — through the content-safety redaction (`safety/redact.py`): JSON
bodies value by value (keys and structure untouched), each `data:` line of an event stream
likewise, plain text and Markdown as a whole. Anything else (binary) passes unchanged.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from signet_desktop.api.http.principal import Principal
from signet_desktop.safety.redact import redact_secrets

_JSON = ("application/json", "application/problem+json")
_TEXT = ("text/plain", "text/markdown")
_STREAM = "text/event-stream"


def redact_value(value: Any) -> Any:
    """Every string in a JSON value redacted; keys, numbers and structure kept."""
    if isinstance(value, str):
        return redact_secrets(value)
    if isinstance(value, list):
        return [redact_value(item) for item in value]
    if isinstance(value, dict):
        return {key: redact_value(item) for key, item in value.items()}
    return value


def redact_json(body: bytes) -> bytes:
    """A JSON body with its strings redacted (a body that is not JSON is redacted as text)."""
    try:
        value = json.loads(body)
    except ValueError:
        return redact_secrets(body.decode("utf-8", "replace")).encode("utf-8")
    return json.dumps(redact_value(value), ensure_ascii=False, separators=(",", ":")).encode()


def redact_stream(chunk: bytes) -> bytes:
    """An event-stream chunk with each `data:` line's JSON (or text) redacted."""
    lines = chunk.decode("utf-8", "replace").split("\n")
    for index, line in enumerate(lines):
        if line.startswith("data:"):
            payload = line[5:].lstrip()
            lines[index] = "data: " + redact_json(payload.encode()).decode()
    return "\n".join(lines).encode("utf-8")


def _shows_secrets(scope: Scope) -> bool:
    principal = scope.get("state", {}).get("principal")
    return isinstance(principal, Principal) and principal.may("admin")


class ReplyRedaction:
    """ASGI middleware: redact secrets in replies to callers without `admin`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or _shows_secrets(scope):
            await self.app(scope, receive, send)
            return
        reply = _Reply(send)
        await self.app(scope, receive, reply.send)


class _Reply:
    """One response on its way out: buffered JSON/text, streamed event chunks, others as-is."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self._start: Message | None = None
        self._kind = ""
        self._body: list[bytes] = []

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = dict(message.get("headers", []))
            media = headers.get(b"content-type", b"").decode("latin-1").split(";")[0].strip()
            self._kind = (
                "json"
                if media in _JSON
                else "text"
                if media in _TEXT
                else "stream"
                if media == _STREAM
                else ""
            )
            if self._kind in ("json", "text"):
                self._start = message  # held until the body is known (Content-Length changes)
                return
        elif message["type"] == "http.response.body" and self._kind == "stream":
            message = {**message, "body": redact_stream(message.get("body", b""))}
        elif message["type"] == "http.response.body" and self._start is not None:
            self._body.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            await self._flush()
            return
        await self._send(message)

    async def _flush(self) -> None:
        assert self._start is not None
        raw = b"".join(self._body)
        body = (
            redact_json(raw)
            if self._kind == "json"
            else redact_secrets(raw.decode("utf-8", "replace")).encode("utf-8")
        )
        headers = [
            (name, value)
            for name, value in self._start.get("headers", [])
            if name != b"content-length"
        ]
        headers.append((b"content-length", str(len(body)).encode()))
        await self._send({**self._start, "headers": headers})
        await self._send({"type": "http.response.body", "body": body})
