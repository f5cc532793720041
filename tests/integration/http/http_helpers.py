"""Helpers shared by the HTTP integration tests (imported by module name, like cli_fakes)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from support.db import database_of

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.storage import StorageConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService

BASE_URL = "http://127.0.0.1:3850"
COUNTED_TABLES = ("memories", "memory_history", "memory_jobs", "embeddings")


def make_client(app: FastAPI, **kwargs: Any) -> httpx.AsyncClient:
    """An in-process client whose Host is the default loopback bind."""
    transport = httpx.ASGITransport(app=app, client=kwargs.pop("client", ("127.0.0.1", 50000)))
    return httpx.AsyncClient(
        transport=transport, base_url=kwargs.pop("base_url", BASE_URL), **kwargs
    )


def row_counts(service: SignetService) -> dict[str, int]:
    """Rows in every table a write could touch: the 'nothing was written' witness."""
    conn = database_of(service).reader()
    return {t: int(conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]) for t in COUNTED_TABLES}


def memory_row(service: SignetService, memory_id: str) -> dict[str, Any]:
    """The raw memories row (deleted or not, any agent) for before/after comparisons."""
    row = (
        database_of(service)
        .reader()
        .execute("SELECT * FROM memories WHERE id = ?", (memory_id,))
        .fetchone()
    )
    return dict(row)


async def remember(client: httpx.AsyncClient, content: str, **fields: Any) -> dict[str, Any]:
    """POST a memory and return the response body (asserting success)."""
    response = await client.post("/api/memory/remember", json={"content": content, **fields})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def postgres_service(root: Path, url: str, config: SignetConfig | None = None) -> SignetService:
    """The real service as the HTTP fixtures build it, over the PostgreSQL database at `url`
    (`storage.url`): for the modules that rerun an HTTP contract module on PostgreSQL."""
    config = (config or SignetConfig()).model_copy(update={"storage": StorageConfig(url=url)})
    options = BuildOptions(embedder=HashEmbedder(64), inline_vectors=True)
    return build_service(WorkspacePaths.for_root(root), config, options)


def postgres_service_fixture(
    config: SignetConfig | None = None,
) -> Callable[[Path, str], Iterator[SignetService]]:
    """The `service` fixture of a module that reruns an HTTP contract module on PostgreSQL:
    `service = postgres_service_fixture(CONFIG)` in it."""

    @pytest.fixture
    def service(tmp_path: Path, pg_url: str) -> Iterator[SignetService]:
        svc = postgres_service(tmp_path, pg_url, config)
        yield svc
        svc.close()

    return service
