"""Where the daemon listens: host/port resolution from flags and environment, and the bind.

Precedence: `--host` > `SIGNET_BIND` > `SIGNET_HOST` > 127.0.0.1 and `--port` > `SIGNET_PORT` >
3850. Signet clients find the daemon the same way (`SIGNET_DAEMON_URL`, else
`SIGNET_HOST`/`SIGNET_PORT`). The socket is bound here, before the server starts, so `--port 0`
knows its real port in time for the pid file and the "listening" line.
"""

from __future__ import annotations

import errno
import ipaddress
import socket
from collections.abc import Mapping
from dataclasses import dataclass

from signet_desktop.domain.address import DEFAULT_HOST, DEFAULT_PORT

HOST_ENV_VARS = ("SIGNET_BIND", "SIGNET_HOST")
PORT_ENV_VAR = "SIGNET_PORT"
LISTEN_BACKLOG = 128


class AddressError(Exception):
    """The address cannot be used. `usage` is True for a bad value, False for a busy port."""

    def __init__(self, message: str, *, usage: bool) -> None:
        super().__init__(message)
        self.usage = usage


@dataclass(frozen=True, slots=True)
class ListenAddress:
    """A host as the user gave it and a port (0 = pick a free one)."""

    host: str
    port: int


def parse_port(value: str, source: str) -> int:
    """A TCP port number from text, or AddressError naming where the text came from."""
    try:
        port = int(value.strip())
    except ValueError:
        raise AddressError(f"{source} must be a port number, got {value!r}", usage=True) from None
    if not 0 <= port <= 65535:
        raise AddressError(f"{source} must be between 0 and 65535, got {port}", usage=True)
    return port


def resolve_address(host: str | None, port: int | None, env: Mapping[str, str]) -> ListenAddress:
    """Apply flag > environment > default precedence to host and port."""
    chosen_host = host.strip() if host else ""
    for name in HOST_ENV_VARS:
        if chosen_host:
            break
        chosen_host = env.get(name, "").strip()
    if port is None:
        raw = env.get(PORT_ENV_VAR, "").strip()
        port = parse_port(raw, PORT_ENV_VAR) if raw else DEFAULT_PORT
    elif not 0 <= port <= 65535:
        raise AddressError(f"--port must be between 0 and 65535, got {port}", usage=True)
    return ListenAddress(chosen_host or DEFAULT_HOST, port)


def is_loopback(host: str) -> bool:
    """True for localhost and loopback literals (127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def connect_host(host: str) -> str:
    """The address a process on this machine connects to for a daemon bound to `host`."""
    bare = host.strip("[]")
    if bare in ("", "0.0.0.0"):
        return "127.0.0.1"
    if bare == "::":
        return "::1"
    return bare


def http_url(host: str, port: int) -> str:
    """`http://host:port`, bracketing IPv6 literals."""
    bare = host.strip("[]")
    shown = f"[{bare}]" if ":" in bare else bare
    return f"http://{shown}:{port}"


def bind(address: ListenAddress) -> socket.socket:
    """A listening TCP socket on the address; AddressError says why not."""
    host = address.host.strip("[]")
    try:
        infos = socket.getaddrinfo(
            host, address.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror as exc:
        raise AddressError(f"cannot resolve host {host!r}: {exc.strerror}", usage=True) from None
    family, kind, proto, _, sockaddr = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        # Lets a restart reuse the port while old connections sit in TIME_WAIT; two live
        # listeners on one port are still refused on POSIX.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(sockaddr)
        sock.listen(LISTEN_BACKLOG)
    except OSError as exc:
        sock.close()
        raise _bind_error(address, exc) from None
    return sock


def _bind_error(address: ListenAddress, exc: OSError) -> AddressError:
    where = f"{address.host}:{address.port}"
    if exc.errno == errno.EADDRINUSE:
        return AddressError(
            f"cannot listen on {where}: the port is already in use by another program "
            "(choose another with --port or SIGNET_PORT)",
            usage=False,
        )
    if exc.errno == errno.EADDRNOTAVAIL:
        return AddressError(
            f"cannot listen on {where}: no such address on this machine", usage=True
        )
    return AddressError(f"cannot listen on {where}: {exc.strerror or exc}", usage=False)
