"""A scripted Anthropic Messages API on loopback, for running the real Claude Code offline.

Claude Code sends every model request to `ANTHROPIC_BASE_URL`; this server answers
`POST /v1/messages` (streamed as server-sent events when the request asks, else one JSON body)
and `POST /v1/messages/count_tokens`, and keeps every request body it received, so a test can
assert on exactly what the model was shown: the system prompt, hook context and messages.
The reply text comes from `reply(request_body)`; the default echoes a fixed sentence.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = Callable[[dict[str, Any]], str]
DEFAULT_REPLY = "Noted."


def _default_reply(_body: dict[str, Any]) -> str:
    return DEFAULT_REPLY


@dataclass
class ModelServer:
    """The running server: its base URL and every request it received, in order."""

    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)

    def message_requests(self) -> list[dict[str, Any]]:
        """The bodies of `POST /v1/messages` (not token counts)."""
        return [
            r["body"]
            for r in self.requests
            if r["path"].startswith("/v1/messages?") or r["path"] == "/v1/messages"
        ]

    def seen_text(self) -> str:
        """Everything the model was shown across all message requests, as one string."""
        return "\n".join(json.dumps(body, ensure_ascii=False) for body in self.message_requests())


def _events(text: str, model: str) -> Iterator[tuple[str, dict[str, Any]]]:
    message_id = f"msg_{uuid.uuid4().hex[:24]}"
    usage = {"input_tokens": 10, "output_tokens": max(1, len(text) // 4)}
    yield (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        },
    )
    yield (
        "content_block_start",
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "text", "text": ""},
        },
    )
    yield (
        "content_block_delta",
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": text},
        },
    )
    yield "content_block_stop", {"type": "content_block_stop", "index": 0}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": usage,
        },
    )
    yield "message_stop", {"type": "message_stop"}


def _message(text: str, model: str) -> dict[str, Any]:
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": max(1, len(text) // 4)},
    }


def _handler(server: ModelServer, reply: Reply, lock: threading.Lock) -> type:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send_json(self, status: int, value: Any) -> None:
            data = json.dumps(value).encode("utf-8")
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._send_json(200, {})

        def do_HEAD(self) -> None:
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw.decode("utf-8")) if raw else {}
            except ValueError:
                body = {"_raw": raw.decode("utf-8", errors="replace")}
            with lock:
                server.requests.append({"path": self.path, "body": body})
            if self.path.startswith("/v1/messages/count_tokens"):
                self._send_json(200, {"input_tokens": max(1, len(raw) // 4)})
                return
            if not self.path.startswith("/v1/messages"):
                self._send_json(404, {"type": "error", "error": {"type": "not_found_error"}})
                return
            model = str(body.get("model") or "claude-sonnet-4-5")
            text = reply(body)
            if not body.get("stream"):
                self._send_json(200, _message(text, model))
                return
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            for name, data in _events(text, model):
                chunk = f"event: {name}\ndata: {json.dumps(data)}\n\n"
                self.wfile.write(chunk.encode("utf-8"))
            self.wfile.flush()
            self.close_connection = True

    return Handler


@contextmanager
def model_server(reply: Reply = _default_reply) -> Iterator[ModelServer]:
    """Serve the scripted API on a free loopback port for the block's duration."""
    lock = threading.Lock()
    holder = ModelServer(url="")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(holder, reply, lock))
    httpd.daemon_threads = True
    holder.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, name="model-server", daemon=True)
    thread.start()
    try:
        yield holder
    finally:
        httpd.shutdown()
        httpd.server_close()
