"""Prospective hints over HTTP: written by the worker via the scripted LLM, found as `hint`."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from http_helpers import make_client

from signet_desktop.api.http.app import create_app
from signet_desktop.api.http.settings import HttpSettings
from signet_desktop.config.loader import parse_config_text
from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from signet_desktop.service.hints.service import DISABLED
from signet_desktop.service.workers import Worker
from tests.support.dream_config import dreaming_yaml
from tests.support.fake_llm import FakeLLM, reply

pytestmark = pytest.mark.anyio
FACT = "Ana moved to Lisbon in 2021 to open a bakery near the river."
HINTS = {"hints": ["which city did she relocate to", "where is her shop"]}


def config(base_url: str | None, *, enabled: bool = True) -> SignetConfig:
    hints = f"  pipelineV2:\n    hints:\n      enabled: {str(enabled).lower()}\n"
    text = dreaming_yaml(base_url).replace("memory:\n", "memory:\n" + hints, 1)
    return parse_config_text(text).config  # type: ignore[return-value]


def serve(root: Path, cfg: SignetConfig) -> SignetService:
    options = BuildOptions(no_embedder=True)  # lexical and hint only: labels are exact
    return build_service(WorkspacePaths.for_root(root), cfg, options)


def hints_worker(service: SignetService) -> Worker:
    [declared] = [w for w in service.pipeline.workers if w.name == "hints"]
    return declared.factory()


@pytest.fixture
def service(tmp_path: Path, fake_llm: FakeLLM) -> Iterator[SignetService]:
    svc = serve(tmp_path, config(fake_llm.base_url))
    yield svc
    svc.close()


@pytest.fixture
async def client(service: SignetService) -> AsyncIterator[httpx.AsyncClient]:
    async with make_client(create_app(service, HttpSettings())) as c:
        yield c


async def remember(client: httpx.AsyncClient, content: str, agent: str = "default") -> str:
    response = await client.post(
        "/api/memory/remember", json={"content": content}, headers={"x-signet-agent-id": agent}
    )
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


async def recall(client: httpx.AsyncClient, query: str, agent: str = "default") -> Any:
    response = await client.post(
        "/api/memory/recall",
        json={"query": query, "minScore": 0.0},
        headers={"x-signet-agent-id": agent},
    )
    assert response.status_code == 200, response.text
    return response.json()


async def test_hints_are_written_and_a_hint_only_match_is_labelled_hint(
    client: httpx.AsyncClient, service: SignetService, fake_llm: FakeLLM
) -> None:
    fake_llm.script(reply(json.dumps(HINTS)))
    memory = await remember(client, FACT, agent="a")
    worker = hints_worker(service)
    assert worker.run_once() and worker.run_once()  # enqueue, then the job
    assert len(fake_llm.requests) == 1
    body = await recall(client, "relocate city", agent="a")
    [hit] = [r for r in body["results"] if r["id"] == memory]
    assert hit["source"] == "hint" and set(hit["channels"]) == {"hint"}
    assert hit["score"] <= 0.75  # hint-only matches are capped below anchored evidence
    other = await recall(client, "relocate city", agent="b")
    assert [r["id"] for r in other["results"]] == []  # b never matches a's hints
    status = (await client.get("/api/status")).json()
    assert status["workers"]["hints"]["detail"] == "ready"


async def test_unconfigured_is_idle_and_status_says_why(tmp_path: Path) -> None:
    svc = serve(tmp_path / "none", config(None))
    try:
        async with make_client(create_app(svc, HttpSettings())) as c:
            await remember(c, FACT)
            assert not hints_worker(svc).run_once()
            workers = (await c.get("/api/status")).json()["workers"]
            detail = workers["hints"]["detail"]
            assert detail.startswith("idle: no inference target for workload memory_extraction")
            assert "inference.workloads.memoryExtraction" in detail
    finally:
        svc.close()
    off = serve(tmp_path / "off", config(None, enabled=False))
    try:
        async with make_client(create_app(off, HttpSettings())) as c:
            assert not hints_worker(off).run_once()
            assert (await c.get("/api/status")).json()["workers"]["hints"]["detail"] == DISABLED
    finally:
        off.close()
