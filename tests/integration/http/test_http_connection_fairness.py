"""Over real sockets: idle re-openers cannot spend the connection limit token holders need.

An attacker keeps re-opening connections that never send a byte; a token holder meanwhile
makes fresh-connection requests from another address. Unauthenticated connections get a short
head deadline and a per-peer cap (the peer's oldest idle one is evicted), so the attacker never
fills the limit and the token holder is always served. (A token holder behind the attacker's
own address shares its cap: no per-peer rule can tell them apart before a request arrives.)
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

import httpx
from support.daemon import serve_app

from signet_desktop.api.http.settings import HttpSettings
from signet_desktop.service.facade import SignetService

TOKEN = "fairness-token"
LIMIT = 24  # max_connections: the attacker alone could fill it many times over
PEER_CAP = 6
HEAD_TIMEOUT = 0.5
READ_TIMEOUT = 5.0
ATTACK_SOCKETS = 3 * LIMIT
OPTIONS = {"read_timeout": READ_TIMEOUT, "max_connections": LIMIT,
           "head_timeout": HEAD_TIMEOUT, "peer_cap": PEER_CAP}  # fmt: skip
LATE_MARGIN = 2.0  # a loaded 2-core box may run a timer late, never early


def _address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    return parts.hostname, parts.port


@contextmanager
def _re_opener(address: tuple[str, int], source: str) -> Iterator[list[int]]:
    """A thread that keeps ATTACK_SOCKETS idle connections open from `source`, re-opening
    every one the server closes; yields a one-item list counting the connections opened."""
    stop = threading.Event()
    opened = [0]

    def attack() -> None:
        held: list[socket.socket] = []
        while not stop.is_set():
            alive = []
            for sock in held:
                try:
                    sock.setblocking(False)
                    closed = sock.recv(1) == b""
                except BlockingIOError:
                    closed = False
                except OSError:
                    closed = True
                if closed:
                    sock.close()
                else:
                    alive.append(sock)
            held = alive
            while len(held) < ATTACK_SOCKETS and not stop.is_set():
                try:
                    held.append(socket.create_connection(address, 2, (source, 0)))
                    opened[0] += 1
                except OSError:
                    break
            time.sleep(0.01)
        for sock in held:
            sock.close()

    thread = threading.Thread(target=attack, daemon=True)
    thread.start()
    try:
        time.sleep(HEAD_TIMEOUT)  # let the attack fill everything it can
        yield opened
    finally:
        stop.set()
        thread.join(5)


def _token_holder_statuses(url: str, count: int) -> list[int]:
    """`count` requests, each on a fresh connection, with the token."""
    headers = {"authorization": f"Bearer {TOKEN}"}
    statuses = []
    for _ in range(count):
        with httpx.Client(base_url=url, timeout=5.0, headers=headers) as client:
            statuses.append(client.get("/api/memories").status_code)
    return statuses


def test_token_holders_keep_service_while_another_peer_reopens_idle_sockets(
    service: SignetService,
) -> None:
    with serve_app(service, HttpSettings(auth_token=TOKEN), server_options=OPTIONS) as url:
        with _re_opener(_address(url), "127.0.0.2") as opened:
            statuses = _token_holder_statuses(url, 40)
        # The attacker did try: far more connections than the limit, and it kept re-opening.
        assert opened[0] > LIMIT, opened
    assert statuses == [200] * len(statuses), statuses


def test_an_idle_unauthenticated_connection_gets_the_short_head_deadline(
    service: SignetService,
) -> None:
    with serve_app(service, HttpSettings(auth_token=TOKEN), server_options=OPTIONS) as url:
        address = _address(url)
        idle = socket.create_connection(address, timeout=READ_TIMEOUT + LATE_MARGIN)
        started = time.monotonic()
        assert idle.recv(1) == b""  # closed by the server, having answered nothing
        lifetime = time.monotonic() - started
        idle.close()
        assert HEAD_TIMEOUT * 0.9 <= lifetime <= HEAD_TIMEOUT + LATE_MARGIN, lifetime
        assert lifetime < READ_TIMEOUT

        # An authenticated keep-alive connection is not cut at the head deadline.
        with httpx.Client(base_url=url, timeout=5.0) as client:
            headers = {"authorization": f"Bearer {TOKEN}"}
            assert client.get("/api/memories", headers=headers).status_code == 200
            time.sleep(HEAD_TIMEOUT * 2)
            assert client.get("/api/memories", headers=headers).status_code == 200


def test_per_peer_cap_evicts_the_oldest_idle_connection(service: SignetService) -> None:
    options = {**OPTIONS, "head_timeout": READ_TIMEOUT}  # only the cap acts here
    with serve_app(service, HttpSettings(auth_token=TOKEN), server_options=options) as url:
        address = _address(url)
        first = [socket.create_connection(address, timeout=3) for _ in range(PEER_CAP)]
        time.sleep(0.2)  # the server has accepted them all
        extra = socket.create_connection(address, timeout=3)
        try:
            assert first[0].recv(1) == b""  # the oldest idle one made room
            extra.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert extra.recv(64).startswith(b"HTTP/1.1 200")
        finally:
            for sock in [*first, extra]:
                sock.close()
