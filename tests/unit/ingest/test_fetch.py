"""URL fetching against a loopback server: limits, drips, types, errors, redirects, addresses."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from signet_desktop.ingest.errors import FetchFailed, SourceRejected
from signet_desktop.ingest.fetch import FetchSettings, fetch, is_public
from tests.support.loopback_web import LoopbackWeb, serving

OPEN = FetchSettings(max_bytes=1024 * 1024, timeout_s=5, max_redirects=5, allow_private=True)


@pytest.fixture(scope="module")
def web() -> Iterator[LoopbackWeb]:
    with serving() as server:
        yield server


def test_an_html_page_is_fetched(web: LoopbackWeb) -> None:
    fetched = fetch(web.url("/page"), OPEN)
    assert fetched.content_type == "text/html" and fetched.charset == "utf-8"
    assert b"Loopback Article" in fetched.body


def test_a_declared_length_over_the_limit_is_refused_before_reading(web: LoopbackWeb) -> None:
    with pytest.raises(SourceRejected, match="declares 52,428,800 bytes; the limit is"):
        fetch(web.url("/big-declared"), OPEN)


def test_a_body_without_length_stops_at_the_limit(web: LoopbackWeb) -> None:
    started = time.monotonic()
    with pytest.raises(SourceRejected, match="sent more than that"):
        fetch(web.url("/big-chunked"), OPEN)
    assert time.monotonic() - started < 5


def test_a_slow_drip_is_cut_at_the_deadline(web: LoopbackWeb) -> None:
    started = time.monotonic()
    with pytest.raises(FetchFailed, match=r"longer than its timeout|timed out"):
        fetch(web.url("/drip"), FetchSettings(max_bytes=4096, timeout_s=1.0, allow_private=True))
    assert time.monotonic() - started < 3  # the drip alone would take 20 s


def test_a_wrong_content_type_is_refused(web: LoopbackWeb) -> None:
    with pytest.raises(SourceRejected, match="application/octet-stream; not a document"):
        fetch(web.url("/binary"), OPEN)


def test_404_is_final_and_500_may_pass(web: LoopbackWeb) -> None:
    with pytest.raises(SourceRejected, match="HTTP 404"):
        fetch(web.url("/missing"), OPEN)
    with pytest.raises(FetchFailed, match="HTTP 500"):
        fetch(web.url("/broken"), OPEN)


def test_redirects_are_followed_within_the_bound(web: LoopbackWeb) -> None:
    assert fetch(web.url("/to-page"), OPEN).url.endswith("/page")
    assert fetch(web.url("/hops/5"), OPEN).body == b"arrived after the hops"
    with pytest.raises(SourceRejected, match="more than 5 redirects"):
        fetch(web.url("/hops/6"), OPEN)


def test_a_redirect_loop_is_refused(web: LoopbackWeb) -> None:
    with pytest.raises(SourceRejected, match="redirect loop"):
        fetch(
            web.url("/loop-a"), FetchSettings(max_bytes=4096, max_redirects=10, allow_private=True)
        )


def test_a_redirect_to_another_scheme_is_refused(web: LoopbackWeb) -> None:
    with pytest.raises(SourceRejected, match="only http"):
        fetch(web.url("/to-ftp"), OPEN)


def test_private_addresses_are_refused_unless_allowed(web: LoopbackWeb) -> None:
    before = web.hits["/text"]
    forbidden = FetchSettings(max_bytes=4096, allow_private=False)
    with pytest.raises(SourceRejected, match="private, loopback or link-local"):
        fetch(web.url("/text"), forbidden)
    assert web.hits["/text"] == before  # refused before any request was made
    for address in ("10.1.2.3", "192.168.1.1", "169.254.169.254", "::1", "fe80::1", "0.0.0.0"):
        assert not is_public(address), address
    assert is_public("93.184.216.34") and not is_public("::ffff:127.0.0.1")


def test_each_redirect_hop_is_checked_again() -> None:
    """A public page that redirects to a private address: the second hop is refused."""
    requested: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requested.append(str(request.url))
        return httpx.Response(302, headers={"Location": "http://intranet.test/admin"})

    addresses = {"public.test": ["93.184.216.34"], "intranet.test": ["10.0.0.5"]}
    client = httpx.Client(transport=httpx.MockTransport(handler), follow_redirects=False)
    with pytest.raises(SourceRejected, match=r"intranet\.test is a private"):
        fetch(
            "http://public.test/start",
            FetchSettings(max_bytes=4096),
            client=client,
            resolver=lambda host, port: addresses[host],
        )
    assert requested == ["http://public.test/start"]
