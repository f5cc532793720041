"""A scripted LLM server on loopback speaking the real wire formats, for tests.

One server answers both APIs: `POST …/chat/completions` (OpenAI-compatible) and
`POST …/messages` (Anthropic). Each request takes the next scripted step from one queue and
renders it in the format of the path it arrived on. Every request is recorded.

    def test_x(fake_llm):
        fake_llm.script(http_error(429, retry_after=0), tool_reply(call("search", '{"q": "a"}')))
        provider = OpenAICompatProvider(base_url=fake_llm.base_url, model="m")  # …/v1
        ...
        assert fake_llm.requests[0].body["tools"][0]["function"]["name"] == "search"

`base_url` ends in `/v1` (what an OpenAI-compatible client is given); `root_url` is the bare
origin (what an Anthropic client is given). Steps: `reply` (text), `tool_reply` with `call`s
(arguments are a raw string, so malformed JSON can be scripted), `http_error` (429 with
Retry-After, 500, 400 …), `slow` (answer after a delay longer than a client timeout),
`drip` (a body trickling in, each read quick, the whole slower than a client deadline),
`garbage` (a non-JSON body), `sse_stream` (an event stream where JSON was expected), `raw`
(any status, body and content type). A plain string is shorthand for `reply(string)`. With
the queue empty the server answers 418 with a message saying so (not retried by clients).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass(frozen=True, slots=True)
class ScriptedCall:
    """A tool call to return; `arguments` is sent verbatim (it may be malformed JSON)."""

    name: str
    arguments: str
    id: str | None = None


@dataclass(frozen=True, slots=True)
class Reply:
    """A successful completion: text and/or tool calls, with the usage to report."""

    text: str = ""
    calls: tuple[ScriptedCall, ...] = ()
    input_tokens: int = 10
    output_tokens: int = 5
    cache_read: int = 0
    cache_write: int = 0
    finish: str | None = None  # None: "tool_calls"/"tool_use" with calls, else "stop"/"end_turn"
    model: str | None = None  # None: echo the requested model


@dataclass(frozen=True, slots=True)
class HttpError:
    """An error status with a JSON error body in the API's own shape."""

    status: int
    message: str = "scripted error"
    retry_after: float | None = None


@dataclass(frozen=True, slots=True)
class Slow:
    """Wait `seconds` (cut short when the server closes), then answer with `then`."""

    seconds: float
    then: Step | None = None


@dataclass(frozen=True, slots=True)
class Raw:
    """Any status, body, content type and extra headers, sent as is."""

    status: int
    body: bytes
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Drip:
    """A 200 whose body arrives `chunk` bytes every `interval` seconds (each read is quick)."""

    body: bytes
    interval: float
    chunk: int = 1


Step = Reply | HttpError | Slow | Raw | Drip


def reply(text: str = "", **usage: Any) -> Reply:
    """A text answer; keywords as in `Reply` (input_tokens, output_tokens, cache_*, finish)."""
    return Reply(text=text, **usage)


def call(name: str, arguments: str | dict[str, Any], id: str | None = None) -> ScriptedCall:
    """A tool call; a dict is encoded as JSON, a string is sent verbatim."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ScriptedCall(name, raw, id)


def tool_reply(*calls: ScriptedCall, text: str = "", **usage: Any) -> Reply:
    """An answer asking for tool calls."""
    return Reply(text=text, calls=calls, **usage)


def http_error(status: int, *, retry_after: float | None = None, message: str = "") -> HttpError:
    return HttpError(status, message or f"scripted HTTP {status}", retry_after)


def slow(seconds: float, then: Step | str | None = None) -> Slow:
    return Slow(seconds, _step(then) if then is not None else None)


def drip(seconds: float, interval: float = 0.05) -> Drip:
    """A valid-looking JSON body padded to take about `seconds` to arrive."""
    size = max(int(seconds / interval), 1)
    return Drip(b" " * size + b"{}", interval)


def garbage(body: bytes = b"<html>502 Bad Gateway</html>\x00\xff not json") -> Raw:
    return Raw(200, body, "application/json")


def sse_stream() -> Raw:
    """An OpenAI-style SSE stream, as a server sends when it ignores `stream: false`."""
    chunk = {"choices": [{"delta": {"content": "hel"}, "index": 0}]}
    body = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
    return Raw(200, body, "text/event-stream")


def raw(status: int, body: bytes | str | dict[str, Any], content_type: str = "") -> Raw:
    if isinstance(body, dict):
        return Raw(status, json.dumps(body).encode(), content_type or "application/json")
    data = body.encode() if isinstance(body, str) else body
    return Raw(status, data, content_type or "application/json")


def _step(step: Step | str) -> Step:
    return reply(step) if isinstance(step, str) else step


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request the server received. `api` is "openai" or "anthropic"."""

    api: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes = field(repr=False)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        return None

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(length)
        path = self.path.split("?", 1)[0]
        if path.endswith("/chat/completions"):
            api = "openai"
        elif path.endswith("/messages"):
            api = "anthropic"
        else:
            self._send(404, b'{"error": "unknown path"}', "application/json")
            return
        try:
            body: Any = json.loads(data)
        except ValueError:
            body = None
        headers = {k.lower(): v for k, v in self.headers.items()}
        fake = self.server.fake
        fake._record(RecordedRequest(api, path, headers, body, data))
        step = fake._next()
        model = body.get("model", "") if isinstance(body, dict) else ""
        self._answer(api, step, str(model))

    def _answer(self, api: str, step: Step | None, model: str) -> None:
        if step is None:
            message = "fake_llm: no scripted response left for this request"
            self._send(418, json.dumps(_error_body(api, message)).encode(), "application/json")
        elif isinstance(step, Slow):
            if self.server.fake._closing.wait(step.seconds):
                return
            self._answer(api, step.then or reply("late answer"), model)
        elif isinstance(step, Drip):
            self._drip(step)
        elif isinstance(step, Raw):
            self._send(step.status, step.body, step.content_type, step.headers)
        elif isinstance(step, HttpError):
            extra = {}
            if step.retry_after is not None:
                extra["Retry-After"] = f"{step.retry_after:g}"
            body = json.dumps(_error_body(api, step.message)).encode()
            self._send(step.status, body, "application/json", extra)
        else:
            rendered = _openai_body(step, model) if api == "openai" else _anthropic(step, model)
            self._send(200, json.dumps(rendered).encode(), "application/json")

    def _drip(self, step: Drip) -> None:
        try:
            _drip_body(self, step)
        except (BrokenPipeError, ConnectionResetError):
            return

    def _send(
        self, status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None
    ) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            return


def _drip_body(handler: _Handler, step: Drip) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(step.body)))
    handler.end_headers()
    for start in range(0, len(step.body), step.chunk):
        if handler.server.fake._closing.wait(step.interval):
            return
        handler.wfile.write(step.body[start : start + step.chunk])
        handler.wfile.flush()


def _error_body(api: str, message: str) -> dict[str, Any]:
    if api == "anthropic":
        return {"type": "error", "error": {"type": "api_error", "message": message}}
    return {"error": {"message": message, "type": "server_error"}}


def _openai_body(step: Reply, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": step.text or None}
    if step.calls:
        message["tool_calls"] = [
            {
                "id": c.id or f"call_{index}",
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            }
            for index, c in enumerate(step.calls)
        ]
    finish = step.finish or ("tool_calls" if step.calls else "stop")
    usage: dict[str, Any] = {
        "prompt_tokens": step.input_tokens,
        "completion_tokens": step.output_tokens,
        "total_tokens": step.input_tokens + step.output_tokens,
    }
    if step.cache_read:
        usage["prompt_tokens_details"] = {"cached_tokens": step.cache_read}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "model": step.model or model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage,
    }


def _anthropic(step: Reply, model: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if step.text:
        content.append({"type": "text", "text": step.text})
    for index, c in enumerate(step.calls):
        try:
            arguments: Any = json.loads(c.arguments)
        except ValueError:
            arguments = c.arguments  # malformed: sent as a string, a shape the client rejects
        content.append(
            {"type": "tool_use", "id": c.id or f"toolu_{index}", "name": c.name, "input": arguments}
        )
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": step.model or model,
        "content": content,
        "stop_reason": step.finish or ("tool_use" if step.calls else "end_turn"),
        "usage": {
            "input_tokens": step.input_tokens,
            "output_tokens": step.output_tokens,
            "cache_read_input_tokens": step.cache_read,
            "cache_creation_input_tokens": step.cache_write,
        },
    }


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, fake: FakeLLM) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.fake = fake


class FakeLLM:
    """The scripted server; thread-safe. Use as a context manager or via the fixture."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: deque[Step] = deque()
        self._requests: list[RecordedRequest] = []
        self._closing = threading.Event()
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.02,), daemon=True
        )
        self._thread.start()
        port = self._server.server_address[1]
        self.root_url = f"http://127.0.0.1:{port}"
        self.base_url = f"{self.root_url}/v1"

    def script(self, *steps: Step | str) -> FakeLLM:
        """Append answers, served one per request in order."""
        with self._lock:
            self._queue.extend(_step(step) for step in steps)
        return self

    @property
    def requests(self) -> list[RecordedRequest]:
        """A copy of every request received so far, oldest first."""
        with self._lock:
            return list(self._requests)

    @property
    def pending(self) -> int:
        """Scripted steps not yet served."""
        with self._lock:
            return len(self._queue)

    def close(self) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def __enter__(self) -> FakeLLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _next(self) -> Step | None:
        with self._lock:
            return self._queue.popleft() if self._queue else None


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    """A running scripted LLM server, closed after the test."""
    with FakeLLM() as server:
        yield server
