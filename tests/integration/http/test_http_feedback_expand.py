"""POST /api/memory/feedback and POST /api/knowledge/expand: Signet's bodies, scoped, and a
refused call writes nothing."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from support.db import database_of

from signet_desktop.service.facade import SignetService

pytestmark = pytest.mark.anyio

ALICE = {"x-signet-agent-id": "alice"}
BOB = {"x-signet-agent-id": "bob"}


def _feedback_rows(service: SignetService) -> list[tuple[Any, ...]]:
    conn = database_of(service).reader()
    return [tuple(r) for r in conn.execute("SELECT * FROM memory_feedback ORDER BY memory_id")]


async def _remember(client: httpx.AsyncClient, body: dict[str, Any], headers: Any) -> str:
    answer = await client.post("/api/memory/remember", json=body, headers=headers)
    assert answer.status_code == 200, answer.text
    return str(answer.json()["id"])


async def test_feedback_records_signets_body(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    memory_id = await _remember(client, {"content": "rated memory"}, ALICE)
    body = {"sessionKey": "s1", "feedback": {memory_id: 0.5}}
    first = await client.post("/api/memory/feedback", json=body, headers=ALICE)
    again = await client.post(
        "/api/memory/feedback", json={"session_key": "s1", "ratings": {memory_id: 1}}, headers=ALICE
    )
    assert first.status_code == 200 and first.json()["ok"] is True
    assert first.json()["recorded"] == 1
    assert again.json()["ratings"] == [
        {"memoryId": memory_id, "score": 0.75, "ratings": 2, "injected": False}
    ]


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"feedback": {"MID": 1}}, 400, "session_required"),
        ({"sessionKey": "s1"}, 400, "ratings_invalid"),
        ({"sessionKey": "s1", "feedback": {"MID": 3}}, 400, "ratings_invalid"),
        ({"sessionKey": "s1", "feedback": {"MID": 1, "other": 1}}, 404, "not_found"),
        ({"sessionKey": "s1", "feedback": ["MID"]}, 422, "invalid_request"),
        ({"sessionKey": 5, "feedback": {"MID": 1}}, 422, "invalid_request"),
    ],
)
async def test_a_refused_feedback_writes_nothing(
    client: httpx.AsyncClient, service: SignetService, body: dict[str, Any], status: int, code: str
) -> None:
    memory_id = await _remember(client, {"content": "rated memory"}, ALICE)
    sent = {
        k: ({memory_id if key == "MID" else key: v for key, v in value.items()}
            if isinstance(value, dict) else [memory_id] if value == ["MID"] else value)
        for k, value in body.items()
    }  # fmt: skip
    answer = await client.post("/api/memory/feedback", json=sent, headers=ALICE)
    assert (answer.status_code, answer.json()["code"]) == (status, code), answer.text
    assert _feedback_rows(service) == []


async def test_feedback_on_another_agents_memory_is_not_found(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    memory_id = await _remember(client, {"content": "alice only"}, ALICE)
    body = {"sessionKey": "s1", "feedback": {memory_id: 1}}
    answer = await client.post("/api/memory/feedback", json=body, headers=BOB)
    assert answer.status_code == 404 and _feedback_rows(service) == []


async def test_expand_answers_signets_shape_scoped_to_the_agent(
    client: httpx.AsyncClient,
) -> None:
    structured = {
        "entities": [{"name": "Apollo", "type": "project"}],
        "aspects": [{"entity": "Apollo", "name": "storage", "claims": ["billing in Postgres"]}],
    }
    memory_id = await _remember(
        client, {"content": "Apollo keeps billing in Postgres", "structured": structured}, ALICE
    )
    answer = await client.post(
        "/api/knowledge/expand", json={"entity": "apollo", "maxTokens": 500}, headers=ALICE
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["entity"]["name"] == "Apollo" and body["entity"]["type"] == "project"
    assert body["aspects"][0]["name"] == "storage"
    assert body["aspects"][0]["attributes"][0]["content"] == "billing in Postgres"
    assert body["memoryCount"] == 1 and body["memories"][0]["id"] == memory_id
    assert body["budget"] == {"maxTokens": 500, "usedTokens": 8, "omitted": 0}  # 32 characters
    assert body["traversal"] == {"partial": False, "reasons": []}
    theirs = await client.post("/api/knowledge/expand", json={"entity": "Apollo"}, headers=BOB)
    assert theirs.status_code == 404 and theirs.json()["code"] == "entity_not_found"
    assert "billing" not in theirs.text


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({}, 400, "entity_required"),
        ({"entity": "Apollo", "maxTokens": 20_000}, 422, "invalid_request"),
        ({"entity": "Apollo", "maxTokens": "2000"}, 422, "invalid_request"),
        ({"entity": "x" * 201}, 422, "invalid_request"),
        ({"entity": "Nobody"}, 404, "entity_not_found"),
    ],
)
async def test_expand_refusals(
    client: httpx.AsyncClient, body: dict[str, Any], status: int, code: str
) -> None:
    answer = await client.post("/api/knowledge/expand", json=body)
    assert (answer.status_code, answer.json()["code"]) == (status, code), answer.text
