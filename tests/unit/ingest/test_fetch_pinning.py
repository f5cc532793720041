"""The SSRF check's addresses are the ones connected to: DNS rebinding cannot reach a private
address, and the request still names the host (Host header) it was made for."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from signet_desktop.ingest.errors import FetchFailed, SourceRejected
from signet_desktop.ingest.fetch import FetchSettings, fetch
from tests.support.loopback_web import LoopbackWeb, serving

PUBLIC = "93.184.216.34"


@pytest.fixture(scope="module")
def web() -> Iterator[LoopbackWeb]:
    with serving() as server:
        yield server


class Rebinding:
    """A resolver that answers public first, then private (a rebinding DNS server)."""

    def __init__(self, first: str, then: str) -> None:
        self.answers = [first, then]
        self.asked = 0

    def __call__(self, host: str, port: int) -> list[str]:
        answer = self.answers[min(self.asked, len(self.answers) - 1)]
        self.asked += 1
        return [answer]


def test_a_rebinding_answer_never_reaches_the_private_address(web: LoopbackWeb) -> None:
    """`localhost` checked as public, then answering 127.0.0.1, which the system resolver
    would give httpx too: the connection goes to the checked address, never to loopback."""
    port = web.server_address[1]
    resolver = Rebinding(PUBLIC, "127.0.0.1")
    before = web.hits["/text"]
    settings = FetchSettings(max_bytes=4096, timeout_s=1.5, allow_private=False)
    with pytest.raises(FetchFailed):
        fetch(f"http://localhost:{port}/text", settings, resolver=resolver)
    assert resolver.asked == 1  # resolved once, by the check; never again
    assert web.hits["/text"] == before  # the loopback server was never reached


def test_the_connection_uses_the_checked_address_and_keeps_the_host_name(
    web: LoopbackWeb,
) -> None:
    """A name only our resolver knows: reaching the server proves the pinned connect, and
    the server sees the name (Host header, as TLS SNI would be), not the address."""
    port = web.server_address[1]
    resolver = Rebinding("127.0.0.1", "10.9.9.9")
    settings = FetchSettings(max_bytes=4096, timeout_s=5, allow_private=True)
    fetched = fetch(f"http://pinned-name.test:{port}/host", settings, resolver=resolver)
    assert fetched.body == f"host=pinned-name.test:{port}".encode()
    assert resolver.asked == 1


def test_every_redirect_hop_is_pinned_to_its_own_check(web: LoopbackWeb) -> None:
    port = web.server_address[1]
    seen: list[str] = []

    def resolver(host: str, port_: int) -> list[str]:
        seen.append(host)
        return ["127.0.0.1"]

    settings = FetchSettings(max_bytes=4096, timeout_s=5, allow_private=True)
    fetched = fetch(f"http://hop-name.test:{port}/to-page", settings, resolver=resolver)
    assert fetched.url.endswith("/page") and seen == ["hop-name.test", "hop-name.test"]


def test_a_private_first_answer_is_still_refused_before_connecting(web: LoopbackWeb) -> None:
    before = web.hits["/text"]
    with pytest.raises(SourceRejected, match="private, loopback or link-local"):
        fetch(
            web.url("/text"),
            FetchSettings(max_bytes=4096),
            resolver=Rebinding("127.0.0.1", PUBLIC),
        )
    assert web.hits["/text"] == before
