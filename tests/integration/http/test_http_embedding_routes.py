"""/api/embeddings/status, /api/embeddings/backfill and /api/repair/resync-vec over HTTP.

Every refusal is checked twice: the status code and body, and that nothing changed (an
accepted request would have embedded the missing vectors or refilled the mirror).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from http_helpers import make_client, remember, row_counts
from support.db import database_of
from support.fakes import SwitchableEmbedder

from signet_desktop.api.http.app import create_app
from signet_desktop.api.http.settings import HttpSettings
from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService

pytestmark = pytest.mark.anyio

STATUS = "/api/embeddings/status"
BACKFILL = "/api/embeddings/backfill"
RESYNC = "/api/repair/resync-vec"
MIRROR_ROWS = "SELECT COUNT(*) FROM vec_embeddings_g1"


@pytest.fixture
def embedder() -> SwitchableEmbedder:
    return SwitchableEmbedder()


@pytest.fixture
def service(tmp_path: Path, embedder: SwitchableEmbedder) -> Iterator[SignetService]:
    """The real service over the switchable embedder (overrides the conftest's)."""
    svc = build_service(
        WorkspacePaths.for_root(tmp_path),
        SignetConfig(),
        BuildOptions(embedder=embedder, inline_vectors=True),
    )
    yield svc
    svc.close()


@pytest.fixture
async def bare_client(tmp_path: Path) -> AsyncIterator[Any]:
    """`await bare_client(options)` -> (client, service) over a service built with `options`."""
    built: list[SignetService] = []

    async def make(options: BuildOptions) -> tuple[httpx.AsyncClient, SignetService]:
        svc = build_service(WorkspacePaths.for_root(tmp_path / "other"), SignetConfig(), options)
        built.append(svc)
        app = create_app(svc, HttpSettings(agents_dir=str(tmp_path)))
        return make_client(app), svc

    yield make
    for svc in built:
        svc.close()


def scalar(service: SignetService, sql: str) -> int:
    return int(database_of(service).reader().execute(sql).fetchone()[0])


def snapshot(service: SignetService) -> dict[str, int]:
    """Rows a backfill or resync could change (canonical + mirror)."""
    counts = row_counts(service)
    if database_of(service).vec.available:
        counts["mirror"] = scalar(service, MIRROR_ROWS)
    return counts


async def remember_unembedded(
    client: httpx.AsyncClient, embedder: SwitchableEmbedder, *texts: str
) -> list[str]:
    """Save memories while the embedder is down, then bring it back: vectors are missing."""
    embedder.down = True
    ids = []
    for text in texts:
        body = await remember(client, text)
        assert body["embedded"] is False
        ids.append(body["id"])
    embedder.down = False
    return ids


async def drop_mirror_rows(service: SignetService, count: int) -> None:
    with database_of(service).write() as conn:
        conn.execute(
            "DELETE FROM vec_embeddings_g1 WHERE rowid IN "
            "(SELECT id FROM embeddings ORDER BY id LIMIT :n)",
            {"n": count},
        )


# -- status -----------------------------------------------------------------------------------


async def test_status_reports_coverage_mirror_and_jobs(client: httpx.AsyncClient) -> None:
    await remember(client, "billing uses postgres")
    await remember(client, "frontend uses svelte")
    response = await client.get(STATUS)
    assert response.status_code == 200
    body = response.json()
    assert (body["provider"], body["model"], body["dimensions"]) == ("hash", "hash-64", 64)
    assert body["coverage"] == {
        "generation": 1, "status": "active", "total": 2, "embedded": 2, "missing": 0,
        "ratio": 1.0,
    }  # fmt: skip
    (generation,) = body["generations"]
    assert (generation["id"], generation["status"], generation["vectors"]) == (1, "active", 2)
    assert generation["vecTable"] == "vec_embeddings_g1"
    assert body["mirror"] == {"enabled": True, "error": None, "missing": 0, "orphans": 0}
    assert body["vectorSearch"] == "complete"
    assert body["jobs"]["pending"] == 0 and body["jobs"]["dead"] == 0


async def test_status_counts_missing_vectors_and_queued_jobs(
    client: httpx.AsyncClient, embedder: SwitchableEmbedder
) -> None:
    await remember(client, "embedded note")
    await remember_unembedded(client, embedder, "missing one", "missing two")
    body = (await client.get(STATUS)).json()
    assert (body["coverage"]["embedded"], body["coverage"]["missing"]) == (1, 2)
    assert body["jobs"]["pending"] == 2


async def test_wrong_methods_are_405(
    client: httpx.AsyncClient,
) -> None:
    assert (await client.post(STATUS, json={})).status_code == 405
    assert (await client.get(BACKFILL)).status_code == 405


# -- backfill ---------------------------------------------------------------------------------


async def test_backfill_dry_run_then_embed(
    client: httpx.AsyncClient, service: SignetService, embedder: SwitchableEmbedder
) -> None:
    await remember_unembedded(client, embedder, "alpha", "beta", "gamma")
    before = snapshot(service)
    dry = await client.post(BACKFILL, json={"dryRun": True})
    assert dry.status_code == 200
    assert dry.json() == {"dryRun": True, "generation": 1, "missing": 3}
    assert snapshot(service) == before

    done = await client.post(BACKFILL, json={"limit": 10, "dryRun": False})
    assert done.status_code == 200
    body = done.json()
    assert (body["missingBefore"], body["embedded"], body["failed"], body["error"]) == (
        3, 3, 0, None,
    )  # fmt: skip
    assert body["coverage"]["missing"] == 0 and body["coverage"]["ratio"] == 1.0
    assert scalar(service, "SELECT COUNT(*) FROM embeddings") == 3
    assert scalar(service, MIRROR_ROWS) == 3

    again = await client.post(BACKFILL)  # no body: defaults
    assert again.status_code == 200 and again.json()["embedded"] == 0


async def test_backfill_while_the_embedder_is_down_is_503_and_loses_nothing(
    client: httpx.AsyncClient, service: SignetService, embedder: SwitchableEmbedder
) -> None:
    ids = await remember_unembedded(client, embedder, "kept one", "kept two")
    embedder.down = True
    response = await client.post(BACKFILL, json={"limit": 5})
    assert response.status_code == 503
    body = response.json()
    assert body["code"] == "embedder_unavailable"
    assert body["error"] == "embedder unavailable: switchable: connection refused"
    assert scalar(service, "SELECT COUNT(*) FROM embeddings") == 0
    for memory_id in ids:
        assert (await client.get(f"/api/memory/{memory_id}")).status_code == 200


async def test_backfill_never_embeds_more_than_limit(
    client: httpx.AsyncClient, embedder: SwitchableEmbedder
) -> None:
    await remember_unembedded(client, embedder, "one", "two", "three")
    body = (await client.post(BACKFILL, json={"limit": 1})).json()
    assert body["embedded"] == 1 and body["coverage"]["missing"] == 2


@pytest.mark.parametrize(
    "body",
    [
        {"limit": -1},
        {"limit": 0},
        {"limit": 10_001},
        {"limit": "5"},
        {"limit": 2.5},
        {"limit": True},
        {"limit": None},
        {"dryRun": "yes"},
        {"dryRun": 1},
        {"bogus": 1},
        {"limit": 5, "dryrun": False},
        [],
        "limit",
        7,
    ],
)
async def test_backfill_bad_input_is_422_and_changes_nothing(
    client: httpx.AsyncClient,
    service: SignetService,
    embedder: SwitchableEmbedder,
    body: Any,
) -> None:
    await remember_unembedded(client, embedder, "needs a vector")
    before = snapshot(service)
    response = await client.post(BACKFILL, json=body)
    assert response.status_code == 422, response.text
    answer = response.json()
    assert answer["code"] == "invalid_request" and answer["error"].startswith("invalid request")
    assert snapshot(service) == before
    assert before["embeddings"] == 0


async def test_backfill_malformed_json_is_400_and_changes_nothing(
    client: httpx.AsyncClient, service: SignetService, embedder: SwitchableEmbedder
) -> None:
    await remember_unembedded(client, embedder, "needs a vector")
    before = snapshot(service)
    response = await client.post(
        BACKFILL, content=b'{"limit": 5', headers={"content-type": "application/json"}
    )
    assert response.status_code == 400 and response.json()["code"] == "invalid_json"
    assert snapshot(service) == before


# -- resync -----------------------------------------------------------------------------------


async def test_resync_dry_run_then_restore(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    for text in ("alpha note", "beta note", "gamma note"):
        await remember(client, text)
    await drop_mirror_rows(service, 2)
    assert scalar(service, MIRROR_ROWS) == 1
    status = (await client.get(STATUS)).json()
    assert (status["mirror"]["missing"], status["mirror"]["orphans"]) == (2, 0)

    dry = await client.post(RESYNC, json={"dryRun": True})
    assert dry.status_code == 200
    assert dry.json() == {
        "generation": 1, "canonical": 3, "mirroredBefore": 1, "added": 2, "removed": 0,
        "rebuilt": False, "dryRun": True,
    }  # fmt: skip
    assert scalar(service, MIRROR_ROWS) == 1

    done = await client.post(RESYNC, json={"generation": 1})
    assert done.status_code == 200
    assert (done.json()["added"], done.json()["dryRun"]) == (2, False)
    assert scalar(service, MIRROR_ROWS) == 3
    assert (await client.get(STATUS)).json()["mirror"]["missing"] == 0

    full = await client.post(RESYNC, json={"full": True})
    assert full.status_code == 200
    assert (full.json()["rebuilt"], full.json()["added"]) == (True, 3)
    assert scalar(service, MIRROR_ROWS) == 3
    recall = await client.post("/api/memory/recall", json={"query": "beta note"})
    assert recall.json()["results"][0]["content"] == "beta note"
    assert recall.json()["results"][0]["semantic"] is not None


async def test_resync_of_an_unknown_generation_is_404_and_changes_nothing(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    await remember(client, "alpha note")
    await drop_mirror_rows(service, 1)
    response = await client.post(RESYNC, json={"generation": 42})
    assert response.status_code == 404
    assert response.json()["code"] == "generation_not_found"
    assert scalar(service, MIRROR_ROWS) == 0


@pytest.mark.parametrize(
    "body",
    [
        {"generation": 0},
        {"generation": -1},
        {"generation": "1"},
        {"generation": 1.0},
        {"full": "yes"},
        {"full": 1},
        {"dryRun": "false"},
        {"dry": True},
        ["full"],
    ],
)
async def test_resync_bad_input_is_422_and_changes_nothing(
    client: httpx.AsyncClient, service: SignetService, body: Any
) -> None:
    await remember(client, "alpha note")
    await remember(client, "beta note")
    await drop_mirror_rows(service, 2)
    before = snapshot(service)
    response = await client.post(RESYNC, json=body)
    assert response.status_code == 422, response.text
    assert response.json()["code"] == "invalid_request"
    assert snapshot(service) == before
    assert before["mirror"] == 0


# -- without sqlite-vec, or without an embedder -----------------------------------------------


async def test_resync_without_sqlite_vec_is_503_with_a_clear_error(bare_client: Any) -> None:
    client, service = await bare_client(
        BuildOptions(with_vec=False, embedder=SwitchableEmbedder(), inline_vectors=True)
    )
    async with client:
        await remember(client, "stored without the extension")
        before = snapshot(service)
        for body in ({}, {"dryRun": True}, {"full": True}):
            response = await client.post(RESYNC, json=body)
            assert response.status_code == 503
            answer = response.json()
            assert answer["code"] == "vec_unavailable"
            assert answer["error"].startswith("sqlite-vec is not loaded (")
            assert "recent-window" in answer["error"]
        assert snapshot(service) == before
        status = (await client.get(STATUS)).json()
        assert status["vectorSearch"] == "recent-window"
        assert status["mirror"]["enabled"] is False and status["mirror"]["error"]
        assert status["coverage"]["embedded"] == 1
        backfill = await client.post(BACKFILL, json={"limit": 5})
        assert backfill.status_code == 200 and backfill.json()["embedded"] == 0


async def test_without_an_embedder_backfill_is_503(bare_client: Any) -> None:
    client, service = await bare_client(BuildOptions(no_embedder=True))
    async with client:
        await remember(client, "keyword only")
        status = (await client.get(STATUS)).json()
        assert (status["provider"], status["vectorSearch"]) == ("none", "unavailable")
        assert status["generations"] == []
        response = await client.post(BACKFILL, json={"limit": 5})
        assert response.status_code == 503 and response.json()["code"] == "no_embedder"
        assert row_counts(service)["memories"] == 1
