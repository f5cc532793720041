"""Pure parts of the request gate and settings: Host parsing, Origin rules, loopback checks."""

from __future__ import annotations

import dataclasses
import json

import pytest

from signet_desktop.api.http.principal import CONFIGURED_TOKEN, LOCAL_USER
from signet_desktop.api.http.security import (
    RequestGate,
    rate_key,
    split_host_header,
    token_principal,
)
from signet_desktop.api.http.settings import (
    HttpSettings,
    InsecureBindError,
    check_bind,
    is_loopback_host,
)
from signet_desktop.domain.tokens import ApiToken


async def _app(scope: object, receive: object, send: object) -> None:  # pragma: no cover
    raise AssertionError("never called")


@pytest.mark.parametrize(
    ("header", "host"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("127.0.0.1:3850", "127.0.0.1"),
        ("LocalHost:80", "localhost"),
        ("localhost.", "localhost"),
        ("[::1]", "::1"),
        ("[::1]:3850", "::1"),
        ("::1", "::1"),
        ("example.com:443", "example.com"),
        ("", None),
        ("[::1", None),
        ("[::1]x", None),
        ("host:port", None),
        ("host:123456", None),
    ],
)
def test_split_host_header(header: str, host: str | None) -> None:
    assert split_host_header(header) == host


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.8.9.10", True), ("localhost", True), ("::1", True),
     ("[::1]", True), ("0.0.0.0", False), ("::", False), ("10.0.0.1", False),
     ("example.com", False), ("localhost.example.com", False)],
)  # fmt: skip
def test_is_loopback_host(host: str, loopback: bool) -> None:
    assert is_loopback_host(host) is loopback


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [("http://localhost:5173", True), ("https://127.0.0.1", True), ("http://[::1]:1", True),
     ("http://LOCALHOST", True), ("http://evil.example", False), ("null", False),
     ("ftp://localhost", False), ("http://localhost:99999", False), ("http://", False),
     ("http://127.0.0.1.evil.example", False), ("http://user@evil.example", False)],
)  # fmt: skip
def test_origin_rules(origin: str, allowed: bool) -> None:
    gate = RequestGate(_app, HttpSettings())
    assert gate.origin_allowed(origin) is allowed


def test_bind_host_joins_the_allowed_names() -> None:
    gate = RequestGate(_app, HttpSettings(host="192.168.1.10", auth_token="t"))
    assert gate.origin_allowed("http://192.168.1.10:3850")
    wildcard = RequestGate(_app, HttpSettings(host="0.0.0.0", auth_token="t"))
    assert wildcard.any_host and not wildcard.origin_allowed("http://0.0.0.0")


def test_check_bind() -> None:
    check_bind(HttpSettings())
    check_bind(HttpSettings(host="::1"))
    check_bind(HttpSettings(host="0.0.0.0", auth_token="t"))
    with pytest.raises(InsecureBindError, match=r"auth\.token"):
        check_bind(HttpSettings(host="0.0.0.0"))
    with pytest.raises(ValueError, match="max_body_bytes"):
        check_bind(HttpSettings(max_body_bytes=0))


def _scope(peer: str) -> dict[str, object]:
    return {"type": "http", "path": "/api/memories", "client": (peer, 5000), "state": {}}


@pytest.mark.parametrize(
    ("token", "hybrid", "peer", "bearer", "principal"),
    [(None, False, "127.0.0.1", None, "local"), ("t", True, "127.0.0.1", None, "local"),
     ("t", True, "10.0.0.2", "t", "token"), ("t", False, "127.0.0.1", "t", "token"),
     ("t", False, "127.0.0.1", None, None), ("t", True, "10.0.0.2", "wrong", None)],
)  # fmt: skip
def test_the_gate_names_the_principal(
    token: str | None, hybrid: bool, peer: str, bearer: str | None, principal: str | None
) -> None:
    settings = HttpSettings(auth_token=token, trust_loopback_clients=hybrid)
    gate = RequestGate(_app, settings)
    scope = _scope(peer)
    headers = {"host": "127.0.0.1:3850"}
    if bearer is not None:
        headers["authorization"] = f"Bearer {bearer}"
    refusal = gate.check(scope, headers)  # type: ignore[arg-type]
    state = scope["state"]
    assert isinstance(state, dict)
    if principal is None:
        assert refusal is not None and refusal.status_code == 401
        assert "principal" not in state
        return
    assert refusal is None
    assert state["principal"].name == principal
    assert state["principal"].local is (principal == "local")


def _token(**changes: object) -> ApiToken:
    base = ApiToken(
        id="tok-1", name="ci", kind="api", permissions=frozenset({"read"}),
        agents=frozenset({"a"}), created_at="2026-01-01T00:00:00.000Z",
        expires_at="2999-01-01T00:00:00.000Z",
    )  # fmt: skip
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


@pytest.mark.parametrize(("token", "hybrid"), [(None, False), ("t", True), ("t", False)])
def test_a_scoped_token_names_the_principal_in_every_mode(token: str | None, hybrid: bool) -> None:
    """On loopback too, where trust alone would serve: the token narrows, never widens."""
    gate = RequestGate(_app, HttpSettings(auth_token=token, trust_loopback_clients=hybrid))
    scope = _scope("127.0.0.1")
    assert gate.check(scope, {"host": "127.0.0.1"}, _token()) is None  # type: ignore[arg-type]
    principal = scope["state"]["principal"]  # type: ignore[index]
    assert principal.token_id == "tok-1" and not principal.local
    assert principal.permissions == {"read"} and principal.agents == {"a"}
    assert principal.only_agent == "a" and not principal.may("write")


@pytest.mark.parametrize(
    ("changes", "code"),
    [({"revoked_at": "2026-01-02T00:00:00.000Z"}, "token_revoked"),
     ({"expires_at": "2026-01-02T00:00:00.000Z"}, "token_expired"),
     ({"expires_at": "2026-01-02T00:00:00.000Z", "revoked_at": "2026-01-01T10:00:00.000Z"},
      "token_revoked")],
)  # fmt: skip
def test_an_expired_or_revoked_token_is_refused_even_on_trust(
    changes: dict[str, object], code: str
) -> None:
    gate = RequestGate(_app, HttpSettings(auth_token="t", trust_loopback_clients=True))
    scope = {**_scope("127.0.0.1"), "path": "/health"}
    refusal = gate.check(scope, {"host": "127.0.0.1"}, _token(**changes))  # type: ignore[arg-type]
    assert refusal is not None and refusal.status_code == 401
    assert json.loads(bytes(refusal.body))["code"] == code
    assert "principal" not in scope["state"]  # type: ignore[operator]


def test_rate_limits_key_on_the_authenticated_caller_never_a_header() -> None:
    def key(principal: object, peer: str = "10.0.0.7") -> str:
        return rate_key({"client": (peer, 1), "state": {"principal": principal}})

    assert key(token_principal(_token())) == "token:tok-1"
    assert key(CONFIGURED_TOKEN) == "token:configured"
    assert key(LOCAL_USER, "127.0.0.1") == "peer:127.0.0.1"
    assert key(LOCAL_USER, "127.0.0.2") != key(LOCAL_USER, "127.0.0.1")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_a_token_store_failure_fails_closed() -> None:
    """Hybrid on loopback would serve on trust; a token it cannot look up opens nothing."""

    class Broken:
        def find(self, secret: str) -> ApiToken | None:
            raise RuntimeError("database is closed")

    gate = RequestGate(
        _app,
        HttpSettings(auth_token="t", trust_loopback_clients=True),
        tokens=Broken(),  # type: ignore[arg-type]
    )
    sent: list[dict[str, object]] = []

    async def receive() -> dict[str, object]:  # pragma: no cover - never read
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    scope = {**_scope("127.0.0.1"), "method": "GET", "headers": [
        (b"host", b"127.0.0.1"), (b"authorization", b"Bearer sgt_unknowable")]}  # fmt: skip
    await gate(scope, receive, send)  # type: ignore[arg-type]
    assert sent[0]["status"] == 503
