"""`test_http_connectors.py` rerun on PostgreSQL: folder sources, their syncs and the watch
pass, with `service` built over a fresh PostgreSQL database (`storage.url`)."""

from __future__ import annotations

import pytest
from http_helpers import postgres_service_fixture
from test_http_connectors import *  # noqa: F403

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]


service = postgres_service_fixture()
