"""The daemon's event relay (storage/postgres/notify.py wired in daemon/runtime.py): on
PostgreSQL one relay starts with the daemon, shows in /api/status `eventRelay`, sends the
daemon's agent events, and stops with it (no relay thread left, no ERROR in the log); on
SQLite there is none."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.team_daemons import (
    closing,
    daemon_log,
    new_runtime,
    poll,
    relay_threads,
    serving,
)

from signet_desktop.config.storage import SQLITE_URL


@pytest.mark.postgres
def test_a_postgresql_daemon_relays_its_events_and_stops_its_relay(
    tmp_path: Path, pg_url: str
) -> None:
    assert relay_threads() == []  # none left by an earlier test in this process
    runtime = new_runtime(tmp_path, "ws", pg_url)

    async def scenario() -> dict[str, Any]:
        async with (
            serving([runtime]),
            httpx.AsyncClient(base_url=runtime.url, timeout=30) as client,
        ):
            saved = await client.post("/api/memory/remember", json={"content": "relay me"})
            assert saved.status_code == 200, saved.text

            async def relay() -> dict[str, Any]:
                body: dict[str, Any] = (await client.get("/api/status")).json()["eventRelay"]
                return body

            facts, _ = await poll(relay, lambda f: f["listening"] and f["sent"] >= 1, 60)
            return facts

    with closing([runtime]):
        runtime.open()
        assert sorted(relay_threads()) == ["pg-notify-listen", "pg-notify-send"]
        facts = asyncio.run(scenario())
    assert facts["ownSkipped"] >= 1  # its own NOTIFY came back and was not republished
    assert facts["received"] == 0 and facts["sendFailed"] == 0 and facts["unreadable"] == 0
    assert relay_threads() == []
    log_text = daemon_log(runtime)
    assert "relaying events through PostgreSQL as daemon" in log_text
    assert " ERROR " not in log_text and "relay did not stop" not in log_text, log_text


def test_a_sqlite_daemon_has_no_relay(tmp_path: Path) -> None:
    runtime = new_runtime(tmp_path, "ws", SQLITE_URL)

    async def scenario() -> dict[str, Any]:
        async with (
            serving([runtime]),
            httpx.AsyncClient(base_url=runtime.url, timeout=30) as client,
        ):
            body: dict[str, Any] = (await client.get("/api/status")).json()
            return body

    with closing([runtime]):
        runtime.open()
        assert relay_threads() == []
        status = asyncio.run(scenario())
    assert "eventRelay" not in status
    assert status["database"]["backend"] == "sqlite"
