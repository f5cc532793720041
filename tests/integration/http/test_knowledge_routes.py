"""/api/knowledge/*: reads and explicit writes, 422 on bad bodies, 404 across agents, and
structured remember over HTTP."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.anyio

B = {"x-signet-agent-id": "agent-b"}


async def ok(reply: httpx.Response, status: int = 200) -> Any:
    assert reply.status_code == status, reply.text
    return reply.json()


async def make_entity(client: httpx.AsyncClient, name: str, kind: str = "system", **kw: Any) -> str:
    body = await ok(
        await client.post("/api/knowledge/entities", json={"name": name, "type": kind, **kw}), 201
    )
    return str(body["entity"]["id"])


async def test_write_then_read_an_entity(client: httpx.AsyncClient) -> None:
    pg = await make_entity(client, "Postgres", aliases=["PG"], description="the database")
    again = await ok(
        await client.post("/api/knowledge/entities", json={"name": "postgres", "type": "system"})
    )
    assert again["created"] is False and again["entity"]["id"] == pg
    ana = await make_entity(client, "Ana", "person")
    await ok(
        await client.post(f"/api/knowledge/entities/{pg}/aspects", json={"name": "deployment"}), 201
    )
    claim = await ok(
        await client.post(
            f"/api/knowledge/entities/{pg}/claims",
            json={"aspect": "deployment", "content": "5432", "claim_key": "port",
                  "evidence": [{"quote": "port 5432", "source_ref": "transcript:s1#3"}]},
        ),
        201,
    )  # fmt: skip
    await ok(
        await client.post(
            f"/api/knowledge/entities/{pg}/claims",
            json={"aspect": "deployment", "content": "5433", "claimKey": "port"},
        ),
        201,
    )
    link = await ok(
        await client.post(
            "/api/knowledge/links",
            json={"source_entity_id": ana, "target_entity_id": pg, "dependency_type": "maintains"},
        ),
        201,
    )
    detail = await ok(await client.get(f"/api/knowledge/entities/{pg}"))
    assert detail["entity"]["name"] == "Postgres"
    assert [a["alias"] for a in detail["aliases"]] == ["PG"]
    (aspect,) = detail["aspects"]
    assert [(a["content"], a["status"]) for a in aspect["attributes"]] == [
        ("5433", "active"),
        ("5432", "superseded"),
    ]
    assert claim["attribute"]["evidence"][0]["source_ref"] == "transcript:s1#3"
    assert detail["dependencies"]["incoming"][0]["id"] == link["dependency"]["id"]
    assert detail["dependencies"]["incoming"][0]["source_name"] == "Ana"
    listing = await ok(await client.get("/api/knowledge/entities", params={"q": "pg"}))
    assert [e["id"] for e in listing["items"]] == [pg]
    typed = await ok(await client.get("/api/knowledge/entities", params={"type": "person"}))
    assert [e["name"] for e in typed["items"]] == ["Ana"]
    stats = await ok(await client.get("/api/knowledge/stats"))
    assert stats["entities"] == 2 and stats["attributes_by_status"] == {
        "active": 1,
        "superseded": 1,
    }
    renamed = await ok(
        await client.post(f"/api/knowledge/entities/{pg}/rename", json={"name": "PostgreSQL"})
    )
    assert renamed["entity"]["name"] == "PostgreSQL"
    archived = await ok(
        await client.post(f"/api/knowledge/entities/{ana}/archive", json={"reason": "left"})
    )
    assert archived["entity"]["status"] == "archived"
    assert (await ok(await client.get("/api/knowledge/stats")))["entities_by_status"] == {
        "active": 1, "archived": 1,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/knowledge/entities", {"name": "X", "type": "spaceship"}),
        ("/api/knowledge/entities", {"name": ""}),
        ("/api/knowledge/entities", {"name": "x" * 201}),
        ("/api/knowledge/entities", {"name": "X", "aliases": ["a"] * 11}),
        ("/api/knowledge/links", {"source_entity_id": "a", "target_entity_id": "b"}),
        ("/api/knowledge/links", {"source": "a", "target": "b", "type": "t", "strength": 2}),
    ],
)
async def test_bad_bodies_are_422_and_write_nothing(
    client: httpx.AsyncClient, path: str, body: dict[str, Any]
) -> None:
    reply = await client.post(path, json=body)
    assert reply.status_code == 422, reply.text
    assert (await ok(await client.get("/api/knowledge/stats")))["entities"] == 0


async def test_unknown_type_names_the_allowed_list(client: httpx.AsyncClient) -> None:
    reply = await client.post("/api/knowledge/entities", json={"name": "X", "type": "spaceship"})
    assert reply.status_code == 422 and "person" in reply.text
    bad_filter = await client.get("/api/knowledge/entities", params={"type": "spaceship"})
    assert bad_filter.status_code == 422


async def test_another_agents_entity_is_404(client: httpx.AsyncClient) -> None:
    pg = await make_entity(client, "Secret Project")
    mine = await ok(
        await client.post("/api/knowledge/entities", json={"name": "Mine"}, headers=B), 201
    )
    mine_id = mine["entity"]["id"]
    assert (await client.get(f"/api/knowledge/entities/{pg}", headers=B)).status_code == 404
    assert (await client.get(f"/api/knowledge/entities/{pg}?agentId=agent-b")).status_code == 404
    for path, body in (
        (f"/api/knowledge/entities/{pg}/aliases", {"alias": "x"}),
        (f"/api/knowledge/entities/{pg}/aspects", {"name": "x"}),
        (f"/api/knowledge/entities/{pg}/claims", {"aspect": "x", "content": "y"}),
        (f"/api/knowledge/entities/{pg}/archive", {}),
        (f"/api/knowledge/entities/{pg}/rename", {"name": "Stolen"}),
        ("/api/knowledge/links", {"source": mine_id, "target": pg, "type": "uses"}),
    ):
        reply = await client.post(path, json=body, headers=B)
        assert reply.status_code == 404, (path, reply.text)
        assert "Secret Project" not in reply.text
    listing = await ok(await client.get("/api/knowledge/entities", headers=B))
    assert [e["name"] for e in listing["items"]] == ["Mine"]
    assert (await ok(await client.get("/api/knowledge/stats", headers=B)))["entities"] == 1
    still = await ok(await client.get(f"/api/knowledge/entities/{pg}"))
    assert still["entity"]["name"] == "Secret Project" and still["aspects"] == []


async def test_structured_remember_over_http(client: httpx.AsyncClient) -> None:
    body = {
        "content": "Kafka 3 carries the billing events",
        "structured": {
            "entities": [{"name": "Kafka 3", "type": "system"}],
            "aspects": [
                {"entity": "Kafka 3", "name": "role", "claims": ["carries billing events"]}
            ],
            "hints": ["what carries billing events?"],
        },
    }
    answer = await ok(await client.post("/api/memory/remember", json=body))
    assert answer["structured_applied"] is True
    assert (answer["entities_linked"], answer["hints_written"]) == (1, 1)
    (entity_id,) = answer["structured"]["entity_ids"]
    detail = await ok(await client.get(f"/api/knowledge/entities/{entity_id}"))
    assert detail["mentions"][0]["memory_id"] == answer["id"]
    assert detail["aspects"][0]["attributes"][0]["memory_id"] == answer["id"]
    plain = await ok(await client.post("/api/memory/remember", json={"content": "no structure"}))
    assert plain["structured_applied"] is False and plain["structured"] is None


async def test_structured_remember_rejected_whole(client: httpx.AsyncClient) -> None:
    for structured in (
        {"entities": [{"name": "X", "type": "spaceship"}]},
        {"aspects": [{"entity": "X", "name": "n" * 500}]},
        {"aspects": [{"entity": "X", "name": "ok", "claims": ["c" * 5000]}]},
    ):
        reply = await client.post(
            "/api/memory/remember", json={"content": "must not be stored", "structured": structured}
        )
        assert reply.status_code == 422, reply.text
    found = await ok(await client.get("/api/memories"))
    assert found["memories"] == []
    assert (await ok(await client.get("/api/knowledge/stats")))["entities"] == 0
