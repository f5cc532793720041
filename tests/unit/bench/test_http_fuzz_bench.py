"""bench/http_fuzz.py: a small schemathesis smoke over every operation (0 server errors), and
proof that a route answering 500 is counted."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from pydantic import BaseModel

from signet_desktop.api.http.app import create_app
from signet_desktop.api.http.settings import HttpSettings
from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.service.container import BuildOptions, build_service

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

import http_fuzz as bench


@pytest.fixture
def app(tmp_path: Path) -> Iterator[FastAPI]:
    options = BuildOptions(embedder=HashEmbedder(64), inline_vectors=True)
    service = build_service(WorkspacePaths.for_root(tmp_path), SignetConfig(), options)
    yield create_app(service, HttpSettings(agents_dir=str(tmp_path)))
    service.close()


def test_the_probed_operations_survive_a_few_cases(app: FastAPI) -> None:
    """The routes of the probe's 500s (knowledge writes, queue repair); the full run, ~10,000
    cases over every operation, is the bench's (docs/HTTP.md has its count)."""
    paths = frozenset(
        p for p in app.openapi()["paths"] if p.startswith(("/api/knowledge", "/api/diagnostics"))
    )
    operations, tally = bench.fuzz(app, cases=6, rng=7, paths=paths)
    assert operations >= 10 and tally["cases"] >= operations
    assert bench.server_errors(tally) == 0, tally


class Boom(BaseModel):
    n: int


def test_a_500_is_counted(app: FastAPI, caplog: pytest.LogCaptureFixture) -> None:
    @app.post("/api/boom", operation_id="boom")
    def boom(body: Boom) -> dict[str, int]:
        raise RuntimeError("planted")

    caplog.set_level(logging.CRITICAL)
    app.openapi_schema = None
    schema_ops = {op["operationId"] for p in app.openapi()["paths"].values() for op in p.values()}
    assert "boom" in schema_ops
    _, tally = bench.fuzz(app, cases=4, rng=7, paths=frozenset({"/api/boom"}))
    assert tally["POST /api/boom -> 500"] >= 1
