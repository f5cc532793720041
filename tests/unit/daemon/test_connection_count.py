"""A connection the server closes stops counting against `max_connections` at once.

uvicorn answers 503 once `len(connections)` reaches the limit, and a closed transport leaves
that set only when `connection_lost` runs on a later turn of the loop. A burst of idle
re-openers, each evicting the peer's oldest, must not fill the set in between (seen in CI:
one token holder's request answered 503 in the same turn as a burst of evictions).
"""

from __future__ import annotations

import asyncio
from typing import Any

import uvicorn
from uvicorn.server import ServerState

from signet_desktop.daemon.server import deadline_protocol

PEER_CAP = 3


class HeldTransport(asyncio.Transport):
    """A transport whose close is seen only later, as a real one's is (no connection_lost)."""

    def __init__(self, peer: tuple[str, int]) -> None:
        super().__init__()
        self._peer = peer
        self._closing = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        extra = {"peername": self._peer, "sockname": ("127.0.0.1", 7777)}
        return extra.get(name, default)

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._closing = True

    def write(self, data: Any) -> None:
        pass

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


async def _app(scope: Any, receive: Any, send: Any) -> None:
    pass


async def _open_burst(count: int) -> tuple[ServerState, list[HeldTransport]]:
    config = uvicorn.Config(app=_app, limit_concurrency=8)
    config.load()
    state = ServerState()
    protocol = deadline_protocol(10.0, 2.0, PEER_CAP)
    transports = []
    for port in range(count):
        transport = HeldTransport(("127.0.0.2", 40000 + port))
        protocol(config=config, server_state=state, app_state={}).connection_made(transport)
        transports.append(transport)
    return state, transports


def test_evicted_connections_leave_the_count_before_connection_lost() -> None:
    state, transports = asyncio.run(_open_burst(20))
    open_ones = [t for t in transports if not t.is_closing()]
    assert len(open_ones) == PEER_CAP  # the newest ones; the older were evicted
    assert open_ones == transports[-PEER_CAP:]
    assert len(state.connections) == PEER_CAP, len(state.connections)
