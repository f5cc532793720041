"""The scoped-token matrix (`test_http_token_scopes.py`) rerun on PostgreSQL: every route and
MCP tool, every auth mode and token scope, with `service` built over a fresh PostgreSQL
database (`storage.url`, the same `build_service`). Agent scope is enforced in the core, so
the same oracle must hold on both backends."""

from __future__ import annotations

import pytest
from http_helpers import postgres_service_fixture
from test_http_token_scopes import *  # noqa: F403

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]


service = postgres_service_fixture()
