"""`test_http_hooks.py` rerun on PostgreSQL: its tests, with its `service` fixture built
over a fresh PostgreSQL database (`storage.url`, the same config and `build_service`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import test_http_hooks as on_sqlite
from http_helpers import postgres_service
from test_http_hooks import *  # noqa: F403

from signet_desktop.service.facade import SignetService

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]


@pytest.fixture
def service(tmp_path: Path, pg_url: str) -> Iterator[SignetService]:
    svc = postgres_service(tmp_path, pg_url, on_sqlite.CONFIG)
    yield svc
    svc.close()
