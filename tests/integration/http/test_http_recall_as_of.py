"""`asOf` on the HTTP recall routes: a relative question is answered as of that day."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from http_helpers import make_client, row_counts
from support.db import database_of
from support.relative_time import (
    EARLY,
    EARLY_AS_OF,
    LATE,
    LATE_AS_OF,
    QUESTION,
    first_content,
    remember_bodies,
    time_stage_raised,
)

from signet_desktop.api.http.app import create_app
from signet_desktop.api.http.settings import HttpSettings
from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService

pytestmark = pytest.mark.anyio
OTHER_AGENT = {"x-signet-agent-id": "other"}


async def seed(client: httpx.AsyncClient) -> None:
    for body in remember_bodies():
        reply = await client.post("/api/memory/remember", json=body)
        assert reply.status_code == 200, reply.text
    # Another agent's deploy in the early window: never seen from the default scope.
    other = {"content": "I deployed the payments service yesterday", "createdAt": EARLY[1]}
    reply = await client.post("/api/memory/remember", json=other, headers=OTHER_AGENT)
    assert reply.status_code == 200, reply.text


async def post_recall(client: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    reply = await client.post("/api/memory/recall", json={"query": QUESTION, **body})
    assert reply.status_code == 200, reply.text
    answer: dict[str, Any] = reply.json()
    return answer


async def test_as_of_decides_which_week_is_last_week(client: httpx.AsyncClient) -> None:
    await seed(client)
    early = await post_recall(client, asOf=EARLY_AS_OF)
    late = await post_recall(client, as_of=LATE_AS_OF)  # Signet's snake-case alias
    assert first_content(early) == EARLY[0] and time_stage_raised(early["results"][0])
    assert first_content(late) == LATE[0] and time_stage_raised(late["results"][0])
    for answer in (early, late):  # scoped like every recall: the other agent's deploy is absent
        assert all("payments" not in hit["content"] for hit in answer["results"])


async def test_search_get_alias_takes_as_of(client: httpx.AsyncClient) -> None:
    await seed(client)
    for as_of, expected in ((EARLY_AS_OF, EARLY[0]), (LATE_AS_OF, LATE[0])):
        reply = await client.get("/api/memory/search", params={"q": QUESTION, "asOf": as_of})
        assert reply.status_code == 200, reply.text
        assert first_content(reply.json()) == expected


async def test_hook_recall_takes_as_of(client: httpx.AsyncClient) -> None:
    await seed(client)
    for as_of, expected in ((EARLY_AS_OF, EARLY[0]), (LATE_AS_OF, LATE[0])):
        body = {"harness": "codex", "query": QUESTION, "asOf": as_of}
        reply = await client.post("/api/hooks/recall", json=body)
        assert reply.status_code == 200, reply.text
        assert first_content(reply.json()) == expected


@pytest.fixture
def telemetry_service(tmp_path: Path) -> Any:
    """A service with the opt-in recall ledger on, so a recall that ran would leave a row."""
    config = SignetConfig.model_validate({"search": {"telemetry": {"enabled": True}}})
    options = BuildOptions(embedder=HashEmbedder(64), inline_vectors=True)
    svc = build_service(WorkspacePaths.for_root(tmp_path), config, options)
    yield svc
    svc.close()


def telemetry_rows(service: SignetService) -> int:
    assert service.recall.telemetry is not None
    service.recall.telemetry.flush()  # the ledger is written behind the answer
    conn = database_of(service).reader()
    return int(conn.execute("SELECT COUNT(*) FROM memory_search_telemetry").fetchone()[0])


@pytest.mark.parametrize(
    ("method", "path", "field"),
    [
        ("POST", "/api/memory/recall", "asOf"),
        ("POST", "/api/memory/recall", "as_of"),
        ("GET", "/api/memory/search", "asOf"),
        ("POST", "/api/hooks/recall", "asOf"),
    ],
)
@pytest.mark.parametrize("bad", ["last week", "2025-13-01", "12/03/2025", ""])
async def test_bad_as_of_is_a_400_and_records_nothing(
    telemetry_service: SignetService, tmp_path: Path, method: str, path: str, field: str, bad: str
) -> None:
    app = create_app(telemetry_service, HttpSettings(agents_dir=str(tmp_path)))
    async with make_client(app) as client:
        await seed(client)
        assert (await post_recall(client))["results"]  # the ledger records a good recall
        before = (row_counts(telemetry_service), telemetry_rows(telemetry_service))
        args: dict[str, Any] = {"harness": "codex"} if "hooks" in path else {}
        request = {"query": QUESTION, field: bad, **args}
        if method == "GET":
            reply = await client.get(path, params={"q": QUESTION, field: bad})
        else:
            reply = await client.post(path, json=request)
    assert reply.status_code == 400, reply.text
    assert reply.json()["code"] == "bad_as_of"
    assert "ISO-8601" in reply.json()["error"]
    assert (row_counts(telemetry_service), telemetry_rows(telemetry_service)) == before
    assert before[1] == 1


async def test_the_schema_documents_as_of(client: httpx.AsyncClient) -> None:
    schema = (await client.get("/openapi.json")).json()
    body = schema["components"]["schemas"]["RecallBody"]["properties"]
    assert "asOf" in body or "as_of" in body
    field = body.get("asOf") or body["as_of"]
    assert "ISO-8601" in field["description"] and "last week" in field["description"]
    params = schema["paths"]["/api/memory/search"]["get"]["parameters"]
    assert any(p["name"] in ("asOf", "as_of") for p in params)
