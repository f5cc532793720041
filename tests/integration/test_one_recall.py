"""One recall everywhere: every surface returns the same ranked ids and scores for one query.

Hook recall (`POST /api/hooks/recall`), HTTP recall (`POST /api/memory/recall`), the search
alias (`GET /api/memory/search`), the CLI (`signet recall --json`), MCP `memory_search` (the
SDK client over Streamable HTTP at `/mcp`) and the facade the inspector calls
(`service.recall.search`; tests/ui/test_recall_pane.py checks the pane shows exactly that)
all run `service/recall/service.py: RecallService.search`. Prompt-submit context is deliberately
narrower (entity lookup first, then gated recall) and is not part of this comparison.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from support.daemon import Capture, CliDaemon, run_daemon

from signet_desktop.api.recall_views import recall_json
from signet_desktop.domain.memory import Actor
from signet_desktop.domain.recall import RecallQuery
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.service.memories.service import RememberRequest

TEXTS = (
    "billing runs on Postgres 16 with logical replication",
    "Use idempotency keys on every POST to the billing API",
    "billing invoices are rendered as PDF by the nightly job",
    "The frontend is written in Svelte", "We deploy on Fridays after the standup",
    "Redis caches sessions for the auth gateway", "Nightly backups go to S3 in the EU",
    "Kafka retries when traffic spikes", "The mobile app ships every two weeks",
    "Postgres vacuum runs every night at three", "the analytics replica lags by a minute",
)  # fmt: skip
QUERY = "billing postgres replica nightly"
LIMIT = 8
Ranking = list[tuple[str, float]]


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[CliDaemon]:
    with run_daemon(tmp_path / "ws", HashEmbedder(), server_options={}) as served:
        requests = [RememberRequest(text, agent_id="alpha") for text in TEXTS]
        requests += [RememberRequest(f"beta: {text}", agent_id="beta") for text in TEXTS]
        served.service.memories.remember_many(requests, Actor())
        yield served


def ranking(answer: dict[str, Any]) -> Ranking:
    return [(hit["id"], hit["score"]) for hit in answer["results"]]


def over_mcp(url: str) -> Ranking:
    async def call() -> str:
        headers = {"x-signet-agent-id": "alpha"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            result = await session.call_tool("memory_search", {"query": QUERY, "limit": LIMIT})
            assert not result.is_error
            [block] = result.content
            assert isinstance(block, types.TextContent)
            return block.text

    return ranking(json.loads(anyio.run(call)))


def test_every_surface_ranks_identically(daemon: CliDaemon, capsys: Capture) -> None:
    facade = daemon.service.recall.search(RecallQuery(QUERY, agent_id="alpha", limit=LIMIT))
    expected = ranking(recall_json(facade))
    assert len(expected) >= 3 and facade.method == "hybrid"  # both channels took part
    alpha = {"x-signet-agent-id": "alpha"}
    with httpx.Client(base_url=daemon.url, headers=alpha, timeout=30) as http:
        recall = http.post("/api/memory/recall", json={"query": QUERY, "limit": LIMIT})
        search = http.get("/api/memory/search", params={"q": QUERY, "limit": LIMIT})
        hook = http.post(
            "/api/hooks/recall", json={"harness": "claude-code", "query": QUERY, "limit": LIMIT}
        )
    code, out, err = daemon.cli(
        capsys, "recall", QUERY, "--limit", str(LIMIT), "--agent", "alpha", "--json"
    )
    assert code == 0, err
    surfaces = {
        "http recall": ranking(recall.raise_for_status().json()),
        "search alias": ranking(search.raise_for_status().json()),
        "hook recall": ranking(hook.raise_for_status().json()),
        "cli": ranking(json.loads(out)),
        "mcp": over_mcp(daemon.url),
    }
    assert surfaces == dict.fromkeys(surfaces, expected)
    beta_ids = {m.id for m in daemon.service.memories.list_page("beta", limit=50).memories}
    assert not beta_ids & {memory_id for memory_id, _ in expected}  # and only alpha's
