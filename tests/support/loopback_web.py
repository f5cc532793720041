"""A small web server on loopback for the fetch tests: pages, limits, drips, redirects, errors.

Routes (GET):
  /page            an HTML article with a <title>
  /text            text/plain
  /big-declared    declares a Content-Length over any small limit (sends nothing more)
  /big-chunked     no Content-Length; streams 64 KiB blocks for ever (chunked)
  /drip            text/plain, one byte every 0.2 s, 100 bytes
  /binary          application/octet-stream
  /missing         404     /broken   500
  /loop-a ↔ /loop-b                 a redirect loop
  /to-ftp          redirects to ftp://
  /to-page         redirects to /page
  /hops/<n>        redirects to /hops/<n-1> until /hops/0 (text)
Every request is counted in `hits` by path.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PAGE = (
    "<html><head><title>Loopback Article</title><script>var hidden = 1;</script></head>"
    "<body><nav>Home | About | Contact</nav><article><h1>Why local memory</h1>"
    "<p>Local-first memory keeps every agent's notes on the machine that wrote them.</p>"
    "<p>Recall finds a chunk again by its words or its meaning.</p></article></body></html>"
)


class _Handler(BaseHTTPRequestHandler):
    server: LoopbackWeb  # type: ignore[assignment]

    def log_message(self, format: str, *args: object) -> None:
        return None

    def do_GET(self) -> None:
        self.server.hits[self.path] += 1
        path = self.path
        if path == "/page":
            self._send(200, "text/html; charset=utf-8", PAGE.encode())
        elif path == "/text":
            self._send(200, "text/plain", b"plain words for a document\n" * 20)
        elif path == "/host":  # which name the client asked for (URL fetching pins addresses)
            self._send(200, "text/plain", f"host={self.headers.get('Host')}".encode())
        elif path == "/big-declared":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(50 * 1024 * 1024))
            self.end_headers()
        elif path == "/big-chunked":
            self._chunked()
        elif path == "/drip":
            self._drip()
        elif path == "/binary":
            self._send(200, "application/octet-stream", b"\x00\x01" * 100)
        elif path == "/missing":
            self._send(404, "text/plain", b"not here")
        elif path == "/broken":
            self._send(500, "text/plain", b"oops")
        elif path in ("/loop-a", "/loop-b"):
            self._redirect("/loop-b" if path == "/loop-a" else "/loop-a")
        elif path == "/to-ftp":
            self._redirect("ftp://127.0.0.1/file.txt")
        elif path == "/to-page":
            self._redirect("/page")
        elif path.startswith("/hops/"):
            left = int(path.rsplit("/", 1)[1])
            if left:
                self._redirect(f"/hops/{left - 1}")
            else:
                self._send(200, "text/plain", b"arrived after the hops")
        else:
            self._send(404, "text/plain", b"unknown")

    def _send(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _redirect(self, location: str) -> None:
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _chunked(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        block = b"a" * 65536
        try:
            for _ in range(2000):
                self.wfile.write(b"%x\r\n" % len(block) + block + b"\r\n")
        except (BrokenPipeError, ConnectionResetError):
            return

    def _drip(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", "100")
        self.end_headers()
        try:
            for _ in range(100):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.2)
        except (BrokenPipeError, ConnectionResetError):
            return


class LoopbackWeb(ThreadingHTTPServer):
    """The server; `url(path)` names a route on it."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.hits: Counter[str] = Counter()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{path}"


@contextmanager
def serving() -> Iterator[LoopbackWeb]:
    """A running server, shut down afterwards."""
    server = LoopbackWeb()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
