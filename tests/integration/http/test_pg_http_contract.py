"""The HTTP contract modules without fixtures of their own, rerun on PostgreSQL.

Each imported module runs on SQLite as it is; here its tests run again with `service` built
over a fresh PostgreSQL database (`storage.url`, the same `build_service`). Left out, and
why: `test_status_merges_service_facts_and_the_status_board` (/api/status reads the queue's
counts, ported on the pg-queue branch; `test_pg_core_routes.py` checks the database facts),
`test_recall_returns_ranked_hits_with_channel_evidence` (it expects SQLite's
`vectorIndex: exact-in-memory`; PostgreSQL answers `hnsw-pgvector`, checked in
`test_pg_core_routes.py`). The token-scope matrix has a module of its own
(`test_pg_token_scopes.py`). Not here yet: test_http_signet_compat.py (its write witness
reads SQLite's PRAGMA data_version).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from http_helpers import postgres_service, postgres_service_fixture
from test_http_agent_isolation import *  # noqa: F403
from test_http_bad_input import *  # noqa: F403
from test_http_feedback_expand import *  # noqa: F403
from test_http_health_status import *  # noqa: F403
from test_http_memory_routes import *  # noqa: F403
from test_http_projection import *  # noqa: F403
from test_http_recall_as_of import *  # noqa: F403
from test_http_signet_mutations import *  # noqa: F403
from test_http_transcript_recall import *  # noqa: F403
from test_knowledge_routes import *  # noqa: F403

from signet_desktop.config.models import SignetConfig

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]

del test_status_merges_service_facts_and_the_status_board  # noqa: F821
del test_recall_returns_ranked_hits_with_channel_evidence  # noqa: F821


service = postgres_service_fixture()


@pytest.fixture
def telemetry_service(tmp_path: Path, pg_url: str) -> Iterator[Any]:
    config = SignetConfig.model_validate({"search": {"telemetry": {"enabled": True}}})
    svc = postgres_service(tmp_path, pg_url, config)
    yield svc
    svc.close()
