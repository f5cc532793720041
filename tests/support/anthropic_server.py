"""A scripted Anthropic Messages API on loopback, for running the real Claude Code offline.

Claude Code sends every model request to `ANTHROPIC_BASE_URL`; this server answers
`POST /v1/messages` (streamed as server-sent events when the request asks, else one JSON body)
and `POST /v1/messages/count_tokens`, and keeps every request body it received, so a test can
assert on exactly what the model was shown: the system prompt, hook context and messages.
The reply comes from `reply(request_body)`: a text, or a `ToolUse` (the model calls a tool,
`stop_reason: tool_use`); the default echoes a fixed sentence.
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


@dataclass(frozen=True)
class ToolUse:
    """A scripted model turn that calls one tool (Claude Code names MCP tools `mcp__S__T`)."""

    name: str
    input: dict[str, Any]
    text: str = ""  # an optional text block before the call


Reply = Callable[[dict[str, Any]], "str | ToolUse"]
DEFAULT_REPLY = "Noted."


def _default_reply(_body: dict[str, Any]) -> str | ToolUse:
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


def _blocks(answer: str | ToolUse) -> list[dict[str, Any]]:
    if isinstance(answer, str):
        return [{"type": "text", "text": answer}]
    blocks: list[dict[str, Any]] = [{"type": "text", "text": answer.text}] if answer.text else []
    call_id = f"toolu_{uuid.uuid4().hex[:24]}"
    return [
        *blocks,
        {"type": "tool_use", "id": call_id, "name": answer.name, "input": answer.input},
    ]


def _stop_reason(answer: str | ToolUse) -> str:
    return "end_turn" if isinstance(answer, str) else "tool_use"


def _usage(blocks: list[dict[str, Any]]) -> dict[str, int]:
    return {"input_tokens": 10, "output_tokens": max(1, len(json.dumps(blocks)) // 4)}


def _events(answer: str | ToolUse, model: str) -> Iterator[tuple[str, dict[str, Any]]]:
    blocks = _blocks(answer)
    yield (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": f"msg_{uuid.uuid4().hex[:24]}",
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
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": start},
        )
        yield (
            "content_block_delta",
            {"type": "content_block_delta", "index": index, "delta": delta},
        )
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": _stop_reason(answer), "stop_sequence": None},
            "usage": _usage(blocks),
        },
    )
    yield "message_stop", {"type": "message_stop"}


def _message(answer: str | ToolUse, model: str) -> dict[str, Any]:
    blocks = _blocks(answer)
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": _stop_reason(answer),
        "stop_sequence": None,
        "usage": _usage(blocks),
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
            answer = reply(body)
            if not body.get("stream"):
                self._send_json(200, _message(answer, model))
                return
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            for name, data in _events(answer, model):
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
