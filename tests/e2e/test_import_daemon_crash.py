"""The real daemon killed (SIGKILL, from its own fault point) in the middle of an import it
runs for `POST /api/sources/import`: after a restart the run says `interrupted`, and the same
request again finishes the import with every session once."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest
from support.history_files import write_claude_project

from tests.e2e.launcher import Launcher, args_for, clean_env

pytestmark = pytest.mark.slow

SESSIONS = 6
EXCHANGES = 3


def wait_for(client: httpx.Client, path: str, done: Any, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = client.get(path).json()
        if done(answer):
            return answer
        time.sleep(0.1)
    raise AssertionError(f"{path} never got there: {answer}")


def test_a_daemon_killed_mid_import_resumes_after_restart(launcher: Launcher) -> None:
    workspace = launcher.tmp_path / "ws"
    ids = write_claude_project(launcher.home / ".claude" / "projects", SESSIONS, EXCHANGES)
    env = clean_env(launcher.home, SIGNET_IMPORT_FAULT="record.finalised:3")
    daemon = launcher.start(*args_for(workspace), env=env)
    with httpx.Client(base_url=daemon.wait_listening(), timeout=10) as client:
        ticket = client.post("/api/sources/import", json={"kind": "claude-code"}).json()
    assert daemon.proc.wait(30) == -9  # the import thread's fault point killed the daemon

    restarted = launcher.start(*args_for(workspace))
    with httpx.Client(base_url=restarted.wait_listening(), timeout=10) as client:
        source = f"/api/sources/{ticket['sourceId']}"
        detail = wait_for(client, source, lambda d: d["runs"][0]["status"] != "running")
        assert detail["runs"][0]["status"] == "interrupted"
        assert detail["totals"]["records"] == {"imported": 3}
        again = client.post("/api/sources/import", json={"kind": "claude-code"})
        assert again.status_code == 202 and again.json()["sourceId"] == ticket["sourceId"]
        run = wait_for(
            client,
            f"{source}/runs/{again.json()['runId']}",
            lambda r: r["status"] != "running",
        )
        assert run["status"] == "completed" and run["counts"]["recordsImported"] == SESSIONS - 3
        sessions = client.get("/api/sessions", params={"status": "imported"}).json()
        assert sorted(s["sessionKey"] for s in sessions["sessions"]) == sorted(ids)
        assert all(s["turns"] == EXCHANGES * 2 for s in sessions["sessions"])
    canonical = workspace / "memory" / "claude-code" / "transcripts" / "transcript.jsonl"
    lines = [json.loads(line) for line in canonical.read_bytes().splitlines()]
    keys = [(line["sessionKey"], line["ordinal"]) for line in lines]
    assert len(keys) == len(set(keys)) == SESSIONS * EXCHANGES * 2
    assert restarted.signal() == 0
