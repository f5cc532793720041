"""The scoped-token matrix (`test_http_token_scopes.py`) rerun on PostgreSQL: every route and
MCP tool, every auth mode and token scope, with `service` built over a fresh PostgreSQL
database (`storage.url`, the same `build_service`). Agent scope is enforced in the core, so
the same oracle must hold on both backends."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from http_helpers import postgres_service
from test_http_token_scopes import *  # noqa: F403

from signet_desktop.service.facade import SignetService

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]


@pytest.fixture
def service(tmp_path: Path, pg_url: str) -> Iterator[SignetService]:
    svc = postgres_service(tmp_path, pg_url)
    yield svc
    svc.close()
