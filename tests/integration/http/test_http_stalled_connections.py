"""Over a real socket: a client stalled mid-headers or mid-body is dropped at the read
deadline, /health keeps answering while many stall, and the connection limit answers 503."""

from __future__ import annotations

import select
import socket
import time
from urllib.parse import urlsplit

import httpx
from http_helpers import row_counts
from support.daemon import serve_app

from signet_desktop.service.facade import SignetService

READ_TIMEOUT = 0.5
STALLED = 50
# Generous: a loaded 2-core CI box may be late to run the timer, never early.
LATE_MARGIN = 2.0

MID_HEADERS = b"GET /api/memories HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Still-Typing: "
MID_BODY = (
    b"POST /api/memory/remember HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
    b'{"content": "half a memory'
)
SILENT = b""


def _address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    return parts.hostname, parts.port


def _stall(
    address: tuple[str, int], count: int, kinds: tuple[bytes, ...] = (MID_HEADERS, MID_BODY, SILENT)
) -> list[tuple[socket.socket, float]]:
    """Open `count` connections that each send part of a request (or nothing) and stop."""
    opened = []
    for index in range(count):
        sock = socket.create_connection(address, timeout=5)
        opened.append((sock, time.monotonic()))
        sock.sendall(kinds[index % len(kinds)])
    return opened


def _close(opened: list[tuple[socket.socket, float]]) -> None:
    for sock, _ in opened:
        sock.close()


def _lifetimes(opened: list[tuple[socket.socket, float]], within: float) -> list[float]:
    """Seconds from each socket's opening until the server closed it (EOF or reset)."""
    started = dict((sock.fileno(), at) for sock, at in opened)
    pending = {sock.fileno(): sock for sock, _ in opened}
    lifetimes: list[float] = []
    deadline = time.monotonic() + within
    while pending and time.monotonic() < deadline:
        readable, _, _ = select.select(list(pending.values()), [], [], 0.05)
        for sock in readable:
            try:
                data = sock.recv(4096)
            except ConnectionResetError:
                data = b""
            assert data == b"", f"a stalled client was answered: {data[:80]!r}"
            lifetimes.append(time.monotonic() - started[sock.fileno()])
            del pending[sock.fileno()]
    assert not pending, f"{len(pending)} of {len(opened)} stalled connections still open"
    return lifetimes


def test_stalled_clients_are_dropped_while_health_answers(service: SignetService) -> None:
    before = row_counts(service)
    # Every stalled socket comes from one peer: lift the per-peer cap so only the deadline acts.
    options = {"read_timeout": READ_TIMEOUT, "max_connections": 200, "peer_cap": STALLED + 1}
    with serve_app(service, server_options=options) as url:
        opened = _stall(_address(url), STALLED)
        try:
            with httpx.Client(base_url=url, timeout=2.0) as client:
                for _ in range(5):
                    assert client.get("/health").status_code == 200
            lifetimes = _lifetimes(opened, within=READ_TIMEOUT + LATE_MARGIN + 1)
        finally:
            _close(opened)
        assert len(lifetimes) == STALLED
        assert min(lifetimes) >= READ_TIMEOUT * 0.9, "dropped before the deadline"
        assert max(lifetimes) <= READ_TIMEOUT + LATE_MARGIN
        # A keep-alive client idle between complete requests is not cut by the deadline.
        with httpx.Client(base_url=url, timeout=2.0) as client:
            assert client.get("/health").status_code == 200
            time.sleep(READ_TIMEOUT * 1.5)
            assert client.get("/health").status_code == 200
    assert row_counts(service) == before  # the half-sent memory never reached a handler


def test_connection_limit_answers_503_until_stalled_clients_are_dropped(
    service: SignetService,
) -> None:
    limit, read_timeout = 8, 1.5
    options = {"read_timeout": read_timeout, "max_connections": limit}
    with serve_app(service, server_options=options) as url:
        opened = _stall(_address(url), limit, kinds=(MID_HEADERS, SILENT))
        try:
            # The server accepts the stalled sockets asynchronously: ask until it counted them.
            statuses = []
            until = time.monotonic() + read_timeout * 0.6
            while 503 not in statuses and time.monotonic() < until:
                statuses.append(httpx.get(f"{url}/health", timeout=2.0).status_code)
            assert statuses[-1] == 503, statuses
            _lifetimes(opened, within=read_timeout + LATE_MARGIN + 1)
        finally:
            _close(opened)
        assert httpx.get(f"{url}/health", timeout=2.0).status_code == 200
