"""Every memory route's happy path, with Signet's field names, against a real database."""

from __future__ import annotations

import httpx
import pytest
from http_helpers import memory_row, remember, row_counts

from signet_desktop.service.facade import SignetService

pytestmark = pytest.mark.anyio

REMEMBER_KEYS = {
    "id", "type", "tags", "pinned", "importance", "content", "embedded", "entities_linked",
    "hints_written", "structured", "structured_applied", "deduped", "vectorStatus",
}  # fmt: skip
HIT_KEYS = {
    "id", "content", "content_length", "truncated", "score", "weak", "source", "source_id",
    "session_id", "type", "tags", "pinned", "importance", "who", "project", "created_at",
    "channels", "lexical", "semantic", "context", "adjustments", "kind",
}  # fmt: skip


async def test_remember_returns_signet_fields_and_applies_prefixes(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    body = await remember(
        client,
        "critical: [infra, db]: We run PostgreSQL 16 for billing.",
        who="claude-code",
        project="/work/billing",
        sourceType="manual",
        metadata={"ticket": 42},
    )
    assert set(body) == REMEMBER_KEYS
    assert body["pinned"] is True and body["importance"] == 1.0
    assert body["tags"] == ["infra", "db"]
    assert body["content"] == "We run PostgreSQL 16 for billing."
    assert body["deduped"] is False and body["structured_applied"] is False
    assert body["embedded"] is True and body["vectorStatus"] == "stored"
    assert body["entities_linked"] == 0 and body["structured"] is None
    row = memory_row(service, body["id"])
    assert row["who"] == "claude-code" and row["project"] == "/work/billing"
    assert row["agent_id"] == "default" and row["source_type"] == "manual"


async def test_second_remember_of_same_content_is_deduped(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    first = await remember(client, "The staging cluster runs in eu-west-1.")
    before = row_counts(service)
    second = await remember(client, "the staging cluster runs in EU-WEST-1")
    assert second["deduped"] is True and second["id"] == first["id"]
    assert row_counts(service) == before


async def test_idempotency_key_dedupes_different_content(client: httpx.AsyncClient) -> None:
    first = await remember(client, "Deploys happen on Tuesdays.", idempotencyKey="k-1")
    second = await remember(client, "Something else entirely.", idempotencyKey="k-1")
    assert second["deduped"] is True and second["id"] == first["id"]


@pytest.mark.parametrize("path", ["/api/memory/save", "/api/hook/remember"])
async def test_remember_aliases(client: httpx.AsyncClient, path: str) -> None:
    response = await client.post(path, json={"content": f"Saved through {path}.", "tags": "a,b"})
    assert response.status_code == 200, response.text
    assert response.json()["tags"] == ["a", "b"]


async def test_remember_accepts_every_documented_field(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    body = await remember(
        client,
        "The on-call rota lives in PagerDuty.",
        type="decision",
        tags=["ops"],
        importance=0.8,
        pinned=False,
        who="codex",
        project="ops",
        scope="team",
        visibility="private",
        sourceType="chat",
        sourceId="msg-1",
        sourcePath="/tmp/x.md",
        runtimePath="plugin",
        idempotencyKey="idem-1",
        createdAt="2025-03-01T10:00:00+01:00",
        occurredAt="2025-02-28",
        observedAt="2025-03-01T09:00:00Z",
        sourceCreatedAt="2025-02-27T00:00:00Z",
        validFrom="2025-01-01",
        validUntil="2026-01-01",
        reviewAfter="2025-06-01",
        sessionId="sess-1",
        agentId="default",
        metadata={"k": "v"},
        structured={"entities": []},
    )
    assert body["structured_applied"] is False and body["type"] == "decision"
    row = memory_row(service, body["id"])
    assert row["created_at"] == "2025-03-01T09:00:00.000Z"
    assert row["scope"] == "team" and row["visibility"] == "private"
    assert row["session_id"] == "sess-1" and row["idempotency_key"] == "idem-1"
    assert '"occurred_at": "2025-02-28T00:00:00.000Z"' in row["metadata"]
    assert '"runtime_path": "plugin"' in row["metadata"]


async def test_recall_returns_ranked_hits_with_channel_evidence(client: httpx.AsyncClient) -> None:
    target = await remember(client, "Billing uses PostgreSQL 16 with logical replication.")
    await remember(client, "The frontend is written in Svelte.")
    response = await client.post("/api/memory/recall", json={"query": "postgresql billing"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["query"] == "postgresql billing" and body["method"] == "hybrid"
    hit = body["results"][0]
    assert hit["id"] == target["id"] and set(hit) == HIT_KEYS
    assert hit["lexical"]["rank"] == 1 and 0 < hit["lexical"]["score"] <= 1
    assert hit["source"] == "hybrid" and set(hit["semantic"]) == {"score", "rank"}
    # Every channel's evidence by name; the two top-level keys repeat it for older clients.
    assert hit["channels"] == {"lexical": hit["lexical"], "semantic": hit["semantic"]}
    assert list(hit["channels"]) == ["lexical", "semantic"]
    assert 0 < hit["score"] <= 1 and hit["truncated"] is False
    meta = body["meta"]
    assert meta["totalReturned"] == len(body["results"]) and meta["noHits"] is False
    assert meta["hasSupplementary"] is False and isinstance(meta["notes"], list)
    assert {stage["name"] for stage in meta["timings"]["stages"]} >= {"lexical", "semantic"}
    assert meta["timings"]["totalMs"] >= 0
    assert body["vectorCompleteness"] == "complete" and "searchedWindow" in body
    assert body["vectorIndex"] == "exact-in-memory"


async def test_recall_shows_the_context_signals_behind_a_score(client: httpx.AsyncClient) -> None:
    question = await remember(
        client, "Any book for my camping trip?", who="Melanie", sessionId="conv-1"
    )
    answer = await remember(client, "Try The Name of the Wind.", who="Caroline", sessionId="conv-1")
    body = (
        await client.post(
            "/api/memory/recall",
            json={"query": "which camping book did Caroline suggest", "minScore": 0},
        )
    ).json()
    hits = {hit["id"]: hit for hit in body["results"]}
    context = hits[answer["id"]]["context"]
    assert context["who"] == 0.15 and context["neighbourId"] == question["id"]
    assert context["session"] > 0
    assert "context" in {stage["name"] for stage in body["meta"]["timings"]["stages"]}


async def test_recall_truncates_long_content(client: httpx.AsyncClient) -> None:
    long_text = "zebrafish " + "lorem ipsum " * 100
    await remember(client, long_text)
    body = (await client.post("/api/memory/recall", json={"query": "zebrafish"})).json()
    hit = body["results"][0]
    assert hit["truncated"] is True and len(hit["content"]) == 500
    assert hit["content_length"] == len(long_text.strip())


async def test_recall_filters_and_snake_case_aliases(client: httpx.AsyncClient) -> None:
    keep = await remember(client, "Kafka retention is seven days.", tags=["kafka"], who="ops")
    await remember(client, "Kafka brokers run on three hosts.", tags=["infra"], who="dev")
    response = await client.post(
        "/api/memory/recall",
        json={"query": "kafka", "tags": "kafka", "who": "ops", "importanceMin": 0.1,
              "min_score": 0.0, "keyword_query": "kafka retention", "limit": 5,
              "sessionKey": "s1", "includeRecalled": True, "expand": False,
              "time": {"start": "2000-01-01", "mode": "filter"}},
    )  # fmt: skip
    assert response.status_code == 200, response.text
    assert [hit["id"] for hit in response.json()["results"]] == [keep["id"]]


async def test_recall_with_no_hits(client: httpx.AsyncClient) -> None:
    await remember(client, "A memory in another scope.", agentId="someone-else")
    body = (await client.post("/api/memory/recall", json={"query": "memory scope"})).json()
    assert body["results"] == [] and body["meta"]["noHits"] is True


async def test_search_is_the_get_alias_of_recall(client: httpx.AsyncClient) -> None:
    target = await remember(client, "Redis is the session cache.", tags=["cache"])
    response = await client.get(
        "/api/memory/search", params={"q": "redis", "limit": "3", "tags": "cache"}
    )
    assert response.status_code == 200, response.text
    assert [hit["id"] for hit in response.json()["results"]] == [target["id"]]
    also = await client.get("/api/memory/search", params={"query": "redis"})
    assert [hit["id"] for hit in also.json()["results"]] == [target["id"]]


async def test_get_memory_returns_the_row(client: httpx.AsyncClient) -> None:
    created = await remember(client, "Grafana dashboards are in the ops folder.")
    response = await client.get(f"/api/memory/{created['id']}")
    assert response.status_code == 200
    body = response.json()
    assert body["id"] == created["id"] and body["agent_id"] == "default"
    assert body["version"] == 1 and body["memory_kind"] == "episodic"


async def test_patch_changes_tags_importance_pinned(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    created = await remember(client, "Backups run nightly at 02:00.")
    response = await client.patch(
        f"/api/memory/{created['id']}",
        json={"tags": ["backup"], "importance": 0.9, "pinned": True, "reason": "triage",
              "if_version": 1, "changed_by": "alice"},
    )  # fmt: skip
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "updated" and body["version"] == 2
    assert body["memory"]["tags"] == ["backup"] and body["memory"]["pinned"] is True
    assert memory_row(service, created["id"])["updated_by"] == "alice"


async def test_delete_history_and_recover_round_trip(client: httpx.AsyncClient) -> None:
    created = await remember(client, "The VPN endpoint is vpn.example.com.")
    memory_id = created["id"]
    deleted = await client.request(
        "DELETE", f"/api/memory/{memory_id}", json={"reason": "outdated"}
    )
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["status"] == "deleted"
    assert (await client.get(f"/api/memory/{memory_id}")).status_code == 404
    recovered = await client.post(f"/api/memory/{memory_id}/recover", json={"reason": "oops"})
    assert recovered.status_code == 200, recovered.text
    assert recovered.json()["status"] == "recovered"
    assert recovered.json()["memory"]["is_deleted"] is False
    history = (await client.get(f"/api/memory/{memory_id}/history")).json()
    assert history["memoryId"] == memory_id and history["count"] == 3
    assert [e["event"] for e in history["history"]] == ["created", "deleted", "recovered"]
    assert history["history"][1]["reason"] == "outdated"
    limited = (await client.get(f"/api/memory/{memory_id}/history", params={"limit": 1})).json()
    assert limited["count"] == 1


async def test_delete_accepts_query_parameters_and_reason_header(
    client: httpx.AsyncClient,
) -> None:
    a = await remember(client, "Memory deleted by query parameters.")
    b = await remember(client, "Memory deleted with the reason header.")
    by_query = await client.delete(f"/api/memory/{a['id']}", params={"reason": "cleanup"})
    assert by_query.status_code == 200, by_query.text
    by_header = await client.delete(
        f"/api/memory/{b['id']}", headers={"x-signet-reason": "header reason"}
    )
    assert by_header.status_code == 200, by_header.text
    history = (await client.get(f"/api/memory/{b['id']}/history")).json()["history"]
    assert history[-1]["reason"] == "header reason"


async def test_actor_and_request_id_reach_history(client: httpx.AsyncClient) -> None:
    created = await remember(client, "Actor headers are recorded.")
    await client.patch(
        f"/api/memory/{created['id']}",
        json={"tags": ["x"], "reason": "r"},
        headers={"x-signet-actor": "bot-7", "x-signet-actor-type": "agent",
                 "x-signet-request-id": "req-123", "x-signet-session-key": "sess-9"},
    )  # fmt: skip
    event = (await client.get(f"/api/memory/{created['id']}/history")).json()["history"][-1]
    assert event["changed_by"] == "bot-7" and event["actor_type"] == "agent"
    assert event["request_id"] == "req-123" and event["session_id"] == "sess-9"


async def test_list_memories_with_stats(client: httpx.AsyncClient) -> None:
    await remember(client, "critical: Never force-push to main.")
    for i in range(3):
        await remember(client, f"Listed memory number {i}.")
    body = (await client.get("/api/memories", params={"limit": 2, "offset": 1})).json()
    assert len(body["memories"]) == 2
    assert body["stats"]["total"] == 4 and body["stats"]["critical"] == 1
    assert body["stats"]["withEmbeddings"] == 4  # the test embedder embeds on remember
    default = (await client.get("/api/memories")).json()
    assert len(default["memories"]) == 4


async def test_version_conflict_is_409_and_changes_nothing(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    created = await remember(client, "Version guarded memory.")
    before_row, before = memory_row(service, created["id"]), row_counts(service)
    response = await client.patch(
        f"/api/memory/{created['id']}", json={"tags": ["x"], "reason": "r", "if_version": 7}
    )
    assert response.status_code == 409
    assert response.json()["code"] == "version_conflict" and "error" in response.json()
    deleted = await client.request(
        "DELETE", f"/api/memory/{created['id']}", json={"reason": "r", "if_version": 3}
    )
    assert deleted.status_code == 409 and deleted.json()["code"] == "version_conflict"
    assert memory_row(service, created["id"]) == before_row and row_counts(service) == before


async def test_pinned_memory_needs_force(client: httpx.AsyncClient, service: SignetService) -> None:
    created = await remember(client, "critical: Production database password rotates monthly.")
    before = row_counts(service)
    refused = await client.request(
        "DELETE", f"/api/memory/{created['id']}", json={"reason": "cleanup"}
    )
    assert refused.status_code == 409 and refused.json()["code"] == "pinned_requires_force"
    assert row_counts(service) == before
    forced = await client.request(
        "DELETE", f"/api/memory/{created['id']}", json={"reason": "cleanup", "force": True}
    )
    assert forced.status_code == 200


async def test_bad_content_or_type_edits_write_nothing(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    created = await remember(client, "Original evidence text.")
    before, before_row = row_counts(service), memory_row(service, created["id"])
    for patch, code in (({"content": "   "}, "content_empty"), ({"type": "nonsense"}, "bad_type"),
                        ({"content": "x" * 100_001}, "content_too_long")):  # fmt: skip
        response = await client.patch(f"/api/memory/{created['id']}", json={**patch, "reason": "r"})
        assert (response.status_code, response.json()["code"]) == (400, code)
    assert memory_row(service, created["id"]) == before_row and row_counts(service) == before


async def test_recover_unknown_id_is_404(client: httpx.AsyncClient, service: SignetService) -> None:
    before = row_counts(service)
    response = await client.post("/api/memory/does-not-exist/recover", json={"reason": "r"})
    assert response.status_code == 404 and response.json()["code"] == "not_found"
    assert row_counts(service) == before


async def test_recover_of_a_live_memory_is_409(client: httpx.AsyncClient) -> None:
    created = await remember(client, "Still alive.")
    response = await client.post(f"/api/memory/{created['id']}/recover", json={"reason": "r"})
    assert response.status_code == 409 and response.json()["code"] == "not_deleted"
    assert response.json()["status"] == "not_deleted"
    assert response.json()["currentVersion"] == 1


async def test_missing_reason_is_400(client: httpx.AsyncClient, service: SignetService) -> None:
    created = await remember(client, "Needs a reason to change.")
    before = row_counts(service)
    patched = await client.patch(f"/api/memory/{created['id']}", json={"tags": ["x"]})
    deleted = await client.delete(f"/api/memory/{created['id']}")
    for response in (patched, deleted):
        assert response.status_code == 400 and response.json()["code"] == "reason_required"
    assert row_counts(service) == before
