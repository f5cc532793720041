"""Fixtures for embedding tests: a loopback fake embedding server and a closed port."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from embedding_fakes import FakeEmbedServer
from support.daemon import closed_loopback_url


@pytest.fixture
def fake_server() -> Iterator[FakeEmbedServer]:
    """A started fake server (8-dimensional vectors), stopped after the test."""
    server = FakeEmbedServer(dims=8)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def closed_port_url() -> str:
    """A loopback URL on which nothing listens (connection refused)."""
    return closed_loopback_url()
