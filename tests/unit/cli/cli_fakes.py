"""A scripted fake daemon on a real loopback socket, recording every request it gets."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


@dataclass
class FakeDaemon:
    """Routes map (METHOD, path) to (status, body); a str body is sent as-is (not JSON)."""

    url: str = ""
    routes: dict[tuple[str, str], tuple[int, Any]] = field(default_factory=dict)
    requests: list[Recorded] = field(default_factory=list)

    scripts: dict[tuple[str, str], list[tuple[int, Any]]] = field(default_factory=dict)

    def reply(self, method: str, path: str, status: int, body: Any) -> None:
        self.routes[(method, path)] = (status, body)

    def script(self, method: str, path: str, *replies: tuple[int, Any]) -> None:
        """Answer successive requests with `replies` in order; the last one then repeats."""
        self.scripts[(method, path)] = list(replies)

    def answer(self, method: str, path: str) -> tuple[int, Any]:
        queue = self.scripts.get((method, path))
        if queue:
            return queue.pop(0) if len(queue) > 1 else queue[0]
        return self.routes.get((method, path), (404, {"error": "not found"}))


def make_handler(fake: FakeDaemon) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            fake.requests.append(
                Recorded(
                    self.command,
                    parts.path,
                    parse_qs(parts.query),
                    {k.lower(): v for k, v in self.headers.items()},
                    json.loads(raw) if raw else None,
                )
            )
            status, body = fake.answer(self.command, parts.path)
            payload = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            self.send_response(status)
            kind = "text/plain" if isinstance(body, str) else "application/json"
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_DELETE = do_PATCH = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
