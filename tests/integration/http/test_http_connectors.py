"""/api/connectors and /api/maintenance over HTTP: Signet's connector shapes, sync (202 and
?wait), full sync needs confirm, health, disconnect, scope, bad input writing nothing; the
retention sweep on request and in /api/status."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from support.db import database_of

from signet_desktop.service.facade import SignetService

pytestmark = pytest.mark.anyio


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "sub").mkdir(parents=True)
    (root / "one.md").write_text("# One\n\nThe first note.", encoding="utf-8")
    (root / "sub" / "two.txt").write_text("The second note.", encoding="utf-8")
    return root


def rows(service: SignetService, table: str) -> int:
    sql = f"SELECT COUNT(*) FROM {table}"
    return int(database_of(service).reader().execute(sql).fetchone()[0])


async def test_connector_lifecycle_in_signets_shapes(
    client: httpx.AsyncClient, folder: Path, service: SignetService
) -> None:
    created = await client.post(
        "/api/connectors",
        json={
            "provider": "filesystem",
            "displayName": "Vault",
            "settings": {"rootPath": str(folder), "ignorePatterns": ["sub/**"]},
            "sync": False,
        },
    )
    assert created.status_code == 201, created.text
    body = created.json()
    connector_id = body["id"]
    assert body["displayName"] == "Vault" and body["provider"] == "filesystem"
    assert body["settings"]["rootPath"] == str(folder.resolve())
    assert body["settings"]["ignorePatterns"] == ["sub/**"]
    listed = (await client.get("/api/connectors")).json()["connectors"]
    assert [c["id"] for c in listed] == [connector_id]

    synced = await client.post(f"/api/connectors/{connector_id}/sync?wait=true")
    assert synced.status_code == 200
    assert synced.json()["added"] == 1
    health = (await client.get(f"/api/connectors/{connector_id}/health")).json()
    assert health["healthy"] and health["files"] == 1 and health["documents"] == {"queued": 1}

    refused = await client.post(f"/api/connectors/{connector_id}/sync/full")
    assert refused.status_code == 400 and refused.json()["code"] == "confirm_required"
    full = await client.post(f"/api/connectors/{connector_id}/sync/full?confirm=true&wait=true")
    assert full.json()["readFiles"] == 1 and full.json()["unchanged"] == 1

    started = await client.post(f"/api/connectors/{connector_id}/sync")
    assert started.status_code == 202
    for _ in range(100):
        if (await client.get(f"/api/connectors/{connector_id}")).json()["status"] == "idle":
            break
        await asyncio.sleep(0.02)

    other = await client.get(f"/api/connectors/{connector_id}", params={"agentId": "other"})
    assert other.status_code == 404
    gone = await client.delete(f"/api/connectors/{connector_id}")
    assert gone.status_code == 200 and gone.json()["documentsDeleted"] == 1
    assert (await client.get("/api/connectors")).json()["connectors"] == []
    again = await client.delete(f"/api/connectors/{connector_id}")
    assert again.status_code == 404
    assert (folder / "one.md").exists()


async def test_create_syncs_in_the_background_by_default(
    client: httpx.AsyncClient, folder: Path
) -> None:
    created = await client.post("/api/connectors", json={"path": str(folder)})
    assert created.status_code == 201 and created.json()["syncStarted"] is True
    connector_id = created.json()["id"]
    for _ in range(200):
        health = (await client.get(f"/api/connectors/{connector_id}/health")).json()
        if health["files"] == 2 and health["status"] == "idle":
            break
        await asyncio.sleep(0.02)
    assert health["files"] == 2
    duplicate = await client.post("/api/connectors", json={"path": str(folder)})
    assert duplicate.status_code == 409 and duplicate.json()["code"] == "connector_exists"


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"provider": "gdrive", "path": "/tmp"}, 400, "provider_unsupported"),
        ({"provider": "filesystem"}, 400, "path_invalid"),
        ({"path": "relative"}, 400, "path_invalid"),
        ({"path": "/etc"}, 403, "path_not_allowed"),
        ({"path": "/tmp/definitely-missing-folder-x"}, 400, "path_not_found"),
        ({"path": "/tmp", "globs": ["../x"]}, 400, "pattern_invalid"),
        ({"path": "/tmp", "globs": "*.md"}, 422, None),
    ],
)
async def test_bad_connector_bodies_write_nothing(
    client: httpx.AsyncClient,
    service: SignetService,
    body: dict[str, object],
    status: int,
    code: str | None,
) -> None:
    answer = await client.post("/api/connectors", json={**body, "sync": False})
    assert answer.status_code == status, answer.text
    if code is not None:
        assert answer.json()["code"] == code
    assert rows(service, "connectors") == 0


async def test_maintenance_runs_on_request_and_shows_in_status(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    ran = await client.post("/api/maintenance/run")
    assert ran.status_code == 200 and ran.json()["status"] == "completed"
    assert set(ran.json()["steps"]) == {"tombstones", "history", "jobs", "counters"}
    alias = await client.post("/api/repair/retention-sweep")
    assert alias.status_code == 200
    listed = (await client.get("/api/maintenance")).json()
    assert [r["id"] for r in listed["runs"]] == [alias.json()["id"], ran.json()["id"]]
    assert listed["batchLimit"] == 500
    status = (await client.get("/api/status")).json()
    assert status["maintenance"]["lastRun"]["id"] == alias.json()["id"]
    assert rows(service, "maintenance_runs") == 2


async def test_a_watched_folder_is_synced_by_the_watch_pass(
    client: httpx.AsyncClient, folder: Path, service: SignetService
) -> None:
    """The connectors worker's pass (`sync_watched`) finds the watched folder and syncs it;
    one without `watch` is left to its own syncs."""
    watched = await client.post(
        "/api/connectors", json={"path": str(folder), "watch": True, "sync": False}
    )
    assert watched.status_code == 201, watched.text
    still = folder.parent / "still"
    still.mkdir()
    (still / "three.md").write_text("A note nobody watches.", encoding="utf-8")
    unwatched = await client.post("/api/connectors", json={"path": str(still), "sync": False})
    assert unwatched.status_code == 201, unwatched.text
    assert service.connectors.sync_watched() == 1
    health = (await client.get(f"/api/connectors/{watched.json()['id']}/health")).json()
    assert health["healthy"] and health["files"] == 2, health
    idle = (await client.get(f"/api/connectors/{unwatched.json()['id']}/health")).json()
    assert idle["files"] == 0, idle
