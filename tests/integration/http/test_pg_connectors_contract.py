"""`test_http_connectors.py` rerun on PostgreSQL: folder sources, their syncs and the watch
pass, with `service` built over a fresh PostgreSQL database (`storage.url`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from http_helpers import postgres_service
from test_http_connectors import *  # noqa: F403

from signet_desktop.service.facade import SignetService

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]


@pytest.fixture
def service(tmp_path: Path, pg_url: str) -> Iterator[SignetService]:
    svc = postgres_service(tmp_path, pg_url)
    yield svc
    svc.close()
