"""Large numbers: every integer and number a route takes is bounded, a 422 past the bound."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from support.db import database_of
from support.queue_jobs import all_rows, fill_queue

from signet_desktop.service.facade import SignetService

pytestmark = pytest.mark.anyio

REPAIR = "/api/diagnostics/queue/repair"
CENTURY_MS = 100 * 365 * 24 * 3600 * 1000
# The core bounds this one itself (400 `bad_limit`, "limit must be 1..20"), a contract MCP keeps.
CORE_BOUNDED = {"SessionSearchBody.limit"}


def unbounded(schema: Any, where: str) -> list[str]:
    found = []
    if isinstance(schema, dict):
        if schema.get("type") in ("integer", "number"):
            low = "minimum" in schema or "exclusiveMinimum" in schema
            high = "maximum" in schema or "exclusiveMaximum" in schema
            if not (low and high):
                found.append(where)
        for key, value in schema.items():
            found += unbounded(value, f"{where}.{key}" if key != "properties" else where)
    elif isinstance(schema, list):
        for item in schema:
            found += unbounded(item, where)
    return found


def test_every_number_in_the_document_has_both_bounds(app: FastAPI) -> None:
    document = app.openapi()
    found = unbounded(
        {k: v for k, v in document["components"]["schemas"].items() if k != "ErrorBody"}, ""
    )
    for path, item in document["paths"].items():
        for method, op in item.items():
            for param in op.get("parameters", []):
                found += unbounded(param["schema"], f"{method} {path} {param['name']}")
    cleaned = {f.strip(".").replace(".anyOf", "") for f in found}
    assert cleaned == CORE_BOUNDED


@pytest.mark.parametrize(
    "body",
    [
        {"action": "prune", "olderThanMs": 2**53},  # was a 500: `now - timedelta` overflowed
        {"action": "prune", "retentionMs": 2**53},
        {"action": "requeue", "olderThanMs": 10**30},
        {"action": "requeue", "maxBatch": 2**64},
    ],
)
async def test_queue_repair_refuses_huge_ages_and_changes_nothing(
    client: httpx.AsyncClient, service: SignetService, body: dict[str, Any]
) -> None:
    fill_queue(database_of(service))
    before = all_rows(database_of(service))
    reply = await client.post(REPAIR, json={**body, "dryRun": False, "reason": "test"})
    assert reply.status_code == 422, reply.text
    assert reply.json()["code"] == "invalid_request"
    assert reply.json()["fields"][0]["path"] in body
    assert all_rows(database_of(service)) == before


async def test_queue_repair_takes_a_century(client: httpx.AsyncClient) -> None:
    reply = await client.post(REPAIR, json={"action": "prune", "olderThanMs": CENTURY_MS})
    assert reply.status_code == 200, reply.text


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "field"),
    [
        ("POST", "/api/hooks/pre-compaction", {"json": {"messageCount": 2**64}}, "messageCount"),
        ("GET", "/api/documents/x/chunks", {"params": {"offset": 2**64}}, "offset"),
        ("GET", "/api/memories", {"params": {"offset": 10**20}}, "offset"),
    ],
)
async def test_huge_counts_and_offsets_are_a_422(
    client: httpx.AsyncClient, method: str, path: str, kwargs: dict[str, Any], field: str
) -> None:
    reply = await client.request(method, path, **kwargs)
    assert reply.status_code == 422, reply.text
    assert reply.json()["fields"][0]["path"] == field
