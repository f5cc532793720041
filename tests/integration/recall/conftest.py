"""Fixtures: a real service (real database, threads) over a temp workspace per test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.fakes import ScriptedEmbedder

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService

Factory = Callable[..., SignetService]


@pytest.fixture
def embedder() -> ScriptedEmbedder:
    return ScriptedEmbedder(64)


@pytest.fixture
def make_service(tmp_path: Path) -> Iterator[Factory]:
    """Build services over one workspace (reopening it is how a restart is simulated)."""
    built: list[SignetService] = []

    def factory(
        embedder: Any = None, *, with_vec: bool = True, config: dict[str, Any] | None = None
    ) -> SignetService:
        options = BuildOptions(
            with_vec=with_vec,
            embedder=embedder,
            no_embedder=embedder is None,
            inline_vectors=True,
        )
        svc = build_service(
            WorkspacePaths.for_root(tmp_path), SignetConfig.model_validate(config or {}), options
        )
        built.append(svc)
        return svc

    yield factory
    for svc in built:
        svc.close()  # idempotent


@pytest.fixture
def service(make_service: Factory, embedder: ScriptedEmbedder) -> SignetService:
    return make_service(embedder)
