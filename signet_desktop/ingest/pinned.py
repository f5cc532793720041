"""An httpx transport that connects only to the addresses the SSRF check approved.

The check resolves a hop's host and judges every address; if httpx then resolved the name a
second time, a DNS answer that changed in between (rebinding: public for the check, private
for the connection) would reach the private address. Here the connection is made to the
checked address itself: the network backend is handed the pins (host, port) -> addresses
before each hop and connects to those, never resolving the name. The URL keeps its host, so
the `Host` header, TLS SNI and certificate verification still use the name, not the address.
A host with no pin is refused rather than resolved.
"""

from __future__ import annotations

from collections.abc import Iterable

import httpcore
import httpx

Pins = dict[tuple[str, int], tuple[str, ...]]


class PinnedBackend(httpcore.NetworkBackend):
    """httpcore's blocking socket backend, connecting to pinned addresses only."""

    def __init__(self, pins: Pins) -> None:
        self.pins = pins
        self._sockets = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        addresses = self.pins.get((host.lower().rstrip("."), port))
        if not addresses:
            raise httpcore.ConnectError(f"{host}:{port} was not checked; refusing to connect")
        failure: httpcore.ConnectError | None = None
        for address in addresses:
            try:
                return self._sockets.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except httpcore.ConnectError as exc:
                failure = exc
        assert failure is not None
        raise failure

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("unix sockets are never fetched")

    def sleep(self, seconds: float) -> None:
        self._sockets.sleep(seconds)


class PinnedTransport(httpx.HTTPTransport):
    """httpx's transport over a pool whose connections go to the pinned addresses.

    httpx 0.28 takes no network backend, so the pool it built is replaced by one with the
    same TLS context and ours (the transport's request handling, errors included, is kept).
    """

    def __init__(self, pins: Pins) -> None:
        super().__init__(retries=0, trust_env=False)
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False),
            http1=True,
            http2=False,
            retries=0,
            network_backend=PinnedBackend(pins),
        )
