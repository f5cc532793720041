"""Two real `signet-desktop --headless` processes on one empty PostgreSQL database.

Launched at the same moment, each with its own workspace and the same `storage.url` (no
embedder: lexical recall), they migrate the database once between them, both serve with a
listening event relay, a memory remembered on A is recalled on B and reaches B's
/api/events stream, and both stop on SIGTERM with exit 0 and no ERROR in their logs. The
queue half of the story runs in-process
(test_two_daemons_one_database.py), where each daemon's leases can be told apart.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.team_daemons import errors_in, until

from signet_desktop.storage.postgres.connect import connect_postgres
from signet_desktop.storage.postgres.migrate import load_postgres_migrations
from tests.e2e.launcher import Launcher, args_for

pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.timeout(600)]

DEADLINE_S = 60.0  # a bound against a hang at load 10-20, not a speed check


def follow_events(url: str, into: list[dict[str, Any]], ready: threading.Event) -> None:
    """B's memory.created events, until B stops (the stream then ends)."""
    params = {"types": "memory.created", "heartbeat": 1}
    with (
        httpx.Client(base_url=url, timeout=None) as client,
        client.stream("GET", "/api/events", params=params) as stream,
    ):
        for line in stream.iter_lines():
            if line == ": connected":
                ready.set()
            elif line.startswith("data: "):
                into.append(json.loads(line.removeprefix("data: ")))


def test_two_daemon_processes_share_one_database(tmp_path: Path, pg_empty_url: str) -> None:
    launcher = Launcher(tmp_path)
    workspaces = []
    for name in ("a", "b"):
        workspace = tmp_path / name
        workspace.mkdir()
        workspace.joinpath("agent.yaml").write_text(
            f"storage:\n  url: '{pg_empty_url}'\nembedding:\n  provider: none\n"
        )
        workspaces.append(workspace)
    try:
        daemons = [launcher.start(*args_for(w, "--log-level", "info")) for w in workspaces]
        url_a, url_b = (daemon.wait_listening() for daemon in daemons)
        streamed: list[dict[str, Any]] = []
        ready = threading.Event()
        with (
            httpx.Client(base_url=url_a, timeout=30) as on_a,
            httpx.Client(base_url=url_b, timeout=30) as on_b,
        ):
            for client in (on_a, on_b):
                until(
                    lambda c=client: c.get("/api/status").json()["eventRelay"],
                    lambda relay: relay["listening"],
                    DEADLINE_S,
                )
            threading.Thread(
                target=follow_events, args=(url_b, streamed, ready), daemon=True
            ).start()
            assert ready.wait(DEADLINE_S)
            saved = on_a.post(
                "/api/memory/remember", json={"content": "the pager rota moves to the sre team"}
            )
            assert saved.status_code == 200, saved.text
            memory_id = saved.json()["id"]
            until(
                lambda: on_b.post("/api/memory/recall", json={"query": "pager rota sre"}).json(),
                lambda body: any(hit["id"] == memory_id for hit in body["results"]),
                DEADLINE_S,
            )
            until(lambda: [e for e in streamed if e.get("memoryId") == memory_id], bool, DEADLINE_S)
            relay_b = on_b.get("/api/status").json()["eventRelay"]
        codes = [daemon.signal() for daemon in daemons]
    finally:
        launcher.cleanup()

    assert codes == [0, 0], [daemon.stderr() for daemon in daemons]
    assert relay_b["received"] >= 1 and relay_b["unreadable"] == 0
    conn = connect_postgres(pg_empty_url)
    try:
        applied = conn.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0]
        audited = conn.execute(
            "SELECT version, COUNT(*) FROM schema_migrations_audit GROUP BY version"
        ).fetchall()
    finally:
        conn.close()
    files = len(load_postgres_migrations())
    assert applied == files and len(audited) == files
    assert all(row[1] == 1 for row in audited), audited
    for daemon, workspace in zip(daemons, workspaces, strict=True):
        log_text = (workspace / ".daemon" / "logs" / "daemon.log").read_text()
        assert errors_in(log_text) == [], log_text[-4000:]
        assert "relaying events through PostgreSQL" in log_text
        assert "Traceback" not in daemon.stderr()
