"""The service's core routes on both backends: one test body over SQLite and over PostgreSQL.

`backend_client` (conftest.py) serves the real `build_service` over the workspace's SQLite file
or over a fresh PostgreSQL database named by `storage.url`. Remember, get, list, update,
forget, recover and history; recall (lexical, vector, filters, scope); the session hooks with
their transcripts; /health and /api/status; and agent B never sees agent A's rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from http_helpers import remember
from test_http_hooks import claude_transcript

from signet_desktop.service.facade import SignetService, database_info
from signet_desktop.storage import hints
from signet_desktop.storage.dialect import is_postgres

pytestmark = pytest.mark.anyio

B = {"x-signet-agent-id": "agent-b"}


def on_postgres(service: SignetService) -> bool:
    return is_postgres(service._db.reader())


async def recall(client: httpx.AsyncClient, query: str, **extra: Any) -> dict[str, Any]:
    response = await client.post("/api/memory/recall", json={"query": query, **extra})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_remember_get_list_update_forget_recover(backend_client: httpx.AsyncClient) -> None:
    client = backend_client
    created = await remember(client, "critical: [infra]: Backups run nightly at 02:00.")
    assert created["pinned"] is True and created["tags"] == ["infra"]
    again = await remember(client, "backups run NIGHTLY at 02:00.")
    assert again["deduped"] is True and again["id"] == created["id"]
    got = (await client.get(f"/api/memory/{created['id']}")).json()
    assert got["content"] == "Backups run nightly at 02:00." and got["version"] == 1
    patched = await client.patch(
        f"/api/memory/{created['id']}",
        json={"tags": ["backup"], "importance": 0.4, "reason": "triage", "if_version": 1},
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["version"] == 2 and patched.json()["memory"]["tags"] == ["backup"]
    edited = await client.patch(
        f"/api/memory/{created['id']}",
        json={"content": "Backups run nightly at 03:00.", "reason": "moved", "if_version": 2},
    )
    assert edited.status_code == 200, edited.text
    await remember(client, "The frontend is written in Svelte.")
    listed = (await client.get("/api/memories", params={"limit": 10})).json()
    assert {m["id"] for m in listed["memories"]} >= {created["id"]}
    forgot = await client.delete(
        f"/api/memory/{created['id']}", params={"reason": "cleanup", "force": "true"}
    )
    assert forgot.status_code == 200, forgot.text
    assert (await client.get(f"/api/memory/{created['id']}")).status_code == 404
    back = await client.post(f"/api/memory/{created['id']}/recover", json={"reason": "oops"})
    assert back.status_code == 200, back.text
    history = (await client.get(f"/api/memory/{created['id']}/history")).json()["history"]
    assert [e["event"] for e in history] == [
        "created",
        "modified",
        "modified",
        "deleted",
        "recovered",
    ]


async def test_recall_lexical_vector_filters_and_scope(
    backend_client: httpx.AsyncClient, backend_service: SignetService
) -> None:
    client = backend_client
    target = await remember(client, "Billing uses PostgreSQL 16 with logical replication.")
    await remember(client, "The frontend is written in Svelte.", tags=["web"])
    body = await recall(client, "postgresql billing")
    hit = body["results"][0]
    assert hit["id"] == target["id"] and hit["source"] == "hybrid"
    assert hit["lexical"]["rank"] == 1 and 0 < hit["lexical"]["score"] <= 1
    assert set(hit["semantic"]) == {"score", "rank"}
    assert body["vectorCompleteness"] == "complete"
    expected = "hnsw-pgvector" if on_postgres(backend_service) else "exact-in-memory"
    assert body["vectorIndex"] == expected
    # Filters: tags, who, and a GET alias.
    kept = await remember(client, "Kafka retention is seven days.", tags=["kafka"], who="ops")
    await remember(client, "Kafka brokers run on three hosts.", tags=["infra"], who="dev")
    filtered = await recall(client, "kafka", tags="kafka", who="ops", minScore=0)
    assert [h["id"] for h in filtered["results"]] == [kept["id"]]
    search = await client.get("/api/memory/search", params={"q": "svelte", "tags": "web"})
    assert [h["content"] for h in search.json()["results"]] == [
        "The frontend is written in Svelte."
    ]
    # Another agent's memories are never recalled, listed or read.
    theirs = await remember(client, "Agent B keeps the zebrafish notes.", agentId="agent-b")
    assert (await recall(client, "zebrafish notes"))["results"] == []
    assert (await client.get(f"/api/memory/{theirs['id']}")).status_code == 404
    mine = (await client.get("/api/memories", params={"limit": 50})).json()["memories"]
    assert theirs["id"] not in {m["id"] for m in mine}
    as_b = (await client.post("/api/memory/recall", json={"query": "billing"}, headers=B)).json()
    assert target["id"] not in {h["id"] for h in as_b["results"]}
    b_sees = await client.post("/api/memory/recall", json={"query": "zebrafish"}, headers=B)
    assert [h["id"] for h in b_sees.json()["results"]] == [theirs["id"]]


async def test_agent_b_cannot_change_agent_a(backend_client: httpx.AsyncClient) -> None:
    client = backend_client
    created = await remember(client, "The deploy key lives in the vault.", agentId="agent-a")
    url = f"/api/memory/{created['id']}"
    assert (await client.get(url, headers=B)).status_code == 404
    patch = await client.patch(url, json={"tags": ["x"], "reason": "r"}, headers=B)
    assert patch.status_code == 404
    delete = await client.delete(url, params={"reason": "r", "force": "true"}, headers=B)
    assert delete.status_code == 404
    as_a = {"x-signet-agent-id": "agent-a"}
    assert (await client.get(url, headers=as_a)).json()["tags"] == []


async def test_session_hooks_inject_and_keep_the_transcript(
    backend_client: httpx.AsyncClient, tmp_path: Path
) -> None:
    client = backend_client
    memory = await remember(client, "critical: The billing database is PostgreSQL 16.")
    start = await client.post(
        "/api/hooks/session-start", json={"harness": "codex", "sessionKey": "s1"}
    )
    assert start.status_code == 200, start.text
    assert "PostgreSQL 16" in start.json()["inject"]
    prompt = await client.post(
        "/api/hooks/user-prompt-submit",
        json={"harness": "codex", "sessionKey": "s2", "userMessage": "which billing database?"},
    )
    assert prompt.status_code == 200, prompt.text
    assert memory["id"] in prompt.json()["inject"] or "PostgreSQL 16" in prompt.json()["inject"]
    path = claude_transcript(tmp_path, "cc-1")
    body = {"harness": "claude-code", "sessionKey": "cc-1", "transcriptPath": str(path)}
    end = await client.post("/api/hooks/session-end", json=body)
    assert end.status_code == 200, end.text
    assert end.json()["transcript"]["turns"] == 2
    listed = (await client.get("/api/sessions")).json()
    assert "cc-1" in {s["sessionKey"] for s in listed["sessions"]}
    turns = (await client.get("/api/sessions/cc-1/transcript")).json()["turns"]
    assert [t["role"] for t in turns] == ["user", "assistant"]
    hits = (await client.post("/api/sessions/search", json={"query": "postgres"})).json()["hits"]
    assert [h["sessionKey"] for h in hits] == ["cc-1"]
    again = (await client.post("/api/hooks/session-end", json=body)).json()
    assert again["transcript"]["appended"] == 0
    as_b = await client.post("/api/sessions/search", json={"query": "postgres"}, headers=B)
    assert as_b.json()["hits"] == []
    assert (await client.get("/api/sessions", headers=B)).json()["total"] == 0


async def test_health_and_status(
    backend_client: httpx.AsyncClient, backend_service: SignetService
) -> None:
    client = backend_client
    assert (await client.get("/health")).status_code == 200
    info = database_info(backend_service._db)
    if on_postgres(backend_service):
        assert (info.backend, info.path, info.sqlite_version) == ("postgresql", None, None)
        assert str(info.url).startswith("postgresql://") and info.migrations >= 17
        assert str(info.server_version).startswith("18")
    else:
        assert info.backend == "sqlite" and str(info.path).endswith("memories.db")
    response = await client.get("/api/status")
    assert response.status_code == 200, response.text
    database = response.json()["database"]
    assert database["backend"] == info.backend and database["migrations"] == info.migrations
    assert database["url"] == info.url and database["serverVersion"] == info.server_version


async def test_a_vector_resync_reports_what_it_did_on_both(
    backend_client: httpx.AsyncClient, backend_service: SignetService
) -> None:
    """SQLite refills the vec0 mirror; PostgreSQL's HNSW index already covers every vector, so
    an incremental resync changes nothing and a full one builds the index again."""
    client = backend_client
    for text in ("billing runs on postgres", "deploys happen on tuesdays"):
        assert (
            await client.post("/api/memory/remember", json={"content": text})
        ).status_code == 200
    incremental = await client.post("/api/repair/resync-vec", json={})
    assert incremental.status_code == 200, incremental.text
    body = incremental.json()
    assert body["canonical"] == 2 and body["added"] == 0 and body["removed"] == 0, body
    full = await client.post("/api/repair/resync-vec", json={"full": True})
    assert full.status_code == 200, full.text
    assert full.json()["rebuilt"] is True and full.json()["added"] == 2, full.json()
    hits = (await client.post("/api/memory/recall", json={"query": "billing postgres"})).json()
    assert hits["results"][0]["content"] == "billing runs on postgres"
    assert hits["vectorCompleteness"] == "complete", hits  # the rebuilt index answers


async def test_the_workers_own_sweeps_run_on_both(
    backend_client: httpx.AsyncClient, backend_service: SignetService, tmp_path: Path
) -> None:
    """What the non-queue workers run at start and on their ticks: the content-safety sweep
    (every evidence kind), the artifact reindex and the connectors' interrupted-sync repair."""
    await remember(backend_client, "The staging cluster has four nodes.")
    path = claude_transcript(tmp_path, "cc-sweep")
    end = await backend_client.post(
        "/api/hooks/session-end",
        json={"harness": "claude-code", "sessionKey": "cc-sweep", "transcriptPath": str(path)},
    )
    assert end.status_code == 200, end.text
    safety = backend_service.safety
    assert safety.scan_pending(None, 100) >= 2  # the memory and the transcript
    assert safety.scan_pending(None, 100) == 0  # decided: nothing left to sweep
    status = safety.status("default")
    assert status.pending == 0 and status.counts["clean"] >= 2 and status.reasons == {}
    backend_service.artifacts.reindex()
    assert backend_service.connectors.recover() == 0


async def test_a_memory_is_recalled_through_its_hint_on_both(
    backend_client: httpx.AsyncClient, backend_service: SignetService
) -> None:
    """The hint channel: a memory whose prospective hint matches the query, scoped."""
    target = await remember(backend_client, "Invoices are generated by the ledger service.")
    other = await remember(backend_client, "Ledger notes of agent B.", agentId="agent-b")
    with backend_service._db.write() as conn:
        hints.insert_hints(conn, "default", target["id"], ["who produces monthly invoices?"])
        hints.insert_hints(conn, "agent-b", other["id"], ["who produces monthly invoices?"])
    body = await recall(backend_client, "monthly invoices producer", minScore=0)
    found = {h["id"]: h for h in body["results"]}
    assert target["id"] in found and other["id"] not in found
    assert "hint" in found[target["id"]]["channels"]
    # Two hints in the whole index: IDF weighs a term in both at 0 on SQLite.
    assert 0 <= found[target["id"]]["channels"]["hint"]["score"] <= 1
