"""uvicorn, adapted to be embedded: no signal handling of its own, and a "started" callback.

uvicorn's `Server.serve()` installs SIGINT/SIGTERM handlers and re-raises the signal after a
graceful stop, which would turn our clean shutdown into a death by signal. The runtime owns
signals (an asyncio handler headless, a Qt-friendly one in the desktop shell) and calls
`request_stop()`, so here signal capture is a no-op.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Callable, Generator
from typing import Any

import uvicorn

GRACEFUL_SHUTDOWN_SECONDS = 5
KEEP_ALIVE_SECONDS = 5


def server_config(app: Any, host: str, port: int) -> uvicorn.Config:
    """The uvicorn settings for the daemon: our logging, lifespan on, no server header.

    Forwarded headers are ignored: the real client address decides loopback trust.
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
