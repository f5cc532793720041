"""More HTTP contract modules rerun on PostgreSQL: documents (ingest end to end through the
documents worker), content safety, history imports (sources) and MEMORY.md. Each module's
tests run with its `service` built over a fresh PostgreSQL database (`storage.url`) and the
module's own configuration."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import test_http_safety as safety_module
from http_helpers import postgres_service
from test_http_documents import *  # noqa: F403
from test_http_memory_md import *  # noqa: F403
from test_http_safety import *  # noqa: F403
from test_http_sources import *  # noqa: F403

from signet_desktop.service.facade import SignetService
from tests.support.documents import config as documents_config

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]


@pytest.fixture
def service(tmp_path: Path, pg_url: str, request: pytest.FixtureRequest) -> Iterator[SignetService]:
    """The module the test came from decides the configuration, as its own fixture does."""
    module = request.node.function.__module__
    if module == "test_http_documents":
        cfg = documents_config()
    elif module == "test_http_safety":
        cfg = safety_module.CONFIG
    else:
        cfg = None
    if module == "test_http_sources":
        request.getfixturevalue("history")  # its harness folders exist before the service
    # Where the module's own fixture puts the workspace (its tests look for files there).
    root = tmp_path / "ws" if module in ("test_http_documents", "test_http_sources") else tmp_path
    root.mkdir(exist_ok=True)
    svc = postgres_service(root, pg_url, cfg)
    yield svc
    svc.close()
