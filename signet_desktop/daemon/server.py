"""uvicorn, adapted to be embedded: no signal handling of its own, and a "started" callback.

uvicorn's `Server.serve()` installs SIGINT/SIGTERM handlers and re-raises the signal after a
graceful stop, which would turn our clean shutdown into a death by signal. The runtime owns
signals (an asyncio handler headless, a Qt-friendly one in the desktop shell) and calls
`request_stop()`, so here signal capture is a no-op.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Callable, Generator
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

GRACEFUL_SHUTDOWN_SECONDS = 1  # in-flight requests finish; longer ones are cut (quit <= 2 s)
KEEP_ALIVE_SECONDS = 5
# A whole request (headers and body, at most 1 MiB) must arrive within this; loopback
# clients send one in milliseconds, so only a stalled or hostile client ever meets it.
REQUEST_READ_SECONDS = 10.0
# Open connections beyond this are answered 503 (stalled ones count until their deadline).
MAX_CONNECTIONS = 256
# A connection no request has authenticated on yet (the request gate's verdict) must send a
# request head within this; a token holder's client sends one at once.
UNAUTHENTICATED_HEAD_SECONDS = 2.0
# At most this many unauthenticated connections per peer address: one more evicts that
# peer's oldest idle one (no request head yet), so an idle re-opener churns its own sockets
# and never fills MAX_CONNECTIONS, while a fresh connection that sends a request is served.
MAX_UNAUTHENTICATED_PER_PEER = 32
MAX_HEADER_BYTES = 16 * 1024  # h11's own default, stated: a longer head is answered 400

# The client has not finished sending its request: not started, or mid-headers, or mid-body.
_READING = (h11.IDLE, h11.SEND_BODY)


class DeadlineH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for reading each request, and fairness.

    uvicorn has no header or body read timeout: its keep-alive timer runs only between
    requests and stops at the first byte, and nothing at all runs before the first request,
    so a client that sends part of a request holds its connection forever. Here, from the
    moment a connection waits for a request (it opened, or its previous response finished),
    the whole request must arrive within `read_timeout` seconds or the connection is closed.
    A slow handler or a long response (the event stream) is not affected: the deadline only
    looks at what the client still owes.

    Until a request on it has been authenticated (the gate's `authenticated` in the request
    scope), a connection is held to more: its request head must arrive within `head_timeout`,
    and its peer may hold at most `peer_cap` such connections (the oldest idle one is closed
    to make room), so idle sockets cannot spend the connection limit token holders need.
    """

    read_timeout: float = REQUEST_READ_SECONDS
    head_timeout: float = UNAUTHENTICATED_HEAD_SECONDS
    peer_cap: int = MAX_UNAUTHENTICATED_PER_PEER
    _read_deadline: asyncio.TimerHandle | None = None
    _head_deadline: asyncio.TimerHandle | None = None
    _authenticated: bool = False
    _waiting_since: float = 0.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._waiting_since = self.loop.time()
        if self._make_room():
            self._arm_read_deadline()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._waiting_since = self.loop.time()
        self._arm_read_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_read_deadline()
        super().connection_lost(exc)

    @property
    def authenticated(self) -> bool:
        """A request on this connection passed the gate's token (or trust) check."""
        if not self._authenticated:
            scope = getattr(self, "scope", None)
            state = scope.get("state") if isinstance(scope, dict) else None
            self._authenticated = isinstance(state, dict) and state.get("authenticated") is True
        return self._authenticated

    def idle_unauthenticated(self) -> bool:
        """Unauthenticated and waiting for a request head (nothing of a request underway)."""
        return (
            not self.authenticated
            and self.conn.their_state is h11.IDLE
            and not self.transport.is_closing()
            and (self.cycle is None or self.cycle.response_complete)
        )

    def _make_room(self) -> bool:
        """Keep this peer within `peer_cap` unauthenticated connections; False if closed."""
        peer = self.client[0] if self.client else None
        others = [
            c
            for c in self.connections
            if isinstance(c, DeadlineH11Protocol)
            and c is not self
            and (c.client[0] if c.client else None) == peer
            and not c.authenticated
            and not c.transport.is_closing()
        ]
        excess = len(others) + 1 - self.peer_cap
        if excess <= 0:
            return True
        idle = sorted((c for c in others if c.idle_unauthenticated()), key=_waiting_since)
        for connection in idle[:excess]:
            connection.shut()
        if len(idle) >= excess:
            return True
        self.shut()  # every other one is mid-request: this one waits its turn
        return False

    def shut(self) -> None:
        """Close this connection and stop counting it against `max_connections` at once.

        The transport reports `connection_lost` only on a later turn of the loop; a burst of
        evictions would otherwise still count, and a token holder's request handled in the
        same turn would be answered 503 by uvicorn's limit.
        """
        self.transport.close()
        self.connections.discard(self)

    def _arm_read_deadline(self) -> None:
        self._cancel_read_deadline()
        if self.transport.is_closing():
            return
        self._read_deadline = self.loop.call_later(self.read_timeout, self._read_overdue)
        if not self.authenticated and self.head_timeout < self.read_timeout:
            self._head_deadline = self.loop.call_later(self.head_timeout, self._head_overdue)

    def _cancel_read_deadline(self) -> None:
        for timer in (self._read_deadline, self._head_deadline):
            if timer is not None:
                timer.cancel()
        self._read_deadline = self._head_deadline = None

    def _read_overdue(self) -> None:
        self._read_deadline = None
        if self.conn.their_state in _READING and not self.transport.is_closing():
            # The gate waiting on this body then sees a disconnect and answers nothing.
            self.shut()

    def _head_overdue(self) -> None:
        self._head_deadline = None
        if self.idle_unauthenticated():
            self.shut()


def _waiting_since(connection: DeadlineH11Protocol) -> float:
    return connection._waiting_since


def deadline_protocol(
    read_timeout: float,
    head_timeout: float = UNAUTHENTICATED_HEAD_SECONDS,
    peer_cap: int = MAX_UNAUTHENTICATED_PER_PEER,
) -> type[DeadlineH11Protocol]:
    """The protocol class with its own deadlines and per-peer cap (tests use small ones)."""
    if read_timeout <= 0 or head_timeout <= 0:
        raise ValueError("read_timeout and head_timeout must be positive")
    if peer_cap < 1:
        raise ValueError("peer_cap must be at least 1")
    attributes = {"read_timeout": read_timeout, "head_timeout": head_timeout, "peer_cap": peer_cap}
    return type("DeadlineH11Protocol", (DeadlineH11Protocol,), attributes)


def server_config(
    app: Any,
    host: str,
    port: int,
    *,
    read_timeout: float = REQUEST_READ_SECONDS,
    max_connections: int = MAX_CONNECTIONS,
    head_timeout: float = UNAUTHENTICATED_HEAD_SECONDS,
    peer_cap: int = MAX_UNAUTHENTICATED_PER_PEER,
) -> uvicorn.Config:
    """The uvicorn settings for the daemon: our logging, lifespan on, no server header.

    Forwarded headers are ignored: the real client address decides loopback trust. Each
    request must arrive within `read_timeout`, and past `max_connections` open connections
    a request is answered 503, so stalled clients cannot pin the daemon. Unauthenticated
    connections get `head_timeout` for their request head and `peer_cap` per peer address.
    """
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_config=None,
        lifespan="on",
        access_log=True,
        server_header=False,
        proxy_headers=False,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        http=deadline_protocol(read_timeout, head_timeout, peer_cap),
        limit_concurrency=max_connections,
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
    )


class QuietServer(uvicorn.Server):
    """A uvicorn server that leaves signals alone and reports when it accepts connections."""

    def __init__(self, config: uvicorn.Config, on_started: Callable[[], None]) -> None:
        super().__init__(config)
        self._on_started = on_started

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started and not self.should_exit:
            self._on_started()
