"""The semantic channel's search follows the query embedding on the pool thread, beside BM25 on
the caller's: on PostgreSQL the whole vector search (its reader takes each statement on a
pooled connection); on SQLite the in-memory matrix's scan, which needs no connection (the
matrix is refreshed and the candidates joined on the caller's thread, whose connection it is).
The same hits and timings either way."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.backends import backend_config
from support.fakes import ScriptedEmbedder

from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.memory import Actor
from signet_desktop.domain.recall import RecallQuery
from signet_desktop.recall import matrix, vector
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest

NOTES = (
    "billing runs on Postgres 16 in the main cluster",
    "the staging database is reset every Sunday",
    "deploys go out through the release train on Thursdays",
)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def service(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[SignetService, str]]:
    config = backend_config(request)
    options = BuildOptions(embedder=ScriptedEmbedder(64), inline_vectors=True)
    svc = build_service(WorkspacePaths.for_root(tmp_path), config, options)
    for note in NOTES:
        assert svc.memories.remember(RememberRequest(content=note), Actor()).embedded
    yield svc, request.param
    svc.close()


def test_the_vector_search_runs_beside_bm25(
    service: tuple[SignetService, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    svc, backend = service
    threads: list[threading.Thread] = []
    owner: Any = vector.SemanticChannel if backend == "postgres" else matrix.MatrixView
    name = "search" if backend == "postgres" else "top"
    searching = getattr(owner, name)

    def recording(self: Any, *args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread())
        return searching(self, *args, **kwargs)

    monkeypatch.setattr(owner, name, recording)
    result = svc.recall.search(RecallQuery(query="billing on Postgres"))
    assert result.method == "hybrid"
    assert result.hits[0].memory.content == NOTES[0]
    assert "semantic" in result.hits[0].channels
    assert {"embed_query", "semantic", "lexical"} <= {t.name for t in result.timings}
    assert len(threads) == 1
    assert threads[0] is not threading.current_thread()
