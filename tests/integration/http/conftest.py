"""HTTP integration fixtures: a real service over a temp workspace, served in-process."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from http_helpers import make_client
from support.backends import backend_config

from signet_desktop.api.http.app import create_app
from signet_desktop.api.http.settings import HttpSettings
from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def service(tmp_path: Path) -> Iterator[SignetService]:
    """The real service; the deterministic hash embedder stands in for MiniLM (speed)."""
    options = BuildOptions(embedder=HashEmbedder(64), inline_vectors=True)
    svc = build_service(WorkspacePaths.for_root(tmp_path), SignetConfig(), options)
    yield svc
    svc.close()


@pytest.fixture
def settings(tmp_path: Path) -> HttpSettings:
    return HttpSettings(agents_dir=str(tmp_path))


@pytest.fixture
def app(service: SignetService, settings: HttpSettings) -> FastAPI:
    return create_app(service, settings)


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with make_client(app) as c:
        yield c


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend_service(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SignetService]:
    """The real service as `service` builds it, over SQLite or over a fresh PostgreSQL
    database (`storage.url`, the same `build_service`): one test body per backend."""
    config = backend_config(request)
    options = BuildOptions(embedder=HashEmbedder(64), inline_vectors=True)
    svc = build_service(WorkspacePaths.for_root(tmp_path), config, options)
    yield svc
    svc.close()


@pytest.fixture
async def backend_client(
    backend_service: SignetService, settings: HttpSettings
) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the HTTP app over `backend_service` (SQLite or PostgreSQL)."""
    async with make_client(create_app(backend_service, settings)) as c:
        yield c
