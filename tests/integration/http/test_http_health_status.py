"""/health, /api/status, the 500 boundary, and proof that service calls run off the loop."""

from __future__ import annotations

import threading
import time

import anyio
import httpx
import pytest
from fastapi import FastAPI
from http_helpers import make_client
from support.db import database_of

from signet_desktop.api.http.app import create_app
from signet_desktop.api.http.settings import settings_from_auth
from signet_desktop.config.models import SignetConfig
from signet_desktop.config.sections import AuthConfig
from signet_desktop.service.facade import SignetService

pytestmark = pytest.mark.anyio


async def test_health_document(client: httpx.AsyncClient, tmp_path: object) -> None:
    body = (await client.get("/health")).json()
    assert body["status"] == "healthy" and body["db"] is True and body["shuttingDown"] is False
    assert body["port"] == 3850 and body["agentsDir"] == str(tmp_path)
    assert isinstance(body["pid"], int) and body["uptime"] >= 0 and body["version"]


async def test_live_and_ready(client: httpx.AsyncClient, app: FastAPI) -> None:
    assert (await client.get("/health/live")).json() == {"status": "ok"}
    assert (await client.get("/health/ready")).json() == {"status": "ready"}
    app.state.shutting_down = True
    ready = await client.get("/health/ready")
    assert ready.status_code == 503 and ready.json()["error"] == "shutting down"
    assert (await client.get("/health")).json()["shuttingDown"] is True


async def test_ready_is_503_when_the_database_is_closed(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    service.close()
    ready = await client.get("/health/ready")
    assert ready.status_code == 503 and ready.json()["error"] == "database unavailable"
    health = (await client.get("/health")).json()
    assert health["status"] == "degraded" and health["db"] is False


async def test_status_merges_service_facts_and_the_status_board(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    service.status_board.set("config", {"path": None, "embedding": "native"})
    body = (await client.get("/api/status")).json()
    assert body["status"] == "running" and body["port"] == 3850
    assert body["database"]["migrations"] >= 1 and "available" in body["vector"]
    assert body["config"] == {"path": None, "embedding": "native"}
    assert body["auth"] == {"tokenRequired": False, "trustLoopbackClients": False}


async def test_unexpected_error_is_a_logged_500_with_request_id(
    app: FastAPI, caplog: pytest.LogCaptureFixture
) -> None:
    async def explode() -> None:
        raise RuntimeError("boom: secret stack detail")

    app.add_api_route("/api/test-explode", explode, methods=["GET"])
    async with make_client(app) as client:
        response = await client.get("/api/test-explode", headers={"x-signet-request-id": "r-1"})
    assert response.status_code == 500
    assert response.json() == {"error": "internal error", "code": "internal_error",
                               "requestId": "r-1"}  # fmt: skip
    assert "secret stack detail" not in response.text
    assert response.headers["x-signet-request-id"] == "r-1"
    assert any("r-1" in record.getMessage() for record in caplog.records)


async def test_service_calls_do_not_block_the_event_loop(
    client: httpx.AsyncClient, service: SignetService
) -> None:
    """While the write owner is busy, a remember waits in a worker thread and /health answers."""
    held = threading.Event()
    release = threading.Event()

    def hold_write_lock() -> None:
        with database_of(service).write():
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold_write_lock)
    holder.start()
    held.wait(5)
    finished: list[str] = []
    try:
        async with anyio.create_task_group() as group:

            async def slow_remember() -> None:
                response = await client.post(
                    "/api/memory/remember", json={"content": "Waits for the writer."}
                )
                assert response.status_code == 200
                finished.append("remember")

            group.start_soon(slow_remember)
            await anyio.sleep(0.1)
            started = time.perf_counter()
            assert (await client.get("/health")).status_code == 200
            assert (await client.get("/api/memories")).status_code == 200
            finished.append("health")
            assert time.perf_counter() - started < 2
            release.set()
    finally:
        release.set()
        holder.join(5)
    assert finished == ["health", "remember"]


async def test_features_are_agent_yaml_s_flags_as_signet_serves_them(
    service: SignetService,
) -> None:
    config = SignetConfig.model_validate(
        {"features": {"graphEnabled": True, "tasks": "false", "odd": 3, "name": "x"}}
    )
    assert config.features == {"graphEnabled": True, "tasks": False}  # others dropped
    settings = settings_from_auth(AuthConfig(), features=config.features)
    async with make_client(create_app(service, settings)) as client:
        answer = await client.get("/api/features")
    assert answer.status_code == 200 and answer.json() == {"graphEnabled": True, "tasks": False}
    async with make_client(create_app(service, settings_from_auth(AuthConfig()))) as client:
        assert (await client.get("/api/features")).json() == {}
