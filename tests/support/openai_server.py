"""A scripted OpenAI API on loopback, for running the real Codex CLI and OpenCode offline.

Codex (a `model_providers` entry with this `base_url`) speaks the Responses API; OpenCode (a
custom provider on `@ai-sdk/openai-compatible` with this `baseURL`) speaks Chat Completions.
The server answers both under `/v1` — `POST /v1/responses` and `POST /v1/chat/completions`,
streamed as server-sent events when the request asks, else one JSON body — plus
`GET /v1/models`, and keeps every request it received, so a test can assert on exactly what
the model was shown: instructions, system prompts, injected context and messages. The reply
comes from `reply(request_body)`: a text, or a `FunctionCall` — the model calls a tool (in
Responses items as Codex reads them, or streamed Chat Completions `tool_calls` as OpenCode
reads them); the default is a fixed sentence.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class FunctionCall:
    """A scripted Responses turn that calls one tool (Codex names MCP tools by server)."""

    name: str
    arguments: dict[str, Any]
    namespace: str | None = None  # Codex groups an MCP server's tools as `mcp__<server>`


Answer = str | FunctionCall
Reply = Callable[[dict[str, Any]], Answer]
DEFAULT_REPLY = "Noted."
MODEL_PATHS = ("/v1/responses", "/v1/chat/completions")


def _default_reply(_body: dict[str, Any]) -> Answer:
    return DEFAULT_REPLY


@dataclass
class ModelServer:
    """The running server: its base URL (ending in `/v1`) and every request, in order."""

    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)

    def model_requests(self, start: int = 0) -> list[dict[str, Any]]:
        """The bodies of the model calls (responses and chat completions) from `start` on."""
        return [
            r["body"]
            for r in self.requests[start:]
            if r["method"] == "POST" and r["path"].split("?")[0] in MODEL_PATHS
        ]

    def seen_text(self, start: int = 0) -> str:
        """Everything the model was shown in the model calls from `start` on, as one string."""
        bodies = self.model_requests(start)
        return "\n".join(json.dumps(body, ensure_ascii=False) for body in bodies)


def _usage_responses(text: str) -> dict[str, Any]:
    output = max(1, len(text) // 4)
    return {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 10 + output,
    }


def _response(answer: Answer, model: str, response_id: str, item_id: str) -> dict[str, Any]:
    text = answer if isinstance(answer, str) else json.dumps(answer.arguments)
    return {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": model,
        "output": [_output_item(answer, item_id)],
        "usage": _usage_responses(text),
    }


def _output_item(answer: Answer, item_id: str) -> dict[str, Any]:
    if isinstance(answer, str):
        return _output_message(answer, item_id)
    item = {
        "type": "function_call",
        "id": item_id,
        "call_id": f"call_{item_id[3:]}",
        "name": answer.name,
        "arguments": json.dumps(answer.arguments),
        "status": "completed",
    }
    if answer.namespace is not None:
        item["namespace"] = answer.namespace
    return item


def _output_message(text: str, item_id: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": item_id,
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def _responses_events(answer: Answer, model: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """The Responses API stream for one output item: created, the item, completed."""
    response_id = f"resp_{uuid.uuid4().hex[:24]}"
    item_id = f"{'msg' if isinstance(answer, str) else 'fc'}_{uuid.uuid4().hex[:24]}"
    pending = {**_response(answer, model, response_id, item_id), "status": "in_progress"}
    pending["output"] = []
    yield "response.created", {"type": "response.created", "response": pending}
    if not isinstance(answer, str):
        done = _output_item(answer, item_id)
        added = {"type": "response.output_item.added", "output_index": 0}
        yield "response.output_item.added", {**added, "item": {**done, "arguments": ""}}
        yield (
            "response.output_item.done",
            {"type": "response.output_item.done", "output_index": 0, "item": done},
        )
        completed = _response(answer, model, response_id, item_id)
        yield "response.completed", {"type": "response.completed", "response": completed}
        return
    text = answer
    item = {**_output_message(text, item_id), "status": "in_progress", "content": []}
    yield (
        "response.output_item.added",
        {"type": "response.output_item.added", "output_index": 0, "item": item},
    )
    yield (
        "response.output_text.delta",
        {
            "type": "response.output_text.delta",
            "item_id": item_id,
            "output_index": 0,
            "content_index": 0,
            "delta": text,
        },
    )
    yield (
        "response.output_item.done",
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": _output_message(text, item_id),
        },
    )
    yield (
        "response.completed",
        {"type": "response.completed", "response": _response(text, model, response_id, item_id)},
    )


def _chat_chunks(answer: Answer, model: str) -> Iterator[dict[str, Any]]:
    """The Chat Completions stream for one assistant message or one tool call."""
    base = {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }
    yield {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}
    if isinstance(answer, str):
        delta: dict[str, Any] = {"content": answer}
        finish = "stop"
        output = max(1, len(answer) // 4)
    else:
        call = {
            "index": 0,
            "id": f"call_{uuid.uuid4().hex[:24]}",
            "type": "function",
            "function": {"name": answer.name, "arguments": json.dumps(answer.arguments)},
        }
        delta, finish, output = {"tool_calls": [call]}, "tool_calls", 20
    yield {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    yield {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}
    usage = {"prompt_tokens": 10, "completion_tokens": output, "total_tokens": 10 + output}
    yield {**base, "choices": [], "usage": usage}


def _chat_completion(text: str, model: str) -> dict[str, Any]:
    output = max(1, len(text) // 4)
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": output, "total_tokens": 10 + output},
    }


def _handler(server: ModelServer, reply: Reply, lock: threading.Lock) -> type:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _record(self, body: Any) -> None:
            with lock:
                server.requests.append({"method": self.command, "path": self.path, "body": body})

        def _send_json(self, status: int, value: Any) -> None:
            data = json.dumps(value).encode("utf-8")
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _start_stream(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            self.close_connection = True

        def do_GET(self) -> None:
            self._record(None)
            if self.path.split("?")[0] == "/v1/models":
                models = [{"id": "scripted-model", "object": "model", "owned_by": "signet-test"}]
                self._send_json(200, {"object": "list", "data": models})
                return
            self._send_json(404, {"error": {"message": "not found", "type": "not_found"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw.decode("utf-8")) if raw else {}
            except ValueError:
                body = {"_raw": raw.decode("utf-8", errors="replace")}
            self._record(body)
            path = self.path.split("?")[0]
            if path not in MODEL_PATHS:
                self._send_json(404, {"error": {"message": "not found", "type": "not_found"}})
                return
            model = str(body.get("model") or "scripted-model")
            answer = reply(body)
            if path == "/v1/responses":
                if not body.get("stream"):
                    item = f"msg_{uuid.uuid4().hex[:24]}"
                    self._send_json(200, _response(answer, model, f"resp_{item[4:]}", item))
                    return
                self._start_stream()
                for name, data in _responses_events(answer, model):
                    self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
                return
            if not body.get("stream"):
                text = answer if isinstance(answer, str) else ""  # streamed tool calls only
                self._send_json(200, _chat_completion(text, model))
                return
            self._start_stream()
            for chunk in _chat_chunks(answer, model):
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

    return Handler


@contextmanager
def model_server(reply: Reply = _default_reply) -> Iterator[ModelServer]:
    """Serve the scripted API on a free loopback port for the block's duration."""
    lock = threading.Lock()
    holder = ModelServer(url="")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(holder, reply, lock))
    httpd.daemon_threads = True
    holder.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    thread = threading.Thread(target=httpd.serve_forever, name="openai-model-server", daemon=True)
    thread.start()
    try:
        yield holder
    finally:
        httpd.shutdown()
        httpd.server_close()
