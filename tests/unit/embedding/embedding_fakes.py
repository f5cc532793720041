"""A real loopback HTTP server speaking Ollama, OpenAI and llama.cpp embedding wire formats."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from signet_desktop.embedding.hashing import HashEmbedder


@dataclass
class Reply:
    """One scripted answer: a status, a JSON value (or raw bytes), headers and a delay."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass
class Seen:
    """One request as the server received it."""

    path: str
    headers: dict[str, str]
    body: Any


class FakeEmbedServer:
    """Answers with scripted replies first, then with real-format vectors of `dims` width."""

    def __init__(self, dims: int = 8) -> None:
        self.dims = dims
        self.script: list[Reply | Callable[[Seen], Reply]] = []
        self.requests: list[Seen] = []
        self._lock = threading.Lock()
        self._embedder = HashEmbedder(dims)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def vectors(self, texts: list[str]) -> list[list[float]]:
        """What a healthy server returns for `texts` (deterministic, unit-norm)."""
        return [[float(x) for x in row] for row in self._embedder.embed(texts)]

    def answer(self, seen: Seen) -> Reply:
        with self._lock:
            self.requests.append(seen)
            scripted = self.script.pop(0) if self.script else None
        if scripted is not None:
            return scripted(seen) if callable(scripted) else scripted
        return self.real_reply(seen)

    def real_reply(self, seen: Seen) -> Reply:
        """The body each real server sends for a successful request on `seen.path`."""
        body = seen.body if isinstance(seen.body, dict) else {}
        if seen.path == "/api/embed":
            texts = _as_list(body.get("input"))
            return Reply(
                body={
                    "model": body.get("model"),
                    "embeddings": self.vectors(texts),
                    "total_duration": 14143917,
                    "load_duration": 1019500,
                    "prompt_eval_count": 8,
                }
            )
        if seen.path.endswith("/embeddings"):
            texts = _as_list(body.get("input"))
            data = [
                {"object": "embedding", "index": i, "embedding": vec}
                for i, vec in enumerate(self.vectors(texts))
            ]
            usage = {"prompt_tokens": 8, "total_tokens": 8}
            return Reply(
                body={"object": "list", "data": data, "model": body.get("model"), "usage": usage}
            )
        if seen.path == "/embedding":
            texts = _as_list(body.get("content"))
            return Reply(
                body=[{"index": i, "embedding": [vec]} for i, vec in enumerate(self.vectors(texts))]
            )
        return Reply(status=404, body={"error": f"no route {seen.path}"})


def _as_list(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value or [])


def _handler_for(server: FakeEmbedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw
            seen = Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            reply = server.answer(seen)
            if reply.delay_s:
                time.sleep(reply.delay_s)
            payload = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body)
            data = payload if isinstance(payload, bytes) else payload.encode()
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout tests); nothing to answer

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
