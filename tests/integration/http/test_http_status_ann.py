"""/api/status `vector.approximateIndex`: the HNSW index's partitions, only real values."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from http_helpers import make_client

from signet_desktop.api.http.app import create_app
from signet_desktop.api.http.settings import HttpSettings
from signet_desktop.config.models import SearchConfig, SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.recall.ann_file import index_directory
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService

pytestmark = pytest.mark.anyio


def built(tmp_path: Path, **search: object) -> Iterator[SignetService]:
    config = SignetConfig(search=SearchConfig(**search))  # type: ignore[arg-type]
    options = BuildOptions(embedder=HashEmbedder(64), inline_vectors=True)
    service = build_service(WorkspacePaths.for_root(tmp_path), config, options)
    yield service
    service.close()


@pytest.fixture
def approximate(tmp_path: Path) -> Iterator[SignetService]:
    """Every partition above 0 vectors goes through the HNSW index."""
    yield from built(tmp_path, vector_exact_max_rows=0)


@pytest.fixture
def exact_only(tmp_path: Path) -> Iterator[SignetService]:
    yield from built(tmp_path, vector_ann_index=False)


async def index_of(client: httpx.AsyncClient) -> object:
    return (await client.get("/api/status")).json()["vector"]["approximateIndex"]


async def test_a_partition_appears_once_searched_and_reports_its_graph(
    approximate: SignetService, tmp_path: Path
) -> None:
    async with make_client(create_app(approximate, HttpSettings(agents_dir=str(tmp_path)))) as c:
        assert await index_of(c) == {"kind": "hnsw-usearch", "partitions": []}
        for text in ("postgres backups run nightly", "ana prefers green tea", "deploys on fridays"):
            assert (await c.post("/api/memory/remember", json={"content": text})).status_code < 300
        assert (await c.post("/api/memory/recall", json={"query": "postgres"})).status_code == 200
        deadline = time.monotonic() + 20
        while True:
            index = await index_of(c)
            [partition] = index["partitions"]  # type: ignore[index]
            if partition["ready"] or time.monotonic() > deadline:
                break
            assert partition["building"] and partition["indexed"] == 0
            assert partition["scalar"] is None and partition["fileBytes"] is None
            time.sleep(0.05)
    [graph_file] = index_directory(approximate.status().database.path).glob("*.usearch")
    assert partition == {
        "generationId": partition["generationId"],
        "agentId": "default",
        "ready": True,
        "building": False,
        "indexed": 3,
        "delta": 0,
        "scalar": "i8",
        "fileBytes": graph_file.stat().st_size,
        "reason": None,
    }


async def test_without_the_index_configured_it_is_null(
    exact_only: SignetService, tmp_path: Path
) -> None:
    async with make_client(create_app(exact_only, HttpSettings(agents_dir=str(tmp_path)))) as c:
        assert await index_of(c) is None
