"""Memory edits as Signet's own clients send them (SDK 0.58.1, its mutation black-box test).

Each request is the SDK's: `modifyMemory(id, patch)` is `PATCH /api/memory/:id` with the patch
and `if_version` (JSON drops it when undefined); `batchForget` is `POST /api/memory/forget`;
`getMemory`, `listMemories`, `getHistory` the GETs. Where we answer differently on purpose the
test names the documented difference (docs/HTTP.md, "Differences from Signet").
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from http_helpers import memory_row, remember, row_counts
from support.db import database_of

from signet_desktop.service.facade import SignetService

pytestmark = pytest.mark.anyio

B = {"x-signet-agent-id": "b"}
BATCH_IF_VERSION = (
    "if_version is not supported for batch forget; use DELETE /api/memory/:id for "
    "version-guarded deletes"
)


async def modify_memory(
    client: httpx.AsyncClient, memory_id: str, patch: dict[str, Any], **headers: str
) -> httpx.Response:
    """The SDK's modifyMemory: `ifVersion` becomes `if_version`, undefined is left out."""
    body = {k: v for k, v in patch.items() if k != "ifVersion"}
    if patch.get("ifVersion") is not None:
        body["if_version"] = patch["ifVersion"]
    return await client.patch(f"/api/memory/{memory_id}", json=body, headers=headers)


def count_rows(service: SignetService, table: str) -> int:
    conn = database_of(service).reader()
    return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


async def test_modify_content_is_updated_with_content_changed(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    created = await remember(client, "The retention window for kafka topics is seven days.")
    response = await modify_memory(
        client, created["id"],
        {"content": "The retention window for kafka topics is fourteen days.",
         "reason": "corrected by ops"},
    )  # fmt: skip
    assert response.status_code == 200, response.text
    body = response.json()
    assert {k: body[k] for k in ("id", "status", "currentVersion", "newVersion")} == {
        "id": created["id"], "status": "updated", "currentVersion": 1, "newVersion": 2,
    }  # fmt: skip
    assert body["contentChanged"] is True and body["embedded"] is True  # inline vectors here
    assert body["vectorStatus"] == "stored" and body["flaggedForReview"] == 0
    row = memory_row(service, created["id"])
    vector = (
        database_of(service)
        .reader()
        .execute("SELECT content_hash FROM embeddings WHERE source_id = ?", (created["id"],))
        .fetchall()
    )
    assert [r[0] for r in vector] == [row["content_hash"]]  # the vector is the new text's
    recall = await client.post("/api/memory/recall", json={"query": "fourteen days"})
    assert [hit["id"] for hit in recall.json()["results"]][:1] == [created["id"]]
    old = await client.post("/api/memory/recall", json={"query": "seven", "channels": ["lexical"]})
    assert old.json()["results"] == []
    history = (await client.get(f"/api/memory/{created['id']}/history")).json()["history"]
    assert history[-1]["oldContent"] == "The retention window for kafka topics is seven days."
    assert history[-1]["newContent"].endswith("fourteen days.")
    assert history[-1]["reason"] == "corrected by ops"


async def test_modify_type_with_if_version_and_a_stale_one(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    created = await remember(client, "We chose SQLite for the desktop store.")
    ok = await modify_memory(
        client, created["id"], {"type": "decision", "reason": "it is a decision", "ifVersion": 1}
    )
    assert ok.status_code == 200 and ok.json()["contentChanged"] is False
    assert ok.json()["memory"]["type"] == "decision"
    before, row = row_counts(service), memory_row(service, created["id"])
    stale = await modify_memory(
        client, created["id"], {"content": "We chose Postgres.", "reason": "r", "ifVersion": 1}
    )
    assert stale.status_code == 409
    assert stale.json() | {"error": ""} == {
        "error": "", "code": "version_conflict", "status": "version_conflict",
        "id": created["id"], "currentVersion": 2,
    }  # fmt: skip
    no_reason = await modify_memory(client, created["id"], {"content": "We chose Postgres."})
    assert no_reason.status_code == 400 and no_reason.json()["code"] == "reason_required"
    assert row_counts(service) == before and memory_row(service, created["id"]) == row


async def test_a_content_edit_flags_the_rows_that_quoted_the_old_text(
    client: httpx.AsyncClient,
) -> None:
    structured = {"aspects": [{"entity": "Billing", "entity_type": "service",
                               "name": "storage", "claims": ["postgres 16"]}]}  # fmt: skip
    created = await remember(client, "Billing keeps invoices in postgres 16.",
                             structured=structured)  # fmt: skip
    edited = await modify_memory(
        client, created["id"], {"content": "Billing keeps invoices in mysql 8.", "reason": "r"}
    )
    # The claim quoted the old text; the entity's name (Billing) is still in the new one.
    assert edited.status_code == 200 and edited.json()["flaggedForReview"] == 1
    attention = (await client.get("/api/dream/attention")).json()["attention"]
    assert [(a["kind"], a["subjectRef"].split(":")[0]) for a in attention] == [
        ("review_due", "claim")
    ]
    assert all(a["details"]["sourceRef"] == f"memory:{created['id']}" for a in attention)
    theirs = (await client.get("/api/dream/attention", headers=B)).json()["attention"]
    assert theirs == []


async def test_modify_of_a_deleted_memory_is_409_deleted(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    created = await remember(client, "Soon gone.")
    await client.request("DELETE", f"/api/memory/{created['id']}", params={"reason": "r"})
    before, row = row_counts(service), memory_row(service, created["id"])
    response = await modify_memory(client, created["id"], {"tags": "x", "reason": "r"})
    assert response.status_code == 409
    body = response.json()
    assert (body["status"], body["id"], body["currentVersion"]) == ("deleted", created["id"], 2)
    assert body["error"] and body["code"] == "deleted"
    assert row_counts(service) == before and memory_row(service, created["id"]) == row


async def test_not_found_bodies_as_signet_sends_them(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    theirs = await remember(client, "b's own note", agentId="b")
    before = row_counts(service)
    for memory_id in ("no-such-memory", theirs["id"]):  # another agent's looks missing
        for method, path, body in (
            ("PATCH", f"/api/memory/{memory_id}", {"content": "x", "reason": "r"}),
            ("DELETE", f"/api/memory/{memory_id}", {"reason": "r"}),
            ("POST", f"/api/memory/{memory_id}/recover", {"reason": "r"}),
        ):
            response = await client.request(method, path, json=body)
            assert response.status_code == 404, (method, path)
            got = response.json()
            assert (got["id"], got["status"], got["code"]) == (memory_id, "not_found", "not_found")
            assert got["error"]
        history = await client.get(f"/api/memory/{memory_id}/history")
        assert history.status_code == 404
        assert history.json()["memoryId"] == memory_id and history.json()["error"]
    assert row_counts(service) == before
    assert memory_row(service, theirs["id"])["content"] == "b's own note"


async def test_get_and_list_carry_confidence_and_extraction_status(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    created = await remember(client, "Confidence is a stored column.")
    with database_of(service).write() as conn:  # as an import from Signet may have left it
        conn.execute(
            "UPDATE memories SET confidence = 0.7, extraction_status = 'completed' WHERE id = ?",
            (created["id"],),
        )
    one = (await client.get(f"/api/memory/{created['id']}")).json()
    assert (one["confidence"], one["extraction_status"]) == (0.7, "completed")
    listed = (await client.get("/api/memories")).json()["memories"][0]
    assert (listed["confidence"], listed["extraction_status"]) == (0.7, "completed")
    await modify_memory(client, created["id"], {"content": "It is reset on edit.", "reason": "r"})
    edited = (await client.get(f"/api/memory/{created['id']}")).json()
    assert (edited["confidence"], edited["extraction_status"]) == (0.7, "none")


async def test_batch_forget_refuses_if_version_and_writes_nothing(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    created = await remember(client, "Batch forget candidate.")
    before, row = row_counts(service), memory_row(service, created["id"])
    for value in (1, None, "1"):
        response = await client.post(
            "/api/memory/forget",
            json={"mode": "execute", "ids": [created["id"]], "reason": "cleanup",
                  "if_version": value},
        )  # fmt: skip
        assert response.status_code == 400, response.text
        assert response.json()["error"] == BATCH_IF_VERSION
        assert response.json()["code"] == "if_version_unsupported"
    assert row_counts(service) == before and memory_row(service, created["id"]) == row
    preview = await client.post(
        "/api/memory/forget", json={"mode": "preview", "ids": [created["id"]], "if_version": 1}
    )
    assert preview.status_code == 200 and preview.json()["count"] == 1  # Signet checks execute


async def test_batch_modify_edits_content_per_item(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    a = await remember(client, "Memory A")
    b = await remember(client, "Memory B")
    gone = await remember(client, "Memory C")
    await client.request("DELETE", f"/api/memory/{gone['id']}", json={"reason": "r"})
    response = await client.post("/api/memory/modify", json={"patches": [
        {"id": a["id"], "content": "Memory A, corrected", "reason": "fix", "if_version": 1},
        {"id": b["id"], "content": "memory a, corrected", "reason": "clash"},
        {"id": gone["id"], "type": "decision", "reason": "late"},
    ]})  # fmt: skip
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["total"], body["updated"]) == (3, 1)
    first, clash, deleted = body["results"]
    assert (first["status"], first["contentChanged"], first["embedded"]) == ("updated", True, True)
    assert clash["status"] == "duplicate_content_hash" and clash["duplicateMemoryId"] == a["id"]
    assert deleted["status"] == "deleted" and deleted["currentVersion"] == 2
    assert memory_row(service, b["id"])["content"] == "Memory B"


async def test_another_agent_cannot_edit_content(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    mine = await remember(client, "Only the default agent may rewrite this.")
    before, row = row_counts(service), memory_row(service, mine["id"])
    refused = await modify_memory(client, mine["id"], {"content": "hijacked", "reason": "r"}, **B)
    assert refused.status_code == 404 and refused.json()["status"] == "not_found"
    batch = await client.post(
        "/api/memory/modify", headers=B,
        json={"patches": [{"id": mine["id"], "content": "hijacked", "reason": "r"}]},
    )  # fmt: skip
    assert batch.json()["results"][0]["status"] == "not_found"
    assert row_counts(service) == before and memory_row(service, mine["id"]) == row
    assert count_rows(service, "dreaming_attention") == 0


async def test_signet_black_box_history_keeps_our_created_event(
    client: httpx.AsyncClient,
) -> None:
    """Signet's mutation test expects [updated, deleted]; ours is [created, modified, deleted]
    (a documented difference: the first event records the original text)."""
    created = await remember(client, "History target")
    patched = await client.patch(
        f"/api/memory/{created['id']}", json={"tags": "edited", "reason": "history test edit"}
    )
    assert patched.status_code == 200
    forgot = await client.request(
        "DELETE", f"/api/memory/{created['id']}", params={"reason": "history test delete"}
    )
    assert forgot.status_code == 200
    body = (await client.get(f"/api/memory/{created['id']}/history")).json()
    assert body["memoryId"] == created["id"] and body["count"] == 3
    assert [(e["event"], e["reason"]) for e in body["history"]] == [
        ("created", None), ("modified", "history test edit"), ("deleted", "history test delete"),
    ]  # fmt: skip
