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

GRACEFUL_SHUTDOWN_SECONDS = 5
KEEP_ALIVE_SECONDS = 5
# A whole request (headers and body, at most 1 MiB) must arrive within this; loopback
# clients send one in milliseconds, so only a stalled or hostile client ever meets it.
REQUEST_READ_SECONDS = 10.0
# Open connections beyond this are answered 503 (stalled ones count until their deadline).
MAX_CONNECTIONS = 256
MAX_HEADER_BYTES = 16 * 1024  # h11's own default, stated: a longer head is answered 400

# The client has not finished sending its request: not started, or mid-headers, or mid-body.
_READING = (h11.IDLE, h11.SEND_BODY)


class DeadlineH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for reading each request.

    uvicorn has no header or body read timeout: its keep-alive timer runs only between
    requests and stops at the first byte, and nothing at all runs before the first request,
    so a client that sends part of a request holds its connection forever. Here, from the
    moment a connection waits for a request (it opened, or its previous response finished),
    the whole request must arrive within `read_timeout` seconds or the connection is closed.
    A slow handler or a long response (the event stream) is not affected: the deadline only
    looks at what the client still owes.
    """

    read_timeout: float = REQUEST_READ_SECONDS
    _read_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_read_deadline()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm_read_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_read_deadline()
        super().connection_lost(exc)

    def _arm_read_deadline(self) -> None:
        self._cancel_read_deadline()
        if not self.transport.is_closing():
            self._read_deadline = self.loop.call_later(self.read_timeout, self._read_overdue)

    def _cancel_read_deadline(self) -> None:
        if self._read_deadline is not None:
            self._read_deadline.cancel()
            self._read_deadline = None

    def _read_overdue(self) -> None:
        self._read_deadline = None
        if self.conn.their_state in _READING and not self.transport.is_closing():
            # The gate waiting on this body then sees a disconnect and answers nothing.
            self.transport.close()


def deadline_protocol(read_timeout: float) -> type[DeadlineH11Protocol]:
    """The protocol class with its own read deadline (tests use a short one)."""
    if read_timeout <= 0:
        raise ValueError("read_timeout must be positive")
    return type("DeadlineH11Protocol", (DeadlineH11Protocol,), {"read_timeout": read_timeout})


def server_config(
    app: Any,
    host: str,
    port: int,
    *,
    read_timeout: float = REQUEST_READ_SECONDS,
    max_connections: int = MAX_CONNECTIONS,
) -> uvicorn.Config:
    """The uvicorn settings for the daemon: our logging, lifespan on, no server header.

    Forwarded headers are ignored: the real client address decides loopback trust. Each
    request must arrive within `read_timeout`, and past `max_connections` open connections
    a request is answered 503, so stalled clients cannot pin the daemon.
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
        http=deadline_protocol(read_timeout),
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
