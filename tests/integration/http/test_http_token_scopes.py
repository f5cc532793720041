"""The scoped-token matrix: auth modes x token scopes x every route of the app x every MCP tool.

Every token here is bound to agent A. Agent B's data is seeded with marker strings; for each
route (enumerated from the app, never hand-listed) and each MCP tool, every scoped token asks
as agent B (header, query and body at once) and without naming an agent. The oracle, for all
of them: B's markers never appear in an answer and B's rows never change; a read-only token
changes nothing at all; a token without `admin` never reaches an admin route; an expired or
revoked token is refused (401) and changes nothing. Positive controls prove the tokens do
work where they should, so a gate that refused everything would fail here.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, NamedTuple

import httpx
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from http_helpers import make_client, remember
from support.db import database_of

from signet_desktop.api.http.app import create_app
from signet_desktop.api.http.permissions import route_permission
from signet_desktop.api.http.settings import settings_from_auth
from signet_desktop.api.mcp.tools import TOOLS
from signet_desktop.config.sections import AuthConfig
from signet_desktop.service.facade import SignetService
from signet_desktop.storage.dialect import is_postgres

pytestmark = pytest.mark.anyio

TOKEN = "configured-matrix-token"
A, B = "agent-a", "agent-b"
A_MARK = "alpha-owl-7731 belongs to agent A"
B_MARKS = ("zebra-quartz-4471", "QuartzZebraEntity", "b-doc-marker-5519", "b-turn-marker-6620")
# B's session key: path parameters name it, so an answer may echo it; its turns are marked.
B_SESSION = "b-session-key-8841"
MODES = ("local", "team", "hybrid")
SCOPES = ("read", "write", "admin", "expired", "revoked")
# A body with a plausible value for the fields routes commonly take, naming agent B.
PROBE_BODY: dict[str, Any] = {
    "agentId": B, "content": "probe content", "query": "zebra quartz", "harness": "claude-code",
    "sessionKey": B_SESSION, "name": "probe", "reason": "probe", "mode": "incremental",
    "source_type": "text", "title": "probe", "action": "requeue", "dryRun": True,
    "permissions": ["read"], "agents": [B], "enabled": True, "summary": "probe",
}  # fmt: skip
# Tables whose rows a read may add as its own record (search telemetry, map cache).
READ_SIDE_EFFECTS = frozenset({"memory_search_telemetry", "umap_cache"})


_TABLES: dict[int, list[str]] = {}


def _scoped_tables(service: SignetService) -> list[str]:
    """Every table with an agent_id column (found once per service: migrations made them)."""
    if id(service) not in _TABLES:
        conn = database_of(service).reader()
        if is_postgres(conn):
            _TABLES[id(service)] = [
                str(row[0])
                for row in conn.execute(
                    "SELECT c.table_name FROM information_schema.columns c "
                    "JOIN information_schema.tables t USING (table_schema, table_name) "
                    "WHERE c.table_schema = current_schema() AND c.column_name = 'agent_id' "
                    "AND t.table_type = 'BASE TABLE' ORDER BY 1"
                )
            ]
            return _TABLES[id(service)]
        names = [
            str(row[0])
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        _TABLES[id(service)] = [
            name
            for name in names
            if any(col[1] == "agent_id" for col in conn.execute(f"PRAGMA table_info({name})"))
        ]
    return _TABLES[id(service)]


class Snapshot(NamedTuple):
    """Digests of agent A's rows (less read side effects), agent B's rows, and the tokens."""

    a: str
    b: str
    tokens: str


def snapshot(service: SignetService) -> Snapshot:
    """What a refused call must not touch, as digests of every row it could change."""
    conn = database_of(service).reader()
    digests = {A: hashlib.sha256(), B: hashlib.sha256()}
    for table in _scoped_tables(service):
        rows = conn.execute(
            f"SELECT * FROM {table} WHERE agent_id IN (:a, :b) ORDER BY 1", {"a": A, "b": B}
        )
        for row in rows:
            agent = row["agent_id"]
            if agent == B or table not in READ_SIDE_EFFECTS:
                digests[agent].update(repr((table, tuple(row))).encode())
    tokens = conn.execute("SELECT * FROM api_tokens ORDER BY id").fetchall()
    return Snapshot(
        digests[A].hexdigest(), digests[B].hexdigest(), repr([tuple(r) for r in tokens])
    )


class Snapshots:
    """Snapshots of one service, the last one reused as the next call's `before`: the probes
    run one after another and nothing else writes meanwhile (a write that did would still
    show, as a change at the next call), so the state after one call is the state before the
    next. Half the digests of the matrix, which were half its time.

    The digests are taken again only when the database changed: SQLite's `data_version`, read
    on this thread's reader, moves whenever another connection commits (every write of the
    app goes through the writer), so an unchanged value means unchanged rows; on PostgreSQL
    the server's WAL insert position, which every commit moves (so do other databases' on the
    same server: a retake too many, never one too few). Most probes are refused and write
    nothing; this took the matrix from 23 s to ~17 s of CPU."""

    def __init__(self, service: SignetService) -> None:
        self._service = service
        self._last: Snapshot | None = None
        self._version: str | None = None

    def before(self) -> Snapshot:
        if self._last is None:
            self._take()
        assert self._last is not None
        return self._last

    def after(self) -> Snapshot:
        if self._data_version() != self._version:
            self._take()
        assert self._last is not None
        return self._last

    def _data_version(self) -> str:
        conn = database_of(self._service).reader()
        if is_postgres(conn):
            return str(conn.execute("SELECT pg_current_wal_insert_lsn()::text").fetchone()[0])
        return str(conn.execute("PRAGMA data_version").fetchone()[0])

    def _take(self) -> None:
        self._version = self._data_version()  # read first: a commit meanwhile forces a retake
        self._last = snapshot(self._service)


async def _seed(service: SignetService, client: httpx.AsyncClient) -> dict[str, str]:
    """Agent B's memory, entity, document and session; agent A's memory (the control)."""
    memory = await remember(client, f"{B_MARKS[0]} is B's deploy secret", agentId=B)
    await remember(client, A_MARK, agentId=A)
    entity = await client.post("/api/knowledge/entities", json={"name": B_MARKS[1], "agentId": B})
    document = await client.post(
        "/api/documents",
        json={"source_type": "text", "title": B_MARKS[2], "content": f"{B_MARKS[2]} body",
              "agentId": B},
    )  # fmt: skip
    session = await client.post(
        "/api/hooks/session-end",
        json={"harness": "claude-code", "sessionKey": B_SESSION, "agentId": B,
              "transcript": [{"role": "user", "content": f"{B_MARKS[3]} in a session"}]},
    )  # fmt: skip
    for response in (entity, document, session):
        assert response.status_code in (200, 201), response.text
    return {
        "memory_id": memory["id"],
        "entity_id": entity.json()["entity"]["id"],
        "document_id": document.json()["id"],
        "session_key": B_SESSION,
    }


def _issue(service: SignetService) -> dict[str, str]:
    tokens = service.tokens
    every = ["read", "write", "admin"]
    grants = {"read": ["read"], "write": ["read", "write"], "admin": every,
              "expired": every, "revoked": every}  # fmt: skip
    secrets = {
        scope: tokens.create(tokens.spec(f"matrix-{scope}", grants[scope], [A])).secret
        for scope in SCOPES
    }
    tokens.revoke("matrix-revoked")
    with database_of(service).write() as conn:  # a token whose lifetime has run out
        conn.execute(
            "UPDATE api_tokens SET created_at = '2020-01-01T00:00:00.000Z', "
            "expires_at = '2020-01-02T00:00:00.000Z' WHERE name = 'matrix-expired'"
        )
    return secrets


def _app(service: SignetService, mode: str) -> FastAPI:
    auth = AuthConfig.model_validate({"mode": mode, "token": TOKEN})
    return create_app(service, settings_from_auth(auth))


@asynccontextmanager
async def _serving(app: FastAPI) -> AsyncIterator[None]:
    async with app.router.lifespan_context(app):  # starts the /mcp session manager
        yield


def routes_of(app: FastAPI) -> list[tuple[str, str]]:
    """(method, path template) of every API route, except the never-ending event stream.

    Walks the app's routes and, through each included router, that router's own routes.
    """
    found: list[tuple[str, str]] = []
    pending: list[Any] = list(app.routes)
    while pending:
        route = pending.pop()
        included = getattr(route, "original_router", None)
        if included is not None:
            pending.extend(included.routes)
        elif isinstance(route, APIRoute) and route.path != "/api/events":
            found.extend((method, route.path) for method in sorted(route.methods))
    return sorted(found, key=lambda pair: (pair[1], pair[0]))


def concrete(path: str, ids: dict[str, str]) -> str:
    """The template with B's object ids (or a placeholder) in its parameters."""
    for name, value in ids.items():
        path = path.replace("{" + name + "}", value)
    while "{" in path:
        start, end = path.index("{"), path.index("}")
        path = path[:start] + "probe-id" + path[end + 1 :]
    return path


def _assert_no_b(response: httpx.Response, where: str) -> None:
    for mark in B_MARKS:
        assert mark not in response.text, f"{where}: agent B's {mark!r} leaked: {response.text}"


async def _probe_route(
    client: httpx.AsyncClient, snapshots: Snapshots, method: str, path: str, scope: str,
    secret: str, ids: dict[str, str],
) -> None:  # fmt: skip
    """Ask as agent B, then as nobody in particular; check every oracle."""
    url = concrete(path, ids)
    bearer = {"authorization": f"Bearer {secret}"}
    asks = (
        ({**bearer, "x-signet-agent-id": B}, {"agentId": B}, PROBE_BODY),
        (bearer, {}, {k: v for k, v in PROBE_BODY.items() if k != "agentId"}),
    )
    for index, (headers, params, body) in enumerate(asks):
        before = snapshots.before()
        has_body = method in ("POST", "PATCH", "PUT", "DELETE")
        response = await client.request(
            method, url, headers=headers, params=params, json=body if has_body else None
        )
        if response.status_code == 422 and "extra_forbidden" in response.text:
            # A strict route (our repair routes) refused the probe's other fields: ask again
            # with the agent alone, so the handler itself is reached.
            minimal = {"agentId": B} if index == 0 else {}
            response = await client.request(
                method, url, headers=headers, params=params, json=minimal
            )
        where = f"{scope} {method} {path} ask {index}"
        _assert_no_b(response, where)
        after = snapshots.after()
        assert after.b == before.b, f"{where}: changed agent B's rows"
        assert response.status_code != 500, f"{where}: {response.text}"
        if scope in ("expired", "revoked"):
            assert response.status_code == 401, where
            assert response.json()["code"] == f"token_{scope}", where
        needed = route_permission(method, path)
        allowed = {"read": {"read"}, "write": {"read", "write"}}.get(scope)
        if allowed is not None and needed not in allowed:
            assert response.status_code == 403, f"{where}: {response.text}"
            assert response.json()["code"] == "permission_denied", where
        if index == 0 and scope in ("read", "write", "admin") and needed in (allowed or {needed}):
            # Named agent B: refused (403), rate limited (429), bad input, or the route has no
            # agent (daemon-wide state) or B's object was simply not found from A's side.
            assert response.status_code in (200, 201, 202, 400, 403, 404, 409, 422, 429, 503), where
        if scope in ("read", "expired", "revoked"):
            assert after == before, f"{where}: wrote without write permission"


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
async def test_no_scoped_token_reads_or_writes_beyond_its_scope_on_any_route(
    service: SignetService, mode: str
) -> None:
    app = _app(service, mode)
    configured = {"authorization": f"Bearer {TOKEN}"}
    async with make_client(app, headers=configured) as admin_client:
        ids = await _seed(service, admin_client)
    secrets = _issue(service)
    routes = routes_of(app)
    assert len(routes) >= 90  # the app's routes, found by enumeration
    # `local` serves loopback only; in `team` and `hybrid` the token holder is a remote peer.
    peer = ("127.0.0.1" if mode == "local" else "192.0.2.10", 50000)
    snapshots = Snapshots(service)
    async with _serving(app), make_client(app, client=peer) as client:
        for scope in SCOPES:
            for method, path in routes:
                if scope == "admin" and (method, path) == ("DELETE", "/api/tokens/{token_ref}"):
                    continue  # revoking the matrix's own tokens would end the matrix early
                await _probe_route(client, snapshots, method, path, scope, secrets[scope], ids)
            await _probe_mcp(client, snapshots, scope, secrets[scope], ids)


async def _mcp_call(
    client: httpx.AsyncClient, headers: dict[str, str], name: str, arguments: dict[str, Any]
) -> httpx.Response:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}  # fmt: skip
    return await client.post(
        "/mcp", json=call, headers={**headers, "accept": "application/json, text/event-stream"}
    )


async def _probe_mcp(
    client: httpx.AsyncClient, snapshots: Snapshots, scope: str, secret: str,
    ids: dict[str, str],
) -> None:  # fmt: skip
    arguments = {"id": ids["memory_id"], "query": "zebra quartz", "content": "mcp probe",
                 "reason": "probe", "entity": ids["entity_id"], "agentId": B}  # fmt: skip
    bearer = {"authorization": f"Bearer {secret}"}
    for name, spec in TOOLS.items():
        for headers in ({**bearer, "x-signet-agent-id": B}, bearer):
            before = snapshots.before()
            response = await _mcp_call(client, headers, name, arguments)
            where = f"{scope} MCP {name} {sorted(headers)}"
            _assert_no_b(response, where)
            after = snapshots.after()
            assert after.b == before.b, f"{where}: changed agent B's rows"
            if scope in ("expired", "revoked"):
                assert response.status_code == 401, where
                assert after == before, where
                continue
            assert response.status_code == 200, f"{where}: {response.text}"
            result = response.json()["result"]
            code = json.loads(result["content"][0]["text"]).get("code")
            if scope == "read" and not spec.read_only:
                assert result["isError"] and code == "permission_denied", where
            elif "x-signet-agent-id" in headers:
                assert result["isError"] and code == "agent_not_allowed", f"{where}: served B"
            if scope == "read":
                assert after == before, f"{where}: wrote without write"


async def test_tokens_work_where_their_scope_allows(service: SignetService) -> None:
    """The positive controls: each token reaches its own agent, with what it holds."""
    app = _app(service, "team")
    async with make_client(app, headers={"authorization": f"Bearer {TOKEN}"}) as admin_client:
        await _seed(service, admin_client)
    secrets = _issue(service)
    async with _serving(app), make_client(app) as client:
        read = {"authorization": f"Bearer {secrets['read']}"}
        listing = await client.get("/api/memories", headers=read)  # no agent: its only agent
        assert listing.status_code == 200 and A_MARK in listing.text
        assert (await client.get("/api/memories", headers={**read, "x-signet-agent-id": A})).json()
        denied = await client.post("/api/memory/remember", json={"content": "x"}, headers=read)
        assert denied.status_code == 403 and denied.json()["code"] == "permission_denied"
        other = await client.get("/api/memories", params={"agentId": B}, headers=read)
        assert other.status_code == 403 and other.json()["code"] == "agent_not_allowed"
        # The event stream (left out of the sweep: it never ends) refuses B before streaming.
        stream = await client.get("/api/events", params={"agentId": B}, headers=read)
        assert stream.status_code == 403 and stream.json()["code"] == "agent_not_allowed"

        write = {"authorization": f"Bearer {secrets['write']}"}
        stored = await client.post("/api/memory/remember", json={"content": "by write"},
                                   headers=write)  # fmt: skip
        assert stored.status_code == 200, stored.text
        row = (
            database_of(service)
            .reader()
            .execute("SELECT agent_id FROM memories WHERE id = :id", {"id": stored.json()["id"]})
            .fetchone()
        )
        assert row[0] == A  # acted for its bound agent, not `default`
        paused = await client.post("/api/pipeline/pause", headers=write)
        assert paused.status_code == 403 and paused.json()["code"] == "permission_denied"

        admin = {"authorization": f"Bearer {secrets['admin']}"}
        assert (await client.post("/api/pipeline/pause", headers=admin)).status_code == 200
        assert (await client.post("/api/pipeline/resume", headers=admin)).status_code == 200

        mcp = await _mcp_call(client, read, "memory_search", {"query": "alpha owl"})
        assert not mcp.json()["result"]["isError"] and "alpha-owl-7731" in mcp.text
        for scope in ("expired", "revoked"):
            gone = await client.get(
                "/health", headers={"authorization": f"Bearer {secrets[scope]}"}
            )
            assert gone.status_code == 401 and gone.json()["code"] == f"token_{scope}"


async def test_scoped_admin_manages_only_tokens_within_its_agents(service: SignetService) -> None:
    app = _app(service, "team")
    tokens = service.tokens
    admin = tokens.create(tokens.spec("scoped-admin", ["admin", "read"], [A])).secret
    other = tokens.create(tokens.spec("b-token", ["read"], [B]))
    headers = {"authorization": f"Bearer {admin}"}
    async with make_client(app, headers=headers) as client:
        for body, code in (
            ({"name": "for-b", "permissions": ["read"], "agents": [B]}, "agent_not_allowed"),
            ({"name": "writer", "permissions": ["write"], "agents": [A]}, "permission_denied"),
        ):
            refused = await client.post("/api/tokens", json=body)
            assert refused.status_code == 403 and refused.json()["code"] == code
        made = await client.post(
            "/api/tokens", json={"name": "a-session", "permissions": ["read"], "agents": [A],
                                 "session": True},
        )  # fmt: skip
        assert made.status_code == 201 and made.json()["kind"] == "session"
        names = [t["name"] for t in (await client.get("/api/tokens")).json()["tokens"]]
        assert "b-token" not in names and "a-session" in names
        assert (await client.delete("/api/tokens/b-token")).status_code == 404
    assert tokens.get(other.token.id).revoked_at is None
