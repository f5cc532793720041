"""Server paths over HTTP (issue 24): only the local user reads its default roots; a token
holder reads only under `files.roots`; credential stores never; the worker checks what it
opened (the symlink-swap race); a caller without `admin` never sees a secret verbatim."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from http_helpers import make_client
from starlette.middleware import Middleware
from starlette.types import ASGIApp, Receive, Scope, Send
from support.db import database_of
from support.history_files import write_claude_project

from signet_desktop.api.http.app import create_app
from signet_desktop.api.http.principal import Principal
from signet_desktop.api.http.settings import HttpSettings
from signet_desktop.config.models import SignetConfig
from signet_desktop.service.facade import SignetService
from tests.support.documents import config, drain, make_service, make_worker

pytestmark = pytest.mark.anyio

TOKEN = "t0ken-for-the-local-files-tests"
BEARER = {"Authorization": f"Bearer {TOKEN}"}
TABLES = (
    "documents",
    "memories",
    "memory_jobs",
    "connectors",
    "sources",
    "source_import_runs",
    "session_transcripts",
)
KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUtc2VjcmV0\n"
    "-----END OPENSSH PRIVATE KEY-----\n"
)
SECRET = "sk-ant-api03-" + "Q" * 40
NOTE = "Deploy notes: the billing service retries webhooks five times before alerting."


@dataclass
class Env:
    root: Path  # the configured root (files.roots), or a directory no default covers
    outside: Path  # a directory no root covers
    service: SignetService

    def counts(self) -> dict[str, int]:
        conn = database_of(self.service).reader()
        return {t: int(conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]) for t in TABLES}


def _env(tmp_path: Path, roots: list[Path]) -> Iterator[Env]:
    shared, outside = tmp_path / "shared", tmp_path / "outside"
    for folder in (shared, outside):
        folder.mkdir()
    (shared / "notes.md").write_text(NOTE, encoding="utf-8")
    (outside / "private.md").write_text("outside the roots", encoding="utf-8")
    for store, name in ((".ssh", "id_ed25519"), (".aws", "credentials")):
        (shared / store).mkdir()
        (shared / store / name).write_text(KEY, encoding="utf-8")
    (shared / ".env").write_text(f"ANTHROPIC_API_KEY={SECRET}\n", encoding="utf-8")
    (shared / ".env.local").write_text("DB_PASSWORD=hunter2\n", encoding="utf-8")
    cfg = config().model_copy(
        update={"files": SignetConfig.model_validate({"files": {"roots": roots}}).files}
    )
    service = make_service(tmp_path / "ws", cfg)
    yield Env(shared, outside, service)
    service.close()


@pytest.fixture
def without_roots(tmp_path: Path) -> Iterator[Env]:
    yield from _env(tmp_path, [])


@pytest.fixture
def with_roots(tmp_path: Path) -> Iterator[Env]:
    yield from _env(tmp_path, [tmp_path / "shared"])


@pytest.fixture
async def remote(without_roots: Env) -> AsyncIterator[httpx.AsyncClient]:
    """A token holder (`team`): every permission, but not the local user."""
    app = create_app(without_roots.service, HttpSettings(auth_token=TOKEN))
    async with make_client(app, headers=BEARER) as c:
        yield c


@pytest.fixture
async def remote_with_roots(with_roots: Env) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(with_roots.service, HttpSettings(auth_token=TOKEN))
    async with make_client(app, headers=BEARER) as c:
        yield c


@pytest.fixture
async def local(without_roots: Env) -> AsyncIterator[httpx.AsyncClient]:
    """The machine's own user: loopback, `local` mode, no token."""
    async with make_client(create_app(without_roots.service, HttpSettings())) as c:
        yield c


# -- a token holder without files.roots reads no server path -------------------------------


def _requests(env: Env, path: Path) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("/api/documents", {"source_type": "file", "path": str(path / "notes.md")}),
        ("/api/connectors", {"provider": "filesystem", "settings": {"path": str(path)}}),
        ("/api/sources/import", {"kind": "claude-code", "path": str(path)}),
        (
            "/api/hooks/session-end",
            {"harness": "claude-code", "sessionKey": "s1", "transcriptPath": str(path / "t.jsonl")},
        ),
        (
            "/api/hooks/claude-code/session-end",
            {"session_id": "s2", "transcript_path": str(path / "t.jsonl")},
        ),
        (
            "/api/hooks/claude-code/pre-compact",
            {"session_id": "s4", "transcript_path": str(path / "t.jsonl")},
        ),
        (
            "/api/hooks/user-prompt-submit",
            {
                "harness": "claude-code",
                "sessionKey": "s3",
                "userMessage": "hello",
                "transcriptPath": str(path / "t.jsonl"),
            },
        ),
    ]


async def test_a_token_holder_without_roots_names_no_server_path(
    remote: httpx.AsyncClient, without_roots: Env
) -> None:
    (without_roots.root / "t.jsonl").write_text("{}\n", encoding="utf-8")
    before = without_roots.counts()
    for route, body in _requests(without_roots, without_roots.root)[:-1]:
        reply = await remote.post(route, json=body)
        assert reply.status_code == 403, (route, reply.text)
        assert reply.json()["code"] == "path_not_allowed"
        assert "files.roots" in reply.json()["error"]
    # The prompt hook answers (it captures later, off its path) and captures nothing.
    route, body = _requests(without_roots, without_roots.root)[-1]
    assert (await remote.post(route, json=body)).status_code == 200
    without_roots.service.transcripts.wait_live()
    assert without_roots.counts() == before


async def test_hybrid_serves_the_loopback_user_as_local_and_a_peer_with_the_token_as_not(
    without_roots: Env,
) -> None:
    app = create_app(
        without_roots.service, HttpSettings(auth_token=TOKEN, trust_loopback_clients=True)
    )
    body = {"source_type": "file", "path": str(without_roots.root / "notes.md")}
    async with make_client(app, client=("10.1.2.3", 50000), headers=BEARER) as peer:
        refused = await peer.post("/api/documents", json=body)
        assert refused.status_code == 403 and refused.json()["code"] == "path_not_allowed"
    async with make_client(app) as loopback:
        assert (await loopback.post("/api/documents", json=body)).status_code == 201


async def test_the_local_user_reads_its_defaults_without_roots(
    local: httpx.AsyncClient, without_roots: Env, tmp_path: Path
) -> None:
    # /tmp is a default root of the local user (pytest's tmp_path lives under it).
    assert str(tmp_path).startswith("/tmp/")
    created = await local.post(
        "/api/documents", json={"source_type": "file", "path": str(without_roots.root / "notes.md")}
    )
    assert created.status_code == 201, created.text
    drain(make_worker(without_roots.service))
    document = (await local.get(f"/api/documents/{created.json()['id']}")).json()
    assert document["status"] == "done", document


async def test_a_token_holder_reads_under_configured_roots_only(
    remote_with_roots: httpx.AsyncClient, with_roots: Env
) -> None:
    created = await remote_with_roots.post(
        "/api/documents", json={"source_type": "file", "path": str(with_roots.root / "notes.md")}
    )
    assert created.status_code == 201, created.text
    drain(make_worker(with_roots.service))
    chunks = (await remote_with_roots.get(f"/api/documents/{created.json()['id']}/chunks")).json()
    assert NOTE in "".join(c["content"] for c in chunks["chunks"])
    before = with_roots.counts()
    for route, body in _requests(with_roots, with_roots.outside)[:-1]:
        reply = await remote_with_roots.post(route, json=body)
        assert reply.status_code == 403 and reply.json()["code"] == "path_not_allowed", route
    # A symlink inside the root that leads out of it is refused at submit too.
    (with_roots.root / "link.md").symlink_to(with_roots.outside / "private.md")
    linked = await remote_with_roots.post(
        "/api/documents", json={"source_type": "file", "path": str(with_roots.root / "link.md")}
    )
    assert linked.status_code == 403 and linked.json()["code"] == "path_not_allowed"
    assert with_roots.counts() == before


# -- credential stores, under an allowed root ----------------------------------------------


async def test_credential_stores_are_refused_under_an_allowed_root(
    remote_with_roots: httpx.AsyncClient, with_roots: Env
) -> None:
    root = with_roots.root
    before = with_roots.counts()
    for target in (root / ".ssh" / "id_ed25519", root / ".aws" / "credentials", root / ".env",
                   root / ".env.local"):  # fmt: skip
        reply = await remote_with_roots.post(
            "/api/documents", json={"source_type": "file", "path": str(target)}
        )
        assert reply.status_code == 403, reply.text
        assert reply.json()["code"] == "path_credential_store"
    for route, body in (
        ("/api/connectors", {"provider": "filesystem", "settings": {"path": str(root / ".ssh")}}),
        ("/api/sources/import", {"kind": "claude-code", "path": str(root / ".aws")}),
        (
            "/api/hooks/session-end",
            {"harness": "claude-code", "sessionKey": "s1", "transcriptPath": str(root / ".env")},
        ),
    ):
        reply = await remote_with_roots.post(route, json=body)
        assert reply.status_code == 403 and reply.json()["code"] == "path_credential_store", route
    assert with_roots.counts() == before


async def test_a_folder_walk_skips_credential_stores_and_counts_them(
    remote_with_roots: httpx.AsyncClient, with_roots: Env
) -> None:
    created = await remote_with_roots.post(
        "/api/connectors",
        json={
            "provider": "filesystem",
            "settings": {"path": str(with_roots.root), "patterns": ["**/*"]},
            "sync": False,
        },
    )
    assert created.status_code == 201, created.text
    synced = await remote_with_roots.post(f"/api/connectors/{created.json()['id']}/sync?wait=true")
    assert synced.status_code == 200, synced.text
    report = synced.json()
    assert report["skippedReasons"] == {"credential_store": 4}, (
        report
    )  # .ssh/ .aws/ .env .env.local
    drain(make_worker(with_roots.service))
    docs = (await remote_with_roots.get("/api/documents")).json()["documents"]
    assert sorted(d["title"] for d in docs) == ["notes.md"]
    texts = database_of(with_roots.service).reader().execute("SELECT content FROM memories")
    assert not any("PRIVATE KEY" in row[0] or SECRET in row[0] for row in texts)


async def test_an_import_reads_no_file_of_a_credential_store(
    remote_with_roots: httpx.AsyncClient, with_roots: Env
) -> None:
    projects = with_roots.root / "claude" / "projects"
    write_claude_project(projects, sessions=1, exchanges=1)
    started = await remote_with_roots.post(
        "/api/sources/import", json={"kind": "claude-code", "path": str(projects)}
    )
    assert started.status_code == 202, started.text
    ids = started.json()
    run = await _finished_run(remote_with_roots, ids["sourceId"], ids["runId"])
    assert run["status"] == "completed", run


async def _finished_run(client: httpx.AsyncClient, source_id: str, run_id: str) -> Any:
    for _ in range(200):
        run = (await client.get(f"/api/sources/{source_id}/runs/{run_id}")).json()
        if run.get("status") not in ("running", None):
            return run
        time.sleep(0.02)
    raise AssertionError("the import did not finish")


# -- the check is of what was opened: the symlink-swap race --------------------------------


@pytest.mark.parametrize("target", ["outside", "credential"])
async def test_a_file_swapped_for_a_symlink_before_the_worker_opens_it_is_refused(
    remote_with_roots: httpx.AsyncClient, with_roots: Env, target: str
) -> None:
    victim = with_roots.root / "innocent.md"
    victim.write_text("an innocent note", encoding="utf-8")
    created = await remote_with_roots.post(
        "/api/documents", json={"source_type": "file", "path": str(victim)}
    )
    assert created.status_code == 201, created.text
    # The worker is held (not run) while the file is swapped for a link out of bounds.
    victim.unlink()
    secret = with_roots.outside / "private.md"
    if target == "credential":
        secret = with_roots.root / ".ssh" / "id_ed25519"
    victim.symlink_to(secret)
    memories_before = with_roots.counts()["memories"]
    drain(make_worker(with_roots.service))
    document = (await remote_with_roots.get(f"/api/documents/{created.json()['id']}")).json()
    assert document["status"] == "failed", document
    code = "path_not_allowed" if target == "outside" else "path_credential_store"
    assert code in document["error"], document["error"]
    assert document["job"]["status"] == "dead"  # refused for good, not retried
    assert with_roots.counts()["memories"] == memories_before
    conn = database_of(with_roots.service).reader()
    stored = conn.execute("SELECT raw_content FROM documents").fetchall()
    assert all(row[0] is None or "outside the roots" not in row[0] for row in stored)


async def test_a_transcript_swapped_for_a_symlink_is_refused_at_the_open(
    remote_with_roots: httpx.AsyncClient, with_roots: Env
) -> None:
    transcript = with_roots.root / "t.jsonl"
    transcript.symlink_to(with_roots.outside / "private.md")
    before = with_roots.counts()
    reply = await remote_with_roots.post(
        "/api/hooks/session-end",
        json={"harness": "claude-code", "sessionKey": "s1", "transcriptPath": str(transcript)},
    )
    assert reply.status_code == 403 and reply.json()["code"] == "path_not_allowed"
    assert with_roots.counts() == before


# -- a caller without admin never sees a secret verbatim -----------------------------------

READER = Principal(name="reader", local=False, permissions=frozenset({"read"}))


class AsReader:
    """Test-only: after the gate named a principal, a read-only token's stands in for it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if "principal" in scope.get("state", {}):
            scope["state"]["principal"] = READER
        await self.app(scope, receive, send)


def _as_reader(app: FastAPI) -> FastAPI:
    app.user_middleware.insert(1, Middleware(AsReader))  # just inside the request gate
    return app


async def test_a_reader_without_admin_gets_secrets_redacted(
    local: httpx.AsyncClient, without_roots: Env
) -> None:
    text = f"Deploy key for the bastion:\n{KEY}\nand the API key {SECRET} for billing."
    remembered = await local.post("/api/memory/remember", json={"content": text})
    memory_id = remembered.json()["id"]
    created = await local.post("/api/documents", json={"source_type": "text", "content": text})
    drain(make_worker(without_roots.service))
    document_id = created.json()["id"]
    await local.post(
        "/api/hooks/session-end",
        json={"harness": "claude-code", "sessionKey": "s9", "transcript": [
            {"role": "user", "content": f"my key is {SECRET}"}]},
    )  # fmt: skip
    reads = (
        f"/api/memory/{memory_id}",
        "/api/memories",
        f"/api/documents/{document_id}/chunks",
        f"/api/documents/{document_id}",
        "/api/sessions/s9/transcript",
    )
    admin = {path: (await local.get(path)).text for path in reads}
    assert SECRET in admin[f"/api/memory/{memory_id}"]  # the local user holds admin
    app = _as_reader(create_app(without_roots.service, HttpSettings()))
    async with make_client(app) as reader:
        for path in reads:
            reply = await reader.get(path)
            assert reply.status_code == 200, (path, reply.text)
            json.loads(reply.text)  # still JSON
            assert SECRET not in reply.text and "b3BlbnNzaC1rZXkt" not in reply.text, path
            assert "[redacted" in reply.text or SECRET not in admin[path], path
        chunks = (await reader.get(f"/api/documents/{document_id}/chunks")).json()["chunks"]
        assert "[redacted private key]" in "".join(c["content"] for c in chunks)
    rows = database_of(without_roots.service).reader().execute("SELECT content FROM memories")
    assert any(SECRET in row[0] for row in rows)  # the evidence itself is unchanged
