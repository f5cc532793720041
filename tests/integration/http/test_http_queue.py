"""/api/diagnostics/queue and /repair over HTTP: counts, dry run by default, plan == apply,
scope, budget, retired rows left alone, and bad input changing nothing."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from http_helpers import make_client
from support.db import database_of
from support.queue_jobs import all_rows, fill_queue

from signet_desktop.api.http.app import create_app
from signet_desktop.api.http.settings import settings_from_auth
from signet_desktop.config.models import SignetConfig
from signet_desktop.config.sections import AuthConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService

pytestmark = pytest.mark.anyio

DIAG = "/api/diagnostics/queue"
REPAIR = "/api/diagnostics/queue/repair"


async def test_diagnostics_counts_per_state_and_type_without_retired_rows(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    made = fill_queue(database_of(service))
    body = (await client.get(DIAG)).json()
    assert body["queues"]["memory"] == {
        "pending": 2, "leased": 1, "completed": 2, "failed": 0, "dead": 2, "cancelled": 0
    }  # fmt: skip
    assert set(body["jobTypes"]) == {"document_ingest", "embedding_backfill"}
    assert body["jobTypes"]["document_ingest"]["dead"] == 1
    assert [j["id"] for j in body["oldestDead"]] == list(made.dead)
    assert body["oldestDead"][0]["error"] == "timeout after 10 s"
    assert body["leaseAnomalies"] == 1 and body["depth"] == 2
    assert body["deadRate"] == 0.5 and body["status"] == "degraded"
    assert body["thresholds"]["depth"] == 50 and body["excludedJobTypes"] == ["extract"]
    # the pipeline's counts leave the retired rows out too
    status = (await client.get("/api/pipeline/status")).json()
    assert "extract" not in status["jobTypes"]
    assert status["queues"]["memory"]["dead"] == 2


async def test_repair_is_a_dry_run_unless_dry_run_is_false_and_apply_changes_those_rows(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    db = database_of(service)
    made = fill_queue(db)
    before = all_rows(db)
    dry = await client.post(REPAIR, json={"action": "requeue"})
    assert dry.status_code == 200
    plan = dry.json()
    assert (plan["dryRun"], plan["success"], plan["affected"]) == (True, True, 2)
    assert plan["ids"] == list(made.dead)
    assert {j["toStatus"] for j in plan["jobs"]} == {"pending"}
    assert all_rows(db) == before  # nothing changed
    again = await client.post(REPAIR, json={"action": "requeue", "dryRun": True})
    assert again.json()["ids"] == plan["ids"]

    applied = (await client.post(REPAIR, json={"action": "requeue", "dryRun": False})).json()
    assert (applied["dryRun"], applied["affected"]) == (False, 2)
    assert applied["ids"] == plan["ids"]
    after = all_rows(db)
    assert {i for i in before if before[i] != after[i]} == set(plan["ids"])
    assert set(made.retired) <= set(after)


@pytest.mark.parametrize("action", ["requeue", "release", "cancel", "prune"])
async def test_each_action_plan_equals_apply(
    client: httpx.AsyncClient, service: SignetService, action: str
) -> None:
    db = database_of(service)
    fill_queue(db)
    before = all_rows(db)
    plan = (await client.post(REPAIR, json={"action": action})).json()
    assert plan["affected"] > 0
    applied = (await client.post(REPAIR, json={"action": action, "dryRun": False})).json()
    after = all_rows(db)
    changed = {i for i in before if before[i] != after.get(i)}
    assert applied["ids"] == plan["ids"] and changed == set(plan["ids"])


async def test_apply_on_an_empty_queue_is_a_clean_no_op(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    for action in ("requeue", "release", "cancel", "prune"):
        answer = await client.post(REPAIR, json={"action": action, "dryRun": False})
        assert answer.status_code == 200
        body = answer.json()
        assert (body["success"], body["affected"], body["ids"]) == (True, 0, [])
        assert "nothing changed" in body["message"]
    assert all_rows(database_of(service)) == {}


async def test_repair_is_scoped_to_the_agent(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    db = database_of(service)
    theirs = fill_queue(db, "other")
    before = all_rows(db)
    body = {"action": "requeue", "dryRun": False, "ids": list(theirs.dead)}
    answer = (await client.post(REPAIR, json=body)).json()
    assert answer["affected"] == 0 and all_rows(db) == before
    mine = (await client.get(DIAG)).json()
    assert mine["queues"]["memory"]["dead"] == 0
    other = (await client.get(DIAG, headers={"x-signet-agent-id": "other"})).json()
    assert other["queues"]["memory"]["dead"] == 2


async def test_a_second_apply_within_the_cooldown_is_429_and_changes_nothing(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    db = database_of(service)
    made = fill_queue(db)
    first = {"action": "requeue", "dryRun": False, "ids": [made.dead[0]]}
    assert (await client.post(REPAIR, json=first)).json()["affected"] == 1
    before = all_rows(db)
    second = await client.post(REPAIR, json={**first, "ids": [made.dead[1]]})
    assert second.status_code == 429 and int(second.headers["retry-after"]) >= 1
    assert second.json()["success"] is False and "cooldown" in second.json()["message"]
    assert all_rows(db) == before
    # a dry run is never refused: it changes nothing
    assert (await client.post(REPAIR, json={"action": "requeue"})).json()["affected"] == 1


async def test_filters_and_signet_fields(client: httpx.AsyncClient, service: SignetService) -> None:
    db = database_of(service)
    made = fill_queue(db)
    typed = {"action": "requeue", "jobType": "document_ingest", "errorPattern": "TIMEOUT"}
    assert (await client.post(REPAIR, json=typed)).json()["ids"] == [made.dead[0]]
    aged = {"action": "prune", "retentionMs": 3_600_000, "tables": ["memory"]}
    assert set((await client.post(REPAIR, json=aged)).json()["ids"]) == set(made.dead)
    retired = await client.post(REPAIR, json={"action": "requeue", "tables": ["summary"]})
    assert retired.status_code == 410 and retired.json()["code"] == "summary_retired"


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"action": "vacuum"},
        {"action": "requeue", "dryRun": "false"},
        {"action": "requeue", "maxBatch": 0},
        {"action": "requeue", "maxBatch": 5000},
        {"action": "prune", "olderThanMs": -1},
        {"action": "requeue", "ids": [""]},
        {"action": "requeue", "ids": "abc"},
    ],
)
async def test_bad_input_is_422_and_changes_nothing(
    client: httpx.AsyncClient, service: SignetService, body: dict[str, object]
) -> None:
    db = database_of(service)
    fill_queue(db)
    before = all_rows(db)
    answer = await client.post(REPAIR, json=body)
    assert answer.status_code == 422
    assert all_rows(db) == before


async def test_bad_agent_id_is_400(client: httpx.AsyncClient) -> None:
    answer = await client.get(DIAG, params={"agentId": "no spaces allowed"})
    assert answer.status_code == 400 and answer.json()["code"] == "agent_id_invalid"


async def test_the_repair_rate_limit_applies_in_team_mode(tmp_path: Path) -> None:
    root = tmp_path
    service = build_service(
        WorkspacePaths.for_root(root / "ws"), SignetConfig(), BuildOptions(embedder=HashEmbedder(8))
    )
    try:
        auth = AuthConfig.model_validate(
            {"mode": "team", "token": "t", "rateLimits": {"repair": {"max": 1}}}
        )
        app: FastAPI = create_app(service, settings_from_auth(auth))
        headers = {"authorization": "Bearer t"}
        async with make_client(app) as client:
            assert (
                await client.post(REPAIR, json={"action": "prune"}, headers=headers)
            ).status_code == 200
            limited = await client.post(REPAIR, json={"action": "prune"}, headers=headers)
            assert limited.status_code == 429
            assert (await client.get(DIAG, headers=headers)).status_code == 200
    finally:
        service.close()
