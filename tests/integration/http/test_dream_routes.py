"""/api/dream over HTTP with a scripted OpenAI-compatible server (the real wire format)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from http_helpers import make_client, remember

from signet_desktop.api.http.app import create_app
from signet_desktop.api.http.settings import HttpSettings
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from tests.support.dream_config import dreaming_config
from tests.support.fake_llm import (
    FakeLLM,
    call,
    garbage,
    http_error,
    reply,
    slow,
    tool_reply,
)

pytestmark = pytest.mark.anyio
MEMORY = "Alice moved to Lisbon in May 2026."


@pytest.fixture
def dream_service(tmp_path: Path, fake_llm: FakeLLM) -> Iterator[SignetService]:
    options = BuildOptions(embedder=HashEmbedder(64), inline_vectors=True)
    config = dreaming_config(fake_llm.base_url)
    svc = build_service(WorkspacePaths.for_root(tmp_path), config, options)
    yield svc
    svc.close()


@pytest.fixture
async def dclient(dream_service: SignetService, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(dream_service, HttpSettings(agents_dir=str(tmp_path)))
    async with make_client(app) as c:
        yield c


async def finished(client: httpx.AsyncClient, pass_id: str, agent: str = "default") -> Any:
    for _ in range(200):
        body = (await client.get(f"/api/dream/passes/{pass_id}", params={"agentId": agent})).json()
        if body["status"] != "running":
            return body
        await asyncio.sleep(0.05)
    raise AssertionError("the pass did not finish")


def entity_op(quote: str, ref: str, name: str = "Alice") -> dict[str, Any]:
    return {
        "operation": "create_entity",
        "payload": {"name": name, "type": "person"},
        "evidence": [{"quote": quote, "source_ref": ref}],
        "confidence": 0.9,
    }


async def test_trigger_without_inference_is_503_and_writes_nothing(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post("/api/dream/trigger", json={"mode": "incremental"})
    assert response.status_code == 503
    body = response.json()
    assert body["code"] == "inference_not_configured"
    assert "inference.workloads.memoryExtraction" in body["error"]
    assert (await client.get("/api/dream/passes")).json()["passes"] == []
    status = (await client.get("/api/dream/status")).json()
    assert status["idle"] == "disabled" and status["inference"]["configured"] is False


async def test_bad_mode_is_refused(dclient: httpx.AsyncClient) -> None:
    response = await dclient.post("/api/dream/trigger", json={"mode": "everything"})
    assert response.status_code in (400, 422)
    assert (await dclient.get("/api/dream/passes")).json()["passes"] == []


async def test_no_evidence_pass_makes_no_provider_request(
    dclient: httpx.AsyncClient, fake_llm: FakeLLM
) -> None:
    response = await dclient.post("/api/dream/trigger", json={})
    assert response.status_code == 202
    done = await finished(dclient, response.json()["passId"])
    assert done["status"] == "completed" and "no new evidence" in done["summary"]
    assert fake_llm.requests == []


async def test_a_whole_pass_over_the_wire(dclient: httpx.AsyncClient, fake_llm: FakeLLM) -> None:
    memory_id = (await remember(dclient, MEMORY))["id"]
    ref = f"memory:{memory_id}"
    ops = [entity_op("moved to Lisbon", ref), entity_op("moved to Porto", ref, "Bob")]
    fake_llm.script(
        tool_reply(call("search_evidence", {"query": "Alice Lisbon"})),
        tool_reply(call("apply_ontology_ops", {"operations": ops})),
        tool_reply(call("runbook_write", {"summary": "Alice is in Lisbon", "openQuestions": []})),
        reply("done"),
    )
    response = await dclient.post("/api/dream/trigger", json={"mode": "incremental"})
    assert response.status_code == 202
    done = await finished(dclient, response.json()["passId"])
    assert done["status"] == "completed", done
    assert done["summary"] == "Alice is in Lisbon"
    assert [c["tool"] for c in done["toolCalls"]] == [
        "search_evidence",
        "apply_ontology_ops",
        "runbook_write",
    ]
    assert [c["seq"] for c in done["toolCalls"]] == [0, 1, 2]
    assert done["toolCalls"][0]["result"]["results"][0]["source_ref"] == ref
    statuses = {op["payload"]["name"]: op for op in done["operations"]}
    assert statuses["Alice"]["status"] == "applied", str(statuses["Alice"])
    assert statuses["Bob"]["status"] in ("skipped", "failed")
    assert "quote" in (statuses["Bob"]["reason"] or "").lower()
    assert done["mutations"]["applied"] == 1 and done["mutations"]["skipped"] >= 1
    assert done["evidenceWindow"]["items"][0]["ref"] == ref
    assert done["runbook"]["summary"] == "Alice is in Lisbon"
    assert done["usage"]["inputTokens"] == 40 and done["provider"] and done["model"] == "m"
    # The model saw the memory verbatim and the tool schemas.
    first = fake_llm.requests[0].body
    assert MEMORY in json.dumps(first["messages"])
    assert "apply_ontology_ops" in {t["function"]["name"] for t in first["tools"]}
    listed = (await dclient.get("/api/dream/passes", params={"status": "completed"})).json()
    assert [p["id"] for p in listed["passes"]] == [done["id"]]


async def test_second_trigger_while_running_is_409(
    dclient: httpx.AsyncClient, fake_llm: FakeLLM
) -> None:
    await remember(dclient, MEMORY)
    fake_llm.script(slow(2.0, reply("ok")))
    first = await dclient.post("/api/dream/trigger", json={})
    assert first.status_code == 202
    second = await dclient.post("/api/dream/trigger", json={"mode": "compact"})
    assert second.status_code == 409
    assert second.json()["code"] == "pass_running"
    assert (await dclient.get("/api/dream/status")).json()["running"] is True
    done = await finished(dclient, first.json()["passId"])
    assert done["status"] == "completed"
    assert len((await dclient.get("/api/dream/passes")).json()["passes"]) == 1


@pytest.mark.parametrize(
    ("steps", "words"),
    [
        ([http_error(429, retry_after=0)] * 4, "429"),
        ([garbage()], ""),
    ],
)
async def test_provider_faults_fail_the_pass_with_the_reason(
    dclient: httpx.AsyncClient, fake_llm: FakeLLM, steps: list[Any], words: str
) -> None:
    await remember(dclient, MEMORY)
    fake_llm.script(*steps)
    pass_id = (await dclient.post("/api/dream/trigger", json={})).json()["passId"]
    done = await finished(dclient, pass_id)
    assert done["status"] == "failed" and done["error"] and words in done["error"]
    status = (await dclient.get("/api/dream/status")).json()
    assert status["state"]["consecutiveFailures"] == 1
    assert status["state"]["nextAttemptAt"] is not None


async def test_malformed_tool_arguments_are_given_back(
    dclient: httpx.AsyncClient, fake_llm: FakeLLM
) -> None:
    await remember(dclient, MEMORY)
    fake_llm.script(tool_reply(call("apply_ontology_ops", '{"operations": [{')), reply("sorry"))
    pass_id = (await dclient.post("/api/dream/trigger", json={})).json()["passId"]
    done = await finished(dclient, pass_id)
    assert done["status"] == "completed"
    (only,) = done["toolCalls"]
    assert only["status"] == "error" and "not a JSON object" in only["error"]
    assert done["operations"] == []
    tool_turn = fake_llm.requests[1].body["messages"][-1]
    assert tool_turn["role"] == "tool" and "not a JSON object" in tool_turn["content"]


async def test_agents_cannot_see_each_others_passes(
    dclient: httpx.AsyncClient, fake_llm: FakeLLM
) -> None:
    await remember(dclient, MEMORY, agentId="alpha")
    fake_llm.script(reply("nothing to do"))
    pass_id = (await dclient.post("/api/dream/trigger", json={"agentId": "alpha"})).json()["passId"]
    await finished(dclient, pass_id, "alpha")
    hidden = await dclient.get(f"/api/dream/passes/{pass_id}", params={"agentId": "beta"})
    assert hidden.status_code == 404
    assert (await dclient.get("/api/dream/passes", params={"agentId": "beta"})).json()[
        "passes"
    ] == []
    header = await dclient.get(
        f"/api/dream/passes/{pass_id}", headers={"x-signet-agent-id": "beta"}
    )
    assert header.status_code == 404
    beta = (await dclient.get("/api/dream/status", params={"agentId": "beta"})).json()
    assert beta["lastPass"] is None and beta["pending"]["sources"] == 0
