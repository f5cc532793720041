"""`test_graph_recall.py` rerun on PostgreSQL: graph-aware recall (traversal evidence, scope,
hubs, modes) with every service built over one fresh PostgreSQL database (`storage.url`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Factory
from test_graph_recall import *  # noqa: F403

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.storage import StorageConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService

pytestmark = pytest.mark.postgres

# Its seeding writes 10,000 memories and mentions one statement at a time: seconds on SQLite,
# minutes on a loaded machine over a socket (it timed out at load 17). The hub's dampening
# reads (mention degrees, `storage/graph_reads.py`) run in the tests above on PostgreSQL too.
del test_a_hub_entity_with_10000_mentions_leaves_direct_matches_on_top  # noqa: F821


@pytest.fixture
def make_service(tmp_path: Path, pg_url: str) -> Iterator[Factory]:
    """The recall conftest's factory, over PostgreSQL (pgvector stands for sqlite-vec)."""
    built: list[SignetService] = []

    def factory(
        embedder: Any = None, *, with_vec: bool = True, config: dict[str, Any] | None = None
    ) -> SignetService:
        options = BuildOptions(
            with_vec=with_vec, embedder=embedder, no_embedder=embedder is None, inline_vectors=True
        )
        settings = SignetConfig.model_validate(config or {})
        settings = settings.model_copy(update={"storage": StorageConfig(url=pg_url)})
        svc = build_service(WorkspacePaths.for_root(tmp_path), settings, options)
        built.append(svc)
        return svc

    yield factory
    for svc in built:
        svc.close()
