"""/api/sources over HTTP: import (202, off the loop), follow, list, detail, remove, scope,
bad input (status code and nothing written), a second import while one runs (409)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from http_helpers import make_client
from support.db import database_of
from support.history_files import write_claude_project, write_codex_sessions

from signet_desktop.api.http.app import create_app
from signet_desktop.api.http.settings import HttpSettings
from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from signet_desktop.service.imports.faults import FaultPoints

pytestmark = pytest.mark.anyio

IMPORT = "/api/sources/import"
SOURCE_TABLES = ("sources", "source_import_runs", "source_import_files", "source_import_records")


@pytest.fixture
def history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Claude Code config dir (an allowed root once CLAUDE_CONFIG_DIR names it)."""
    claude = tmp_path / "claude"
    write_claude_project(claude / "projects", sessions=3, exchanges=2)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    write_codex_sessions(tmp_path / "codex" / "sessions", sessions=2, exchanges=1)
    return claude / "projects"


@pytest.fixture
def service(tmp_path: Path, history: Path) -> Iterator[SignetService]:
    options = BuildOptions(embedder=HashEmbedder(64), inline_vectors=True)
    svc = build_service(WorkspacePaths.for_root(tmp_path / "ws"), SignetConfig(), options)
    yield svc
    svc.close()


@pytest.fixture
def app(service: SignetService, tmp_path: Path) -> FastAPI:
    return create_app(service, HttpSettings(agents_dir=str(tmp_path / "ws")))


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with make_client(app) as c:
        yield c


def counts(service: SignetService) -> dict[str, int]:
    conn = database_of(service).reader()
    return {t: int(conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]) for t in SOURCE_TABLES}


async def finished(client: httpx.AsyncClient, ticket: dict[str, Any], **params: str) -> Any:
    path = f"/api/sources/{ticket['sourceId']}/runs/{ticket['runId']}"
    for _ in range(400):
        response = await client.get(path, params=params)
        assert response.status_code == 200, response.text
        if response.json()["status"] != "running":
            return response.json()
        await asyncio.sleep(0.02)
    raise AssertionError("the import did not finish")


async def test_import_follow_list_detail_and_sessions(client: httpx.AsyncClient) -> None:
    response = await client.post(IMPORT, json={"kind": "claude-code"})
    assert response.status_code == 202, response.text
    ticket = response.json()
    assert ticket["sourceId"].startswith("src_") and ticket["runId"].startswith("run_")
    run = await finished(client, ticket)
    assert run["status"] == "completed"
    assert run["counts"]["recordsImported"] == 3 and run["counts"]["turnsImported"] == 12
    listing = (await client.get("/api/sources")).json()
    assert [s["id"] for s in listing["sources"]] == [ticket["sourceId"]]
    assert set(listing["kinds"]) >= {"claude-code", "codex"}
    detail = (await client.get(f"/api/sources/{ticket['sourceId']}")).json()
    assert detail["totals"] == {
        "records": {"imported": 3},
        "turns": 12,
        "files": 3,
        "linesSkipped": 0,
    }
    assert detail["runs"][0]["id"] == ticket["runId"]
    sessions = (await client.get("/api/sessions", params={"status": "imported"})).json()
    assert sessions["total"] == 3
    again = (await client.post(IMPORT, json={"kind": "claude-code"})).json()
    assert again["sourceId"] == ticket["sourceId"] and not again["created"]
    assert (await finished(client, again))["counts"]["recordsImported"] == 0
    codex = (await client.post(IMPORT, json={"kind": "codex"})).json()
    assert (await finished(client, codex))["counts"]["recordsImported"] == 2


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"kind": "opencode"}, 400, "kind_invalid"),
        ({"kind": "claude-code", "path": "/etc"}, 403, "path_not_allowed"),
        ({"kind": "claude-code", "path": "relative"}, 400, "path_invalid"),
        ({"kind": "claude-code", "agentId": "bad id!"}, 400, "agent_id_invalid"),
        ({"kind": "claude-code", "dryrun": True}, 422, None),  # unknown field refused
        ({"kind": 7}, 422, None),
        ({}, 422, None),
    ],
)
async def test_bad_imports_are_refused_and_write_nothing(
    client: httpx.AsyncClient,
    service: SignetService,
    body: dict[str, Any],
    status: int,
    code: str | None,
) -> None:
    before = counts(service)
    response = await client.post(IMPORT, json=body)
    assert response.status_code == status, response.text
    if code:
        assert response.json()["code"] == code
    assert counts(service) == before


async def test_a_missing_path_is_refused(client: httpx.AsyncClient, history: Path) -> None:
    response = await client.post(IMPORT, json={"kind": "claude-code", "path": str(history / "x")})
    assert response.status_code == 400 and response.json()["code"] == "path_not_found"


async def test_one_agent_cannot_see_follow_or_remove_anothers_source(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    alice = {"x-signet-agent-id": "alice"}
    bob = {"x-signet-agent-id": "bob"}
    ticket = (await client.post(IMPORT, json={"kind": "claude-code"}, headers=alice)).json()
    await finished(client, ticket, agentId="alice")
    source = f"/api/sources/{ticket['sourceId']}"
    assert (await client.get("/api/sources", headers=bob)).json()["sources"] == []
    assert (await client.get(source, headers=bob)).status_code == 404
    run = f"{source}/runs/{ticket['runId']}"
    assert (await client.get(run, headers=bob)).status_code == 404
    before = counts(service)
    removal = await client.delete(source, params={"dryRun": "false"}, headers=bob)
    assert removal.status_code == 404
    assert counts(service) == before
    bobs_sessions = (await client.get("/api/sessions", headers=bob)).json()
    assert bobs_sessions["total"] == 0
    assert (await client.get(source, headers=alice)).status_code == 200


async def test_delete_previews_by_default_then_purges(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    ticket = (await client.post(IMPORT, json={"kind": "claude-code"})).json()
    await finished(client, ticket)
    source = f"/api/sources/{ticket['sourceId']}"
    preview = await client.delete(source)
    assert preview.status_code == 200
    body = preview.json()
    assert body["dryRun"] is True and body["purged"]["session_transcripts"] == 3
    assert body["tombstoneId"] is None
    assert (await client.get(source)).status_code == 200
    done = (await client.delete(source, params={"dryRun": "false", "reason": "cleanup"})).json()
    assert done["dryRun"] is False and done["tombstoneId"].startswith("stb_")
    assert done["purged"] == body["purged"]
    assert (await client.get(source)).status_code == 404
    assert (await client.get("/api/sessions", params={"status": "imported"})).json()["total"] == 0
    refused = await client.post(IMPORT, json={"kind": "claude-code"})
    assert refused.status_code == 409 and refused.json()["code"] == "source_removed"
    again = await client.post(IMPORT, json={"kind": "claude-code", "reimport": True})
    assert again.status_code == 202
    assert (await finished(client, again.json()))["counts"]["recordsImported"] == 3


async def test_bad_source_ids_are_400_or_404(client: httpx.AsyncClient) -> None:
    assert (await client.get("/api/sources/nope")).status_code == 400
    assert (await client.get(f"/api/sources/src_{'0' * 32}")).status_code == 404
    assert (await client.delete(f"/api/sources/src_{'0' * 32}")).status_code == 404
    bad_flag = await client.delete(f"/api/sources/src_{'0' * 32}", params={"dryRun": "maybe"})
    assert bad_flag.status_code == 422


async def test_a_second_import_while_one_runs_is_409(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    entered, release = threading.Event(), threading.Event()

    def hold(step: str) -> None:
        if step == "file.inventoried" and not release.is_set():
            entered.set()
            release.wait(10)

    service.imports._faults = FaultPoints(on_hit=hold)  # a run that stays running
    try:
        first = await client.post(IMPORT, json={"kind": "claude-code"})
        assert first.status_code == 202
        assert await asyncio.to_thread(entered.wait, 10)
        health = await client.get("/health")  # the loop is free while the import runs
        assert health.status_code == 200
        second = await client.post(IMPORT, json={"kind": "claude-code"})
        assert second.status_code == 409 and second.json()["code"] == "import_running"
        removal = await client.delete(
            f"/api/sources/{first.json()['sourceId']}", params={"dryRun": "false"}
        )
        assert removal.status_code == 409
        assert counts(service)["source_import_runs"] == 1
    finally:
        release.set()
    assert (await finished(client, first.json()))["status"] == "completed"
