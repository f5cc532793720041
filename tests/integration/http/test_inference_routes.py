"""GET /api/inference/status over HTTP: configured workloads, reasons, and no secrets."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from http_helpers import make_client

from signet_desktop.api.http.app import create_app
from signet_desktop.api.http.settings import HttpSettings
from signet_desktop.config.loader import parse_config_text
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService

pytestmark = pytest.mark.anyio
SECRET = "sk-ant-NEVER-SHOWN-77"
YAML = f"""
inference:
  accounts:
    claude: {{provider: anthropic, apiKey: {SECRET}}}
  targets:
    cloud: {{executor: anthropic, account: claude, models: {{claude-haiku-4-5: {{}}}}}}
  workloads:
    memoryExtraction: {{target: cloud}}
"""


@pytest.fixture
def configured(tmp_path: Path) -> Iterator[SignetService]:
    options = BuildOptions(embedder=HashEmbedder(64), inline_vectors=True)
    config = parse_config_text(YAML).config
    svc = build_service(WorkspacePaths.for_root(tmp_path), config, options)
    yield svc
    svc.close()


@pytest.fixture
async def configured_client(
    configured: SignetService, tmp_path: Path
) -> AsyncIterator[httpx.AsyncClient]:
    async with make_client(create_app(configured, HttpSettings(agents_dir=str(tmp_path)))) as c:
        yield c


async def test_status_names_provider_model_and_host(configured_client: httpx.AsyncClient) -> None:
    response = await configured_client.get("/api/inference/status")
    assert response.status_code == 200
    assert SECRET not in response.text
    body = response.json()
    extraction, synthesis, _ = body["workloads"]
    assert body["enabled"] is True
    assert extraction["configured"] is True
    assert (extraction["provider"], extraction["model"], extraction["host"]) == (
        "anthropic",
        "claude-haiku-4-5",
        "api.anthropic.com",
    )
    assert extraction["configKey"] == "inference.workloads.memoryExtraction"
    assert extraction["priced"] is False  # hosted, no prices given: cost unknown
    assert synthesis["configured"] is False
    assert "inference.workloads.sessionSynthesis" in synthesis["reason"]


async def test_nothing_configured_by_default(client: httpx.AsyncClient) -> None:
    body = (await client.get("/api/inference/status")).json()
    assert [w["configured"] for w in body["workloads"]] == [False, False, False]
    assert all("see docs/INFERENCE.md" in w["reason"] for w in body["workloads"])
