"""Fixtures for CLI unit tests: a fake daemon on loopback and a URL where nothing listens."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer

import pytest
from cli_fakes import FakeDaemon, make_handler
from support.daemon import closed_loopback_url


@pytest.fixture
def fake_daemon() -> Iterator[FakeDaemon]:
    """A running fake daemon; `fake_daemon.url` is its base URL."""
    fake = FakeDaemon()
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(fake))
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield fake
    server.shutdown()
    server.server_close()
    thread.join(5)


@pytest.fixture
def closed_url() -> str:
    """A loopback URL where nothing listens (connection refused)."""
    return closed_loopback_url()
