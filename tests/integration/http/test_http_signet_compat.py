"""Signet's SDK and CLI calls against this daemon (issue 8 part 5), shape by shape."""

from __future__ import annotations

import json
import logging

import httpx
import pytest
from http_helpers import memory_row, remember, row_counts
from support.db import database_of

from signet_desktop.api.http import unknown_fields
from signet_desktop.queue import jobs
from signet_desktop.service.facade import SignetService

pytestmark = pytest.mark.anyio

FORGET, MODIFY = "/api/memory/forget", "/api/memory/modify"
B = {"x-signet-agent-id": "b"}


def _age_deletion(service: SignetService, memory_id: str) -> None:
    with database_of(service).write() as conn:
        conn.execute(
            "UPDATE memories SET deleted_at = '2020-01-01T00:00:00.000Z' WHERE id = :id",
            {"id": memory_id},
        )


# -- unknown fields -------------------------------------------------------------------------


async def test_unknown_fields_are_ignored_but_known_ones_stay_strict(
    client: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    unknown_fields.forget_logged()
    caplog.set_level(logging.DEBUG, logger="signet_desktop.api.http")
    first = await remember(client, "Signet's SDK sends mode.", mode="sync", harness="claude-code")
    await remember(client, "And harness again.", harness="codex")
    patched = await client.patch(
        f"/api/memory/{first['id']}", json={"tags": ["x"], "reason": "r", "project": "/p"}
    )
    assert patched.status_code == 200, patched.text
    logged = [r.getMessage() for r in caplog.records if "ignoring unknown field" in r.message]
    assert sum("'harness'" in line for line in logged) == 1  # once per name
    assert any("'mode'" in line for line in logged) and any("'project'" in line for line in logged)
    strict = await client.post("/api/memory/remember", json={"content": "x", "importance": "hi"})
    assert strict.status_code == 422 and strict.json()["fields"][0]["path"] == "importance"


async def test_list_type_filter_filters(client: httpx.AsyncClient) -> None:
    await remember(client, "A decision we took.", type="decision")
    await remember(client, "A plain fact.")
    body = (await client.get("/api/memories", params={"type": "decision"})).json()
    assert [m["type"] for m in body["memories"]] == ["decision"]
    assert body["stats"]["total"] == 2  # stats count the scope, not the filter
    other = (await client.get("/api/memories", params={"type": "decision"}, headers=B)).json()
    assert other["memories"] == []


@pytest.mark.parametrize("content_type", [None, "text/plain;charset=UTF-8"])
async def test_json_body_without_a_json_content_type_is_parsed(
    client: httpx.AsyncClient, content_type: str | None
) -> None:
    headers = {} if content_type is None else {"content-type": content_type}
    response = await client.post(
        "/api/memory/remember", content=json.dumps({"content": "hook body"}), headers=headers
    )
    assert response.status_code == 200, response.text
    assert response.json()["content"] == "hook body"


# -- error bodies and reply shapes ----------------------------------------------------------


async def test_conflicts_carry_signet_status_and_current_version(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    pinned = await remember(client, "critical: keep this")
    conflict = await client.patch(
        f"/api/memory/{pinned['id']}", json={"tags": ["x"], "reason": "r", "if_version": 5}
    )
    assert conflict.status_code == 409
    assert conflict.json() | {"error": ""} == {
        "error": "", "code": "version_conflict", "status": "version_conflict",
        "currentVersion": 1, "id": pinned["id"],
    }  # fmt: skip
    refused = await client.request("DELETE", f"/api/memory/{pinned['id']}", json={"reason": "r"})
    assert refused.json()["status"] == "pinned_requires_force"
    assert refused.json()["currentVersion"] == 1
    gone = await remember(client, "old news")
    await client.request("DELETE", f"/api/memory/{gone['id']}", json={"reason": "r"})
    before = row_counts(service)
    again = await client.request("DELETE", f"/api/memory/{gone['id']}", json={"reason": "r"})
    assert again.status_code == 409 and again.json()["code"] == "already_deleted"
    assert again.json()["status"] == "already_deleted" and again.json()["currentVersion"] == 2
    _age_deletion(service, gone["id"])
    expired = await client.post(f"/api/memory/{gone['id']}/recover", json={"reason": "r"})
    assert expired.status_code == 409 and expired.json()["status"] == "retention_expired"
    assert row_counts(service) == before


async def test_modify_forget_recover_reply_shapes(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    created = await remember(client, "shape check")
    path = f"/api/memory/{created['id']}"
    body = (await client.patch(path, json={"importance": 0.8, "reason": "r"})).json()
    assert {k: body[k] for k in ("id", "status", "currentVersion", "newVersion")} == {
        "id": created["id"], "status": "updated", "currentVersion": 1, "newVersion": 2,
    }  # fmt: skip
    assert body["contentChanged"] is False and body["embedded"] is False
    assert body["version"] == 2 and body["memory"]["importance"] == 0.8  # older fields kept
    same = (await client.patch(path, json={"importance": 0.8, "reason": "r"})).json()
    assert same["status"] == "no_changes" and same["currentVersion"] == same["newVersion"] == 2
    deleted = (await client.request("DELETE", path, json={"reason": "r"})).json()
    assert (deleted["status"], deleted["currentVersion"], deleted["newVersion"]) == (
        "deleted", 2, 3,
    )  # fmt: skip
    before = row_counts(service)
    no_reason = await client.post(f"{path}/recover")
    assert no_reason.status_code == 400 and no_reason.json()["code"] == "reason_required"
    assert row_counts(service) == before and memory_row(service, created["id"])["is_deleted"]
    recovered = (await client.post(f"{path}/recover", json={"reason": "oops"})).json()
    assert recovered["status"] == "recovered" and recovered["retentionDays"] == 30
    assert (recovered["currentVersion"], recovered["newVersion"]) == (3, 4)


async def test_history_offers_both_spellings(client: httpx.AsyncClient) -> None:
    created = await remember(client, "history keys")
    event = (await client.get(f"/api/memory/{created['id']}/history")).json()["history"][0]
    for snake, camel in (("memory_id", "memoryId"), ("new_content", "newContent"),
                         ("changed_by", "changedBy"), ("created_at", "createdAt"),
                         ("actor_type", "actorType"), ("old_content", "oldContent")):  # fmt: skip
        assert event[snake] == event[camel]


async def test_health_and_status_as_signet_clients_read_them(client: httpx.AsyncClient) -> None:
    assert (await client.get("/health")).json()["status"] == "healthy"
    body = (await client.get("/api/status")).json()
    assert body["status"] == "running" and body["memoryDb"] is True
    assert body["startedAt"].endswith("Z")
    assert body["pipelineV2"]["enabled"] is True and body["pipelineV2"]["paused"] is False
    assert body["health"]["status"] == "healthy" and 0.9 <= body["health"]["score"] <= 1.0


# -- batch forget ---------------------------------------------------------------------------


async def test_batch_forget_preview_then_execute_by_ids(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    ours = [(await remember(client, f"ours {i}"))["id"] for i in range(3)]
    theirs = (await remember(client, "theirs", agentId="b"))["id"]
    before = row_counts(service)
    preview = await client.post(FORGET, json={"mode": "preview", "ids": [*ours, theirs]})
    assert preview.status_code == 200, preview.text
    body = preview.json()
    assert body["mode"] == "preview" and body["count"] == 3 and body["requiresConfirm"] is False
    assert {c["id"] for c in body["candidates"]} == set(ours) and body["confirmToken"]
    assert row_counts(service) == before
    done = await client.post(
        FORGET, json={"mode": "execute", "ids": [*ours, theirs], "reason": "cleanup"}
    )
    assert done.status_code == 200, done.text
    result = done.json()
    assert result["deleted"] == 3 and result["count"] == 3 and result["pinned"] == 0
    statuses = {item["id"]: item["status"] for item in result["results"]}
    assert statuses == {**dict.fromkeys(ours, "deleted"), theirs: "not_found"}
    assert memory_row(service, theirs)["is_deleted"] == 0  # another agent's id is untouched


async def test_batch_forget_needs_the_preview_token_above_25(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    for i in range(30):
        await remember(client, f"bulk note {i}", tags=["bulk"])
    selection = {"tags": "bulk", "limit": 200}
    preview = (await client.post(FORGET, json={"mode": "preview", **selection})).json()
    assert preview["count"] == 30 and preview["requiresConfirm"] is True
    before = row_counts(service)
    execute = {"mode": "execute", "reason": "bulk cleanup", **selection}
    refused = await client.post(FORGET, json=execute)
    assert refused.status_code == 400 and refused.json()["code"] == "confirm_required"
    stale = await client.post(FORGET, json={**execute, "confirm_token": "0" * 32})
    assert stale.status_code == 409 and stale.json()["code"] == "confirm_token_mismatch"
    assert row_counts(service) == before
    done = await client.post(FORGET, json={**execute, "confirm_token": preview["confirmToken"]})
    assert done.status_code == 200 and done.json()["deleted"] == 30
    assert (await client.get("/api/memories")).json()["stats"]["total"] == 0


async def test_batch_forget_by_query_skips_pinned_and_checks_input(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    plain = await remember(client, "The staging database is postgres fourteen.")
    pinned = await remember(client, "critical: The production database is postgres sixteen.")
    await remember(client, "Lunch is at noon.")
    preview = (await client.post(FORGET, json={"query": "postgres database"})).json()
    assert {c["id"] for c in preview["candidates"]} == {plain["id"], pinned["id"]}
    assert all(0 < c["score"] <= 1 for c in preview["candidates"])
    before = row_counts(service)
    for bad, code in (({}, "selector_required"), ({"mode": "execute", "ids": [plain["id"]]},
                      "reason_required")):  # fmt: skip
        response = await client.post(FORGET, json=bad)
        assert response.status_code == 400 and response.json()["code"] == code
    oversized = await client.post(FORGET, json={"ids": [f"id-{i}" for i in range(201)]})
    assert oversized.status_code == 422
    assert row_counts(service) == before
    done = (await client.post(FORGET, json={"mode": "execute", "query": "postgres database",
                                             "reason": "r"})).json()  # fmt: skip
    assert done["deleted"] == 1 and done["pinned"] == 1
    assert memory_row(service, pinned["id"])["is_deleted"] == 0


async def test_batch_routes_are_not_swallowed_by_the_id_route(client: httpx.AsyncClient) -> None:
    for path in (FORGET, MODIFY):
        response = await client.post(path, json={})
        assert response.status_code != 405 and response.json()["code"] != "method_not_allowed"


# -- batch modify ---------------------------------------------------------------------------


async def test_batch_modify_applies_and_reports_per_item(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    a = await remember(client, "first")
    b = await remember(client, "second")
    theirs = await remember(client, "theirs", agentId="b")
    body = {
        "reason": "triage",
        "patches": [
            {"id": a["id"], "tags": ["t"], "project": "ignored"},
            {"id": b["id"], "importance": 0.9, "if_version": 7},
            {"id": theirs["id"], "pinned": True},
        ],
    }
    response = await client.post(MODIFY, json=body)
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["total"] == 3 and result["updated"] == 1
    items = {item["id"]: item for item in result["results"]}
    assert items[a["id"]]["status"] == "updated" and items[a["id"]]["newVersion"] == 2
    assert items[b["id"]]["status"] == "version_conflict"
    assert items[b["id"]]["currentVersion"] == 1
    assert items[theirs["id"]]["status"] == "not_found"
    assert memory_row(service, theirs["id"])["pinned"] == 0  # another agent's: untouched
    assert memory_row(service, b["id"])["version"] == 1


async def test_a_rejected_batch_modify_writes_nothing(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    a = await remember(client, "first")
    b = await remember(client, "second")
    before, row_a = row_counts(service), memory_row(service, a["id"])
    cases = [
        ({"patches": [{"id": a["id"], "tags": ["t"], "reason": "r"}, {"id": b["id"],
          "reason": "r"}]}, 400, "empty_patch"),
        ({"patches": [{"id": a["id"], "tags": ["t"]}]}, 400, "reason_required"),
        ({"reason": "r", "patches": [{"id": a["id"], "tags": ["t"]},
                                     {"id": a["id"], "pinned": True}]}, 400, "duplicate_id"),
        ({"reason": "r", "patches": [{"id": a["id"], "tags": ["t"]},
                                     {"id": b["id"], "importance": 7}]}, 422, "invalid_request"),
        ({"reason": "r", "patches": [{"id": f"x{i}", "pinned": True} for i in range(201)]}, 422,
         "invalid_request"),
    ]  # fmt: skip
    for body, status, code in cases:
        response = await client.post(MODIFY, json=body)
        assert (response.status_code, response.json()["code"]) == (status, code), body
    assert row_counts(service) == before and memory_row(service, a["id"]) == row_a


# -- jobs -----------------------------------------------------------------------------------


async def test_memory_job_is_agent_scoped(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    created = await remember(client, "has a job")
    with database_of(service).write() as conn:
        job, _ = jobs.enqueue(conn, "embedding_backfill", agent_id="default",
                              memory_id=created["id"])  # fmt: skip
    response = await client.get(f"/api/memory/jobs/{job.id}")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["id"] == job.id and body["status"] == "pending"
    assert body["memory_id"] == created["id"] and body["job_type"] == "embedding_backfill"
    assert "lease_token" not in body
    assert (await client.get(f"/api/memory/jobs/{job.id}", headers=B)).status_code == 404
    assert (await client.get("/api/memory/jobs/nope")).status_code == 404
