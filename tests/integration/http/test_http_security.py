"""The request gate: Host, Origin, bearer token, body size, request ids; and bind refusal."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from http_helpers import make_client, remember, row_counts

from signet_desktop.api.http.app import create_app
from signet_desktop.api.http.settings import HttpSettings, InsecureBindError, settings_from_auth
from signet_desktop.config.sections import AuthConfig
from signet_desktop.service.facade import SignetService

pytestmark = pytest.mark.anyio

TOKEN = "s3cret-token-for-tests"
REMEMBER = "/api/memory/remember"


@pytest.mark.parametrize(
    "host",
    ["evil.example", "127.0.0.1.nip.io", "localhost.evil.example", "10.0.0.5:3850", "", "[::1"],
)
async def test_foreign_host_is_refused(
    client: httpx.AsyncClient, service: SignetService, host: str
) -> None:
    before = row_counts(service)
    for method, path in (("GET", "/health"), ("POST", REMEMBER)):
        response = await client.request(
            method, path, json={"content": "rebinding"}, headers={"host": host}
        )
        assert response.status_code == 403, (host, response.text)
        assert response.json() == {"error": "host not allowed", "code": "host_not_allowed"}
    assert row_counts(service) == before


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1", "127.0.0.1:3850", "localhost", "LOCALHOST:1", "[::1]:3850", "[::1]", "::1"],
)
async def test_loopback_hosts_are_allowed(client: httpx.AsyncClient, host: str) -> None:
    response = await client.get("/health", headers={"host": host})
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(
    "origin",
    ["http://evil.example", "null", "https://localhost.evil.example", "file://", "http://127.0.0.1:abc",
     "chrome-extension://abcdef", "http://10.0.0.5:3850"],
)  # fmt: skip
async def test_cross_site_origin_is_refused_for_every_method(
    client: httpx.AsyncClient, service: SignetService, origin: str
) -> None:
    before = row_counts(service)
    headers = {"origin": origin}
    response = await client.post(REMEMBER, json={"content": "csrf"}, headers=headers)
    assert response.status_code == 403, response.text
    assert response.json()["code"] == "origin_not_allowed"
    for method in ("PATCH", "DELETE"):
        other = await client.request(method, "/api/memory/x", json={}, headers=headers)
        assert other.status_code == 403
    assert row_counts(service) == before
    # Reads too: no CORS means the page cannot read the answer, but nothing needs serving it.
    for path in ("/api/memories", "/api/memory/search?q=x", "/api/status", "/api/events"):
        assert (await client.get(path, headers=headers)).status_code == 403, path


@pytest.mark.parametrize(
    "origin",
    ["http://localhost:5173", "http://127.0.0.1:3850", "https://[::1]:8443", "http://localhost"],
)
async def test_loopback_origin_may_mutate(client: httpx.AsyncClient, origin: str) -> None:
    response = await client.post(
        REMEMBER, json={"content": f"from {origin}"}, headers={"origin": origin}
    )
    assert response.status_code == 200, response.text


async def test_oversized_body_by_content_length_is_413(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    before = row_counts(service)
    body = b'{"content": "' + b"x" * 1_100_000 + b'"}'
    response = await client.post(
        REMEMBER, content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"
    assert row_counts(service) == before


async def test_oversized_streamed_body_without_length_is_413(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"content": "'
        for _ in range(20):
            yield b"y" * 100_000
        yield b'"}'

    before = row_counts(service)
    response = await client.post(REMEMBER, content=chunks())
    assert response.status_code == 413
    assert row_counts(service) == before


async def test_body_just_under_the_limit_is_read(service: SignetService, tmp_path: Path) -> None:
    app = create_app(service, HttpSettings(max_body_bytes=200))
    async with make_client(app) as client:
        ok = await client.post(REMEMBER, json={"content": "small"})
        too_big = await client.post(REMEMBER, json={"content": "z" * 300})
    assert ok.status_code == 200 and too_big.status_code == 413


async def test_bad_content_length_is_400(client: httpx.AsyncClient) -> None:
    response = await client.post(
        REMEMBER,
        content=b"{}",
        headers={"content-length": "abc", "content-type": "application/json"},
    )
    assert response.status_code == 400


async def test_repeated_gate_headers_are_refused(app: FastAPI) -> None:
    scope_headers = [(b"host", b"evil.example"), (b"host", b"127.0.0.1")]
    status: list[int] = []

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, object]) -> None:
        if message["type"] == "http.response.start":
            status.append(int(message["status"]))  # type: ignore[call-overload]

    scope = {
        "type": "http",
        "method": "GET",
        "path": "/health",
        "raw_path": b"/health",
        "headers": scope_headers,
        "query_string": b"",
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 3850),
        "scheme": "http",
        "http_version": "1.1",
        "root_path": "",
    }
    await app(scope, receive, send)
    assert status == [400]


async def test_request_id_is_echoed_or_generated(client: httpx.AsyncClient) -> None:
    echoed = await client.get("/health", headers={"x-signet-request-id": "abc-123"})
    assert echoed.headers["x-signet-request-id"] == "abc-123"
    generated = await client.get("/health")
    assert len(generated.headers["x-signet-request-id"]) == 32
    hostile = await client.get("/health", headers={"x-signet-request-id": "a b\tc" * 50})
    assert hostile.headers["x-signet-request-id"] != "a b\tc" * 50
    refused = await client.get("/health", headers={"host": "evil.example"})
    assert "x-signet-request-id" in refused.headers


@pytest.fixture
async def token_client(service: SignetService) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(service, HttpSettings(auth_token=TOKEN, agents_dir="/secret/path"))
    async with make_client(app) as client:
        yield client


async def test_token_required_on_every_api_route(
    token_client: httpx.AsyncClient, service: SignetService
) -> None:
    before = row_counts(service)
    for method, path in (("GET", "/api/status"), ("GET", "/api/memories"), ("POST", REMEMBER),
                         ("GET", "/api/memory/search?q=x"), ("GET", "/openapi.json"),
                         ("DELETE", "/api/memory/x")):  # fmt: skip
        for auth in (None, "Bearer wrong", f"Basic {TOKEN}", "Bearer", f"Bearer {TOKEN}x"):
            headers = {"authorization": auth} if auth else {}
            response = await token_client.request(
                method, path, json={"content": "x"}, headers=headers
            )
            assert response.status_code == 401, (method, path, auth)
            assert response.headers["www-authenticate"].startswith("Bearer")
            assert response.json()["code"] == "unauthorized"
    assert row_counts(service) == before


async def test_right_token_is_accepted(token_client: httpx.AsyncClient) -> None:
    headers = {"authorization": f"Bearer {TOKEN}"}
    created = await token_client.post(REMEMBER, json={"content": "authorised"}, headers=headers)
    assert created.status_code == 200
    lower = await token_client.get("/api/memories", headers={"authorization": f"bearer {TOKEN}"})
    assert lower.status_code == 200 and len(lower.json()["memories"]) == 1


async def test_health_needs_no_token_but_hides_details(token_client: httpx.AsyncClient) -> None:
    anonymous = await token_client.get("/health")
    assert anonymous.status_code == 200 and anonymous.json()["status"] == "healthy"
    assert "agentsDir" not in anonymous.json() and "pid" not in anonymous.json()
    for path in ("/health/live", "/health/ready"):
        assert (await token_client.get(path)).status_code == 200
    authed = await token_client.get("/health", headers={"authorization": f"Bearer {TOKEN}"})
    assert authed.json()["agentsDir"] == "/secret/path"


async def test_hybrid_mode_trusts_loopback_callers_only(service: SignetService) -> None:
    settings = HttpSettings(auth_token=TOKEN, trust_loopback_clients=True)
    app = create_app(service, settings)
    async with make_client(app, client=("127.0.0.1", 4000)) as local:
        assert (await local.get("/api/memories")).status_code == 200
    async with make_client(app, client=("203.0.113.9", 4000)) as remote:
        assert (await remote.get("/api/memories")).status_code == 401


def test_non_loopback_bind_without_token_is_refused(service: SignetService) -> None:
    for host in ("0.0.0.0", "192.168.1.10", "::", "example.com"):
        with pytest.raises(InsecureBindError):
            create_app(service, HttpSettings(host=host))
    assert create_app(service, HttpSettings(host="0.0.0.0", auth_token=TOKEN))


async def test_wildcard_bind_with_token_accepts_any_host(service: SignetService) -> None:
    app = create_app(service, HttpSettings(host="0.0.0.0", auth_token=TOKEN))
    async with make_client(app, base_url="http://192.168.1.10:3850") as client:
        headers = {"authorization": f"Bearer {TOKEN}"}
        assert (await client.get("/api/memories", headers=headers)).status_code == 200


async def test_specific_bind_host_is_an_allowed_host(service: SignetService) -> None:
    app = create_app(service, HttpSettings(host="192.168.1.10", auth_token=TOKEN))
    headers = {"authorization": f"Bearer {TOKEN}", "origin": "http://192.168.1.10:3850"}
    async with make_client(app, base_url="http://192.168.1.10:3850") as client:
        assert (
            await client.post(REMEMBER, json={"content": "lan"}, headers=headers)
        ).status_code == 200
        foreign = await client.get("/api/memories", headers={**headers, "host": "evil.example"})
        assert foreign.status_code == 403


def test_settings_from_auth_modes() -> None:
    local = settings_from_auth(AuthConfig())
    assert local.auth_token is None and not local.trust_loopback_clients
    with_token = AuthConfig.model_validate({"mode": "local", "token": TOKEN})
    assert settings_from_auth(with_token).auth_token is None  # local + loopback: no auth
    assert settings_from_auth(with_token, host="0.0.0.0").auth_token == TOKEN
    team = settings_from_auth(AuthConfig.model_validate({"mode": "team", "token": TOKEN}))
    assert team.auth_token == TOKEN and not team.trust_loopback_clients
    hybrid = settings_from_auth(AuthConfig.model_validate({"mode": "hybrid", "token": TOKEN}))
    assert hybrid.auth_token == TOKEN and hybrid.trust_loopback_clients
    with pytest.raises(InsecureBindError):
        settings_from_auth(AuthConfig(), host="0.0.0.0")


async def test_openapi_schema_is_served_and_docs_are_off(app: FastAPI) -> None:
    async with make_client(app) as client:
        schema = (await client.get("/openapi.json")).json()
        assert (await client.get("/docs")).status_code == 404
    paths = schema["paths"]
    for path in ("/api/memory/remember", "/api/memory/recall", "/api/memory/search",
                 "/api/memory/{memory_id}", "/api/memory/{memory_id}/history",
                 "/api/memory/{memory_id}/recover", "/api/memories", "/health", "/api/status",
                 "/api/memory/save", "/api/hook/remember"):  # fmt: skip
        assert path in paths, path
    remember_schema = schema["components"]["schemas"]["RememberBody"]
    assert "content" in remember_schema["required"]


# --- the loopback rebinding matrix: auth mode x bind x Host x Origin x method -----------------

MODES = ("local", "team", "hybrid")
BINDS = ("127.0.0.1", "::1", "localhost", "0.0.0.0", "::", "192.168.1.10")
READS = ("/api/memories", "/api/memory/search?q=rebinding", "/api/status", "/health")
FORGED_HOSTS = ("evil.example:3850", "attacker.test", "127.0.0.1.evil.example")
CROSS_SITE = ("http://evil.example:3850", "null", "https://attacker.test")
MATRIX = [(mode, bind, TOKEN) for mode in MODES for bind in BINDS] + [
    ("local", bind, None) for bind in ("127.0.0.1", "::1", "localhost")
]


def _matrix_app(service: SignetService, mode: str, bind: str, token: str | None) -> FastAPI:
    auth = AuthConfig.model_validate({"mode": mode, **({"token": token} if token else {})})
    return create_app(service, settings_from_auth(auth, host=bind))


async def _secret_memory(service: SignetService, app: FastAPI) -> None:
    async with make_client(app, headers={"authorization": f"Bearer {TOKEN}"}) as client:
        await remember(client, "the rebinding page must never read this")


@pytest.mark.parametrize(("mode", "bind", "token"), MATRIX)
async def test_forged_host_from_loopback_is_never_served(
    service: SignetService, mode: str, bind: str, token: str | None
) -> None:
    """A DNS-rebinding page: a loopback peer, a foreign Host, no token."""
    app = _matrix_app(service, mode, bind, token)
    await _secret_memory(service, app)
    before = row_counts(service)
    async with make_client(app, client=("127.0.0.1", 50000)) as page:
        for host in FORGED_HOSTS:
            for method, path in [("GET", p) for p in READS] + [("POST", REMEMBER)]:
                response = await page.request(
                    method, path, json={"content": "rebound"}, headers={"host": host}
                )
                assert "rebinding page must never" not in response.text
                if path == "/health" and response.status_code == 200:
                    # A caller that must show a token gets health's public answer anywhere.
                    assert not {"agentsDir", "pid"} & set(response.json()), (mode, bind)
                    continue
                assert response.status_code in (401, 403), (host, method, path, response.text)
            # Served on trust alone (no token, or hybrid on loopback): the Host check is what
            # stands between the page and the memories, so it must be a Host refusal.
            honest = await page.get("/api/memories")
            if honest.status_code == 200:
                forged = await page.get("/api/memories", headers={"host": host})
                assert forged.json()["code"] == "host_not_allowed"
    assert row_counts(service) == before


@pytest.mark.parametrize(("mode", "bind", "token"), MATRIX)
async def test_cross_site_origin_is_refused_in_every_mode_and_bind(
    service: SignetService, mode: str, bind: str, token: str | None
) -> None:
    app = _matrix_app(service, mode, bind, token)
    await _secret_memory(service, app)
    before = row_counts(service)
    with_token = {"authorization": f"Bearer {TOKEN}"} if token else {}
    requests = [("GET", "/api/memories"), ("GET", "/api/memory/search?q=x"), ("POST", REMEMBER),
                ("PATCH", "/api/memory/x"), ("DELETE", "/api/memory/x")]  # fmt: skip
    async with make_client(app, client=("127.0.0.1", 50000)) as page:
        for origin in CROSS_SITE:
            for auth in ({}, with_token):
                for method, path in requests:
                    response = await page.request(
                        method, path, json={"content": "csrf"}, headers={"origin": origin, **auth}
                    )
                    assert response.status_code == 403, (origin, method, path, response.text)
                    assert response.json()["code"] == "origin_not_allowed"
    assert row_counts(service) == before


async def test_wildcard_hybrid_still_serves_remote_token_holders(service: SignetService) -> None:
    app = _matrix_app(service, "hybrid", "0.0.0.0", TOKEN)
    headers = {"authorization": f"Bearer {TOKEN}"}
    lan = "http://192.168.1.10:3850"
    async with make_client(app, client=("192.168.1.20", 4000), base_url=lan) as remote:
        assert (await remote.get("/api/memories", headers=headers)).status_code == 200
        assert (await remote.get("/api/memories")).status_code == 401
        assert (await remote.get("/health")).json()["status"] == "healthy"  # the public answer
    async with make_client(app, client=("127.0.0.1", 4000), base_url=lan) as local:
        # The token settles it: a loopback tool that shows it may use any name for the host.
        assert (await local.get("/api/memories", headers=headers)).status_code == 200
        assert (await local.get("/api/memories")).status_code == 403
