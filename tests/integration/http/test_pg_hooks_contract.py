"""`test_http_hooks.py` rerun on PostgreSQL: its tests, with its `service` fixture built
over a fresh PostgreSQL database (`storage.url`, the same config and `build_service`)."""

from __future__ import annotations

import pytest
import test_http_hooks as on_sqlite
from http_helpers import postgres_service_fixture
from test_http_hooks import *  # noqa: F403

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]


service = postgres_service_fixture(on_sqlite.CONFIG)
