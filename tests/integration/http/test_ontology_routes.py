"""/api/ontology* and /api/dream/attention, /api/dream/passes/{id}/revert over HTTP: the
seam's report, proposals, contradictions, revert with its 409, and agent scope per route."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from http_helpers import remember

from signet_desktop.dreaming.apply import apply_operations
from signet_desktop.service.facade import SignetService
from tests.support.db import database_of

pytestmark = pytest.mark.anyio
FACT = "Alice moved to Lisbon in May and now works at Acme."
B = {"x-signet-agent-id": "b"}


def op(name: str, payload: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"operation": name, "payload": payload, "confidence": 0.9, **extra}


async def memory(client: httpx.AsyncClient, content: str = FACT, agent: str = "default") -> str:
    body = await remember(client, content, agentId=agent)
    return str(body["id"])


async def apply(client: httpx.AsyncClient, ops: list[Any], **kw: Any) -> dict[str, Any]:
    response = await client.post("/api/ontology/apply", json={"operations": ops, **kw})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_manual_apply_dry_run_and_bad_input(client: httpx.AsyncClient) -> None:
    mid = await memory(client)
    cite = [{"quote": "Alice moved to Lisbon", "source_ref": f"memory:{mid}"}]
    ops = [
        op("create_entity", {"name": "Alice", "type": "person"}, evidence=cite),
        op("create_entity", {"name": "Paris"}, evidence=[cite[0] | {"quote": "Paris"}]),
        op("teleport", {}),
        op("merge_entities", {"targets": ["x", "y"], "survivor": "x"}),
    ]  # fmt: skip
    dry = await apply(client, ops, dryRun=True)
    assert dry["dryRun"] is True
    assert [r["status"] for r in dry["results"]] == ["valid", "skipped", "skipped", "skipped"]
    done = await apply(client, ops)
    results = done["results"]
    assert results[0]["status"] == "applied" and results[0]["created"]
    assert results[1]["code"] == "quote_not_found" and f"memory:{mid}" in results[1]["reason"]
    assert results[2]["code"] == "unknown_operation"
    assert results[3]["code"] == "target_not_found"
    assert done["counts"]["applied"] == 1 and done["counts"]["skipped"] == 3
    empty = await client.post("/api/ontology/apply", json={"operations": []})
    assert empty.status_code == 400 and empty.json()["code"] == "operations_invalid"
    over = await apply(client, [op("flag", {"subjectRef": "x"})] * 101)
    assert over["code"] == "request_cap_exceeded"
    assert {r["status"] for r in over["results"]} == {"skipped"}


async def test_proposals_flow_and_scope(client: httpx.AsyncClient) -> None:
    mid = await memory(client)
    cite = [{"quote": "works at Acme", "source_ref": f"memory:{mid}"}]
    risky = op(
        "create_entity", {"name": "Acme", "type": "organization"}, evidence=cite, risk="high"
    )
    first = await apply(client, [risky])
    assert first["results"][0]["status"] == "proposed"
    proposal_id = first["results"][0]["proposalId"]
    again = await apply(client, [risky])
    assert again["results"][0]["code"] == "duplicate_proposal"
    listed = (await client.get("/api/ontology/proposals")).json()
    assert [p["id"] for p in listed["proposals"]] == [proposal_id]
    assert listed["proposals"][0]["evidence"][0]["quote"] == "works at Acme"
    # agent b sees none of it and cannot decide it
    assert (await client.get("/api/ontology/proposals?status=all", headers=B)).json()[
        "proposals"
    ] == []
    foreign = await client.post(f"/api/ontology/proposals/{proposal_id}/apply", headers=B)
    assert foreign.status_code == 404
    no_reason = await client.post(f"/api/ontology/proposals/{proposal_id}/reject", json={})
    assert no_reason.status_code == 400 and no_reason.json()["code"] == "reason_required"
    applied = await client.post(f"/api/ontology/proposals/{proposal_id}/apply")
    assert applied.status_code == 200, applied.text
    body = applied.json()
    assert body["proposal"]["status"] == "applied" and body["report"]["results"][0]["created"]
    twice = await client.post(f"/api/ontology/proposals/{proposal_id}/apply")
    assert twice.status_code == 409 and twice.json()["code"] == "proposal_not_pending"


async def test_bulk_reject(client: httpx.AsyncClient) -> None:
    mid = await memory(client)
    cite = [{"quote": "Acme", "source_ref": f"memory:{mid}"}]
    out = await apply(client, [op("create_entity", {"name": n}, evidence=cite, risk="high")
                               for n in ("Acme", "Initech")])  # fmt: skip
    ids = [r["proposalId"] for r in out["results"]]
    response = await client.post(
        "/api/ontology/proposals/bulk",
        json={"ids": [*ids, "nope"], "action": "reject", "reason": "not companies"},
    )
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [r["ok"] for r in results] == [True, True, False]
    assert results[2]["code"] == "proposal_not_found"
    rejected = (await client.get("/api/ontology/proposals?status=rejected")).json()["proposals"]
    assert {p["id"] for p in rejected} == set(ids)


async def test_contradictions_and_attention(client: httpx.AsyncClient) -> None:
    mid = await memory(client)
    cite = [{"quote": "Lisbon", "source_ref": f"memory:{mid}"}]
    made = await apply(client, [op("create_entity", {"name": "Alice"}, evidence=cite)])
    alice = made["results"][0]["created"][0]
    aspect = (await apply(client, [op("create_aspect", {"entityId": alice, "name": "home"},
                                      evidence=cite)]))["results"][0]["created"][0]  # fmt: skip
    claim = {"entityId": alice, "aspectId": aspect, "claimKey": "city"}
    lisbon = op("add_claim_value", claim | {"value": "Lisbon"}, evidence=cite)
    porto = op("add_claim_value", claim | {"value": "Porto"}, evidence=cite)
    await apply(client, [lisbon, porto])
    found = (await client.get("/api/ontology/contradictions")).json()["contradictions"]
    assert len(found) == 1 and found[0]["claimKey"] == "city"
    assert {found[0]["left"]["content"], found[0]["right"]["content"]} == {"Lisbon", "Porto"}
    assert (await client.get("/api/ontology/contradictions", headers=B)).json()[
        "contradictions"
    ] == []
    await apply(client, [op("flag", {"subjectRef": f"entity:{alice}", "details": "dupe?"})])
    attention = (await client.get("/api/dream/attention")).json()["attention"]
    assert [a["subjectRef"] for a in attention] == [f"entity:{alice}"]
    assert (await client.get("/api/dream/attention", headers=B)).json()["attention"] == []
    bad = await client.get("/api/dream/attention?status=weird")
    assert bad.status_code == 400


async def test_revert_a_pass(client: httpx.AsyncClient, service: SignetService) -> None:
    mid = await memory(client)
    db = database_of(service)
    cite = [{"quote": "Alice", "source_ref": f"memory:{mid}"}]
    report = apply_operations(
        db, agent_id="default", pass_id="p1", actor="dreaming:p1",
        operations=[op("create_entity", {"name": "Alice", "type": "person"}, evidence=cite)],
    )  # fmt: skip
    alice = report.results[0].created[0]
    foreign = await client.post("/api/dream/passes/p1/revert", json={"dryRun": True}, headers=B)
    assert foreign.status_code == 404
    dry = await client.post("/api/dream/passes/p1/revert", json={"dryRun": True})
    assert dry.status_code == 200
    body = dry.json()
    assert body["dryRun"] is True and body["reverted"] is False and body["blockers"] == []
    assert body["changes"][0] == {
        "action": "archive",
        "targetTable": "entities",
        "targetId": alice,
        "before": body["changes"][0]["before"],
        "after": body["changes"][0]["after"],
    }
    assert body["changes"][0]["after"]["status"] == "archived"
    # a later pass merges Alice away: the revert is refused, naming it
    dup = apply_operations(
        db, agent_id="default", pass_id="p2", actor="dreaming:p2",
        operations=[op("create_entity", {"name": "ALICE"}, evidence=cite)],
    ).results[0].created[0]  # fmt: skip
    ticket = apply_operations(
        db, agent_id="default", pass_id=None, actor="t",
        operations=[op("flag", {"subjectRef": f"entity:{alice}"})],
    ).results[0].created[0]  # fmt: skip
    merged = apply_operations(
        db, agent_id="default", pass_id="p2", actor="dreaming:p2",
        operations=[op("merge_entities", {"targets": [dup, alice], "survivor": dup},
                       provenance=f"attention:{ticket}")],
    )  # fmt: skip
    assert merged.results[0].status == "applied", merged.results
    blocked = await client.post("/api/dream/passes/p1/revert", json={})
    assert blocked.status_code == 409
    refused = blocked.json()
    assert refused["code"] == "revert_blocked" and refused["reverted"] is False
    assert refused["blockers"][0]["byPassId"] == "p2"
    assert "merge_entities by pass p2" in refused["error"]
    # p2 itself can be reverted, then p1
    assert (await client.post("/api/dream/passes/p2/revert")).json()["reverted"] is True
    assert (await client.post("/api/dream/passes/p1/revert")).json()["reverted"] is True
    again = (await client.post("/api/dream/passes/p1/revert")).json()
    assert again["alreadyReverted"] is True and "already reverted" in again["reason"]


async def test_transcript_quotes_over_http(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    from signet_desktop.storage import transcripts

    db = database_of(service)
    for agent, key, text, done in (
        ("default", "done", "User: we deploy with Kamal on Fridays", True),
        ("default", "open", "User: the database is Postgres 16", False),
        ("b", "theirs", "User: Bob uses Rust at work", True),
    ):
        with db.write() as conn:
            transcripts.save_transcript(
                conn, agent_id=agent, session_key=key, harness="claude-code", project=None,
                content=text, turn_count=1, content_hash="h", complete=done,
            )  # fmt: skip

    def cite(quote: str, ref: str) -> dict[str, Any]:
        return op("create_entity", {"name": quote.split()[-1]},
                  evidence=[{"quote": quote, "source_ref": ref}])  # fmt: skip

    out = await apply(
        client,
        [
            cite("deploy with Kamal", "transcript:done"),
            cite("Postgres 16", "transcript:open"),
            cite("Bob uses Rust", "transcript:theirs"),
            cite("deploy with Docker", "transcript:done"),
        ],
    )
    got = [(r["status"], r["code"]) for r in out["results"]]
    assert got == [
        ("applied", None),
        ("skipped", "source_in_progress"),
        ("skipped", "scope_mismatch"),
        ("skipped", "quote_not_found"),
    ]
    reasons = [r["reason"] for r in out["results"][1:]]
    assert "in progress" in reasons[0] and "scope mismatch" in reasons[1]
    assert reasons[2] == "quote not found in transcript:done"
    names = {r[0] for r in db.reader().execute("SELECT name FROM entities").fetchall()}
    assert names == {"Kamal"}
