"""auth.rateLimits are enforced in team and hybrid modes: 429 with Retry-After, nothing done."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI
from http_helpers import make_client, memory_row, remember

from signet_desktop.api.http.app import create_app
from signet_desktop.api.http.ratelimit import route_rules
from signet_desktop.api.http.settings import settings_from_auth
from signet_desktop.config.sections import AuthConfig
from signet_desktop.service.facade import SignetService

pytestmark = pytest.mark.anyio

TOKEN = "rate-limit-token"
BEARER = {"authorization": f"Bearer {TOKEN}"}


def _client(service: SignetService, mode: str, **limits: int) -> httpx.AsyncClient:
    auth = AuthConfig.model_validate(
        {
            "mode": mode,
            "token": TOKEN,
            "rateLimits": {name: {"max": value} for name, value in limits.items()},
        }
    )
    return make_client(create_app(service, settings_from_auth(auth)))


async def test_forget_beyond_the_limit_is_429_and_deletes_nothing(service: SignetService) -> None:
    async with _client(service, "team", forget=2) as client:
        ids = [
            (
                await client.post("/api/memory/remember", json={"content": f"m{i}"}, headers=BEARER)
            ).json()["id"]
            for i in range(3)
        ]
        for memory_id in ids[:2]:
            ok = await client.delete(f"/api/memory/{memory_id}?reason=r", headers=BEARER)
            assert ok.status_code == 200, ok.text
        refused = await client.delete(f"/api/memory/{ids[2]}?reason=r", headers=BEARER)
    assert refused.status_code == 429
    assert refused.json()["code"] == "rate_limited"
    assert "auth.rateLimits.forget" in refused.json()["error"]
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    assert memory_row(service, ids[2])["is_deleted"] == 0


async def test_hybrid_loopback_callers_cannot_reset_a_limit_by_renaming_themselves(
    service: SignetService,
) -> None:
    """x-signet-actor is attribution only: every token-less caller on one peer shares a limit."""
    async with _client(service, "hybrid", modify=1) as client:
        memory = await remember(client, "limited per peer")
        path = f"/api/memory/{memory['id']}"
        steps = (("alice", 200), ("alice", 429), ("bob", 429), ("", 429), ("carol-2", 429))
        for index, (actor, expected) in enumerate(steps):
            headers = {"x-signet-actor": actor} if actor else {}
            body = {"importance": 0.1 + index / 10, "reason": "r"}
            response = await client.patch(path, json=body, headers=headers)
            assert response.status_code == expected, (actor, response.text)
            if expected == 429:
                assert "retry-after" in response.headers
    assert memory_row(service, memory["id"])["importance"] == pytest.approx(0.1)


async def test_limits_count_per_peer_and_per_token(service: SignetService) -> None:
    """Another peer, the configured token and each scoped token have their own windows."""
    auth = AuthConfig.model_validate(
        {"mode": "hybrid", "token": TOKEN, "rateLimits": {"modify": {"max": 1}}}
    )
    app = create_app(service, settings_from_auth(auth))
    scoped = [
        service.tokens.create(service.tokens.spec(f"t{i}", ["write", "read"], ["default"]))
        for i in range(2)
    ]
    async with make_client(app) as local:
        memory = await remember(local, "limited per identity")
        path = f"/api/memory/{memory['id']}"
        body = {"importance": 0.3, "reason": "r"}
        assert (await local.patch(path, json=body)).status_code == 200
        assert (await local.patch(path, json=body)).status_code == 429
        for headers in [BEARER] + [{"authorization": f"Bearer {t.secret}"} for t in scoped]:
            first = await local.patch(path, json=body, headers=headers)
            again = await local.patch(
                path, json=body, headers={**headers, "x-signet-actor": "someone-else"}
            )
            assert (first.status_code, again.status_code) == (200, 429), first.text
    async with make_client(app, client=("127.0.0.2", 4000)) as other_peer:
        assert (await other_peer.patch(path, json=body)).status_code == 200


async def test_local_mode_applies_no_limit(service: SignetService) -> None:
    async with _client(service, "local", modify=0) as client:
        memory = await remember(client, "no limits locally")
        response = await client.patch(
            f"/api/memory/{memory['id']}", json={"importance": 0.4, "reason": "r"}
        )
    assert response.status_code == 200, response.text


async def test_admin_limit_guards_pipeline_pause(service: SignetService) -> None:
    async with _client(service, "team", admin=1) as client:
        assert (await client.post("/api/pipeline/pause", headers=BEARER)).status_code == 200
        again = await client.post("/api/pipeline/pause", headers=BEARER)
        assert again.status_code == 429
        # Reads are never limited.
        assert (await client.get("/api/pipeline/status", headers=BEARER)).status_code == 200


def test_every_rate_limited_route_declares_429_in_openapi(app: FastAPI) -> None:
    """/openapi.json promises 429 exactly where the gate can answer it."""
    document = app.openapi()
    for path, operations in document["paths"].items():
        concrete = path.replace("{memory_id}", "m1").replace("{job_id}", "j1")
        for method, operation in operations.items():
            limited = route_rules(method.upper(), concrete, b"", b"")
            declared = "429" in operation["responses"]
            assert declared == bool(limited), f"{method.upper()} {path}: 429 {declared=}"


async def test_mcp_tool_calls_count_against_the_same_limits(service: SignetService) -> None:
    """memory_forget over /mcp shares the forget limit of DELETE /api/memory/{id}."""
    async with _client(service, "team", forget=1) as client:
        memory = (
            await client.post("/api/memory/remember", json={"content": "m"}, headers=BEARER)
        ).json()
        ok = await client.delete(f"/api/memory/{memory['id']}?reason=r", headers=BEARER)
        assert ok.status_code == 200, ok.text
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "memory_forget", "arguments": {"id": memory["id"]}},
        }
        headers = {**BEARER, "accept": "application/json, text/event-stream"}
        refused = await client.post("/mcp", json=call, headers=headers)
    assert refused.status_code == 429
    assert "auth.rateLimits.forget" in refused.json()["error"]
