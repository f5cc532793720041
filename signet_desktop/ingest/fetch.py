"""Fetch a URL for document ingest: http(s) only, bounded in time, bytes and redirects.

Every hop is checked before it is requested: the scheme (http or https), the host's
addresses (loopback, private, link-local, multicast, reserved and unspecified addresses are
refused unless `allow_private` is set), and the hop count (`max_redirects`, a URL seen twice
is a loop). The response must declare an allowed content type; a `Content-Length` over the
limit is refused before any of the body is read, and the body is read in a stream that stops
at the limit, so a server that lies or sends no length costs at most `max_bytes`. The whole
fetch has one deadline (`timeout_s`), so a slow drip cannot hold the worker past it.

Each hop's host is resolved once, by the check, and the connection goes to exactly the
addresses it approved (`pinned.py`): httpx never resolves the name itself, so a DNS answer
that changes between check and connect (rebinding) cannot reach a private address. The URL
keeps its name, so the Host header, TLS SNI and certificate checks are the name's.
"""

from __future__ import annotations

import ipaddress
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from signet_desktop.ingest.errors import FetchFailed, SourceRejected

if TYPE_CHECKING:  # httpx (~0.15 s with its CLI's imports) loads at the first fetch, not at start
    import httpx

    from signet_desktop.ingest.pinned import Pins

ALLOWED_TYPES = (
    "text/",
    "application/json",
    "application/xml",
    "application/xhtml+xml",
    "application/pdf",
    "application/rss+xml",
    "application/atom+xml",
)
REDIRECTS = frozenset({301, 302, 303, 307, 308})
USER_AGENT = "signet-desktop document ingest"

Resolver = Callable[[str, int], list[str]]


@dataclass(frozen=True, slots=True)
class FetchSettings:
    """Limits of one fetch."""

    max_bytes: int
    timeout_s: float = 30.0
    max_redirects: int = 5
    allow_private: bool = False


@dataclass(frozen=True, slots=True)
class Fetched:
    """A fetched body: the final URL after redirects, its media type and charset."""

    url: str
    content_type: str
    charset: str | None
    body: bytes


def resolve(host: str, port: int) -> list[str]:
    """Every address `host` resolves to (the system resolver)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise FetchFailed(f"cannot resolve {host}: {exc.strerror}") from None
    return sorted({str(info[4][0]) for info in infos})


def is_public(address: str) -> bool:
    """False for loopback, private, link-local, multicast, reserved and unspecified addresses."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def check_hop(url: str, settings: FetchSettings, resolver: Resolver) -> tuple[str, int, list[str]]:
    """Refuse a hop that is not http(s) or (unless allowed) names a non-public address.

    Returns (host, port, addresses): the addresses the connection must use.
    """
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise SourceRejected(f"refusing to fetch {_short(url)}: only http(s) URLs are fetched")
    port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    host = parts.hostname.lower().rstrip(".")
    addresses = resolver(host, port)
    if not addresses:
        raise FetchFailed(f"cannot resolve {host}: no addresses")
    if settings.allow_private:
        return host, port, addresses
    for address in addresses:
        if not is_public(address):
            raise SourceRejected(
                f"refusing to fetch {_short(url)}: {parts.hostname} is a private, loopback or "
                "link-local address (memory.pipelineV2.documents.allowPrivateNetworks)"
            )
    return host, port, addresses


def fetch(
    url: str,
    settings: FetchSettings,
    *,
    client: httpx.Client | None = None,
    resolver: Resolver = resolve,
) -> Fetched:
    """GET `url` within `settings`; SourceRejected for what no retry fixes, else FetchFailed.

    Without `client`, connections go only to the addresses each hop's check approved; a
    `client` given (tests: a mock transport) brings its own connections.
    """
    import httpx

    from signet_desktop.ingest.pinned import PinnedTransport

    deadline = time.monotonic() + settings.timeout_s
    own = client is None
    pins: Pins = {}
    http = client or httpx.Client(
        timeout=httpx.Timeout(settings.timeout_s),
        follow_redirects=False,
        headers={"User-Agent": USER_AGENT, "Accept": "text/html, text/*;q=0.9, */*;q=0.5"},
        trust_env=False,
        transport=PinnedTransport(pins),
    )
    try:
        return _follow(http, url, settings, resolver, deadline, pins)
    finally:
        if own:
            http.close()


def _follow(
    http: httpx.Client,
    url: str,
    settings: FetchSettings,
    resolver: Resolver,
    deadline: float,
    pins: Pins,
) -> Fetched:
    import httpx

    seen = {url}
    for _ in range(settings.max_redirects + 1):
        host, port, addresses = check_hop(url, settings, resolver)
        pins[(host, port)] = tuple(addresses)  # this hop connects to these, and only these
        try:
            with http.stream("GET", url, timeout=_remaining(deadline, url)) as response:
                if response.status_code in REDIRECTS:
                    url = _next_hop(url, response, seen)
                    continue
                return _body(url, response, settings, deadline)
        except httpx.TimeoutException:
            raise FetchFailed(f"fetching {_short(url)} timed out") from None
        except httpx.HTTPError as exc:
            raise FetchFailed(f"fetching {_short(url)} failed: {exc}") from None
    raise SourceRejected(f"more than {settings.max_redirects} redirects from {_short(url)}")


def _next_hop(url: str, response: httpx.Response, seen: set[str]) -> str:
    location = response.headers.get("location")
    if not location:
        raise SourceRejected(f"{_short(url)} redirected without a Location")
    target = urljoin(url, location)
    if target in seen:
        raise SourceRejected(f"redirect loop at {_short(target)}")
    seen.add(target)
    return str(target)


def _body(url: str, response: httpx.Response, settings: FetchSettings, deadline: float) -> Fetched:
    status = response.status_code
    if status >= 400:
        message = f"{_short(url)} answered HTTP {status}"
        # Server errors and rate limits may pass; a missing or forbidden page will not.
        raise FetchFailed(message) if status >= 500 or status == 429 else SourceRejected(message)
    media, charset = _media_type(response.headers.get("content-type", ""))
    if not any(media.startswith(allowed) for allowed in ALLOWED_TYPES):
        raise SourceRejected(f"{_short(url)} is {media or 'of no declared type'}; not a document")
    declared = response.headers.get("content-length", "").strip()
    if declared.isdigit() and int(declared) > settings.max_bytes:
        raise SourceRejected(_too_big(url, settings.max_bytes, f"declares {int(declared):,}"))
    body = bytearray()
    for block in _stream(response, deadline, url):
        body += block
        if len(body) > settings.max_bytes:
            raise SourceRejected(_too_big(url, settings.max_bytes, "sent more than that"))
    return Fetched(str(response.url), media, charset, bytes(body))


def _stream(response: httpx.Response, deadline: float, url: str) -> Iterator[bytes]:
    for block in response.iter_bytes():
        yield block
        if time.monotonic() > deadline:
            raise FetchFailed(f"fetching {_short(url)} took longer than its timeout")


def _media_type(header: str) -> tuple[str, str | None]:
    media, _, params = header.partition(";")
    charset = None
    for param in params.split(";"):
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip("\"'")
    return media.strip().lower(), charset


def _remaining(deadline: float, url: str) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise FetchFailed(f"fetching {_short(url)} took longer than its timeout")
    return left


def _too_big(url: str, limit: int, what: str) -> str:
    return (
        f"{_short(url)} {what} bytes; the limit is {limit:,} "
        "(memory.pipelineV2.documents.maxContentBytes)"
    )


def _short(url: str) -> str:
    return url if len(url) <= 200 else url[:197] + "..."
