"""The ontology and Dreaming HTTP contract modules rerun on PostgreSQL: the apply seam's
report, proposals, contradictions and revert (test_ontology_routes), Dreaming passes against
the scripted OpenAI-compatible server (test_dream_routes) and `/mcp/dream` outside a pass
(test_http_dream_tools), each test with its service built over a fresh PostgreSQL database
(`storage.url`) and its module's own configuration."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from http_helpers import postgres_service
from test_dream_routes import *  # noqa: F403
from test_http_dream_tools import *  # noqa: F403
from test_ontology_routes import *  # noqa: F403

from signet_desktop.service.facade import SignetService
from tests.support.dream_config import dreaming_config
from tests.support.fake_llm import FakeLLM

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]


@pytest.fixture
def service(tmp_path: Path, pg_url: str) -> Iterator[SignetService]:
    """test_ontology_routes' and test_http_dream_tools' service, over PostgreSQL."""
    yield from _service(tmp_path, pg_url, None)


@pytest.fixture
def dream_service(tmp_path: Path, pg_url: str, fake_llm: FakeLLM) -> Iterator[SignetService]:
    """test_dream_routes' service, over PostgreSQL."""
    yield from _service(tmp_path, pg_url, fake_llm)


def _service(tmp_path: Path, pg_url: str, llm: FakeLLM | None) -> Iterator[SignetService]:
    config = dreaming_config(llm.base_url) if llm is not None else None
    svc = postgres_service(tmp_path, pg_url, config)
    yield svc
    svc.close()
