"""A Dreaming pass run by the real OpenCode (`executor: acpx`, `acpx.agent: opencode`), offline.

The daemon starts `opencode run --format json` for the pass with the user's own OpenCode
config (their provider: a scripted Chat Completions API on loopback) and Signet's plugin
installed. The scripted model makes real tool calls through OpenCode: a search, an operation
quoting the window exactly, one with a fabricated quote, one batch over the per-request cap,
a call for another agent's data, and OpenCode's shell tool, which the pass's agent does not
have. The pass must record every call in order, apply only the good operation, start none of
the user's own MCP servers, leave no session in the user's OpenCode and no process behind.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.launcher import DaemonProcess, Launcher, args_for, clean_env
from tests.e2e.npm_harness import run, signet_cli
from tests.e2e.opencode_cli import OFFLINE_ENV, OPENCODE, plugin_sdk, seed_plugin_sdk, user_config
from tests.e2e.test_dream_harness import MEMORY, SUMMARY, entity, finished, harness_processes
from tests.support.openai_server import Answer, FunctionCall, model_server

pytestmark = pytest.mark.slow

TOOL = "signet-dreaming_"  # OpenCode names MCP tools <server>_<tool>


def opencode_yaml(binary: str) -> str:
    return (
        "memory:\n  dreaming:\n    enabled: false\n"
        "inference:\n"
        "  targets:\n"
        "    opencode:\n"
        "      executor: acpx\n"
        f"      acpx: {{agent: {binary}}}\n"
        "  workloads:\n"
        "    memoryExtraction: {target: opencode}\n"
    )


def script(ref: str) -> list[Answer]:
    """The model's turns, in order (turn n answers the request after n tool results)."""
    over_cap = [entity(f"Service {n}", "billing service", ref) for n in range(101)]
    return [
        FunctionCall(TOOL + "search_evidence", {"query": "billing"}),
        FunctionCall(
            TOOL + "apply_ontology_ops",
            {"operations": [entity("Billing", "billing service runs on Postgres 16", ref)]},
        ),
        FunctionCall(
            TOOL + "apply_ontology_ops",
            {"operations": [entity("Oracle", "billing service runs on Oracle 9", ref)]},
        ),
        FunctionCall(TOOL + "apply_ontology_ops", {"operations": over_cap}),
        FunctionCall(TOOL + "search_evidence", {"query": "billing", "agentId": "intruder"}),
        FunctionCall("bash", {"command": "cat ~/.ssh/id_ed25519", "description": "read a key"}),
        SUMMARY,
    ]


def users_opencode(home: Path, model_url: str, marker: Path) -> Path:
    """The user's opencode.json: their provider, plus an MCP server of their own that would
    leave `marker` behind if OpenCode started it during the pass."""
    config = home / ".config" / "opencode" / "opencode.json"
    seed_plugin_sdk(config.parent)
    mine = user_config(model_url)
    mine["mcp"] = {
        "my-notes": {"type": "local", "command": ["/bin/sh", "-c", f"touch {marker}; sleep 30"]}
    }
    config.write_text(json.dumps(mine, indent=2) + "\n", encoding="utf-8")
    return config


def start(launcher: Launcher, workspace: Path) -> DaemonProcess:
    daemon = launcher.start(*args_for(workspace), env=clean_env(launcher.home, **OFFLINE_ENV))
    daemon.wait_listening()
    return daemon


def test_a_pass_through_real_opencode_records_every_call_and_applies_only_the_good_one(
    launcher: Launcher, tmp_path: Path
) -> None:
    binary = OPENCODE.find()
    plugin_sdk()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "agent.yaml").write_text(opencode_yaml(binary), encoding="utf-8")
    marker = tmp_path / "users-own-server-started"
    turns: list[Answer] = []

    def reply(body: dict[str, Any]) -> Answer:
        done = sum(1 for m in body.get("messages", []) if m.get("role") == "tool")
        return turns[min(done, len(turns) - 1)]

    with model_server(reply) as model:
        users_opencode(launcher.home, model.url, marker)
        daemon = start(launcher, workspace)
        # Signet's OpenCode plugin is installed too: the pass must not reach it.
        installed = signet_cli(launcher.home, "install", "opencode", "--url", daemon.url)
        assert installed.returncode == 0, installed.stderr
        with httpx.Client(base_url=daemon.url, timeout=10) as client:
            saved = client.post("/api/memory/remember", json={"content": MEMORY}).json()
            turns.extend(script(f"memory:{saved['id']}"))
            status = client.get("/api/dream/status").json()
            started = client.post("/api/dream/trigger", json={"mode": "incremental"})
            assert started.status_code == 202, started.text
            detail = finished(client, started.json()["passId"])
        requests = model.model_requests()
        env = clean_env(launcher.home, **OFFLINE_ENV)
        sessions = run([binary, "session", "list", "--pure"], tmp_path, env)

    assert detail["status"] == "completed", detail
    assert detail["summary"] == SUMMARY
    assert detail["provider"] == "acpx:opencode", detail
    calls = [(c["tool"], c["status"]) for c in detail["toolCalls"]]
    assert calls == [
        ("search_evidence", "ok"),
        ("apply_ontology_ops", "ok"),
        ("apply_ontology_ops", "ok"),  # answered, its operation refused (below)
        ("apply_ontology_ops", "error"),  # 101 operations: over the per-request cap
        ("search_evidence", "refused"),  # another agent's data
        ("bash", "refused"),  # OpenCode's shell, which the pass's agent does not have
    ], detail["toolCalls"]
    outcomes = [(op["payload"]["name"], op["status"], op["code"]) for op in detail["operations"]]
    assert outcomes == [("Billing", "applied", None), ("Oracle", "skipped", "quote_not_found")]
    assert detail["mutations"]["applied"] == 1
    assert detail["usage"]["inputTokens"] > 0 and detail["usage"]["outputTokens"] > 0
    assert detail["usage"]["costUsd"] is None  # no price for the scripted model: unknown

    offered = {t["function"]["name"] for r in requests for t in r.get("tools", [])}
    assert offered and all(name.startswith(TOOL) for name in offered), offered
    seen = json.dumps(requests)
    assert "Signet's Dreaming agent" in seen and "Postgres 16" in seen  # prompt + window
    assert "title generator" not in seen  # no extra model call to title the session
    assert not marker.exists(), "the user's own MCP server was started for the pass"
    assert "Signet Dreaming pass" not in sessions.stdout, sessions.stdout  # session deleted
    assert harness_processes(binary) == []
    runs = status["inference"]
    assert (runs["executor"], runs["provider"], runs["harness"]) == (
        "acpx",
        "acpx:opencode",
        binary,
    )

    conn = sqlite3.connect(workspace / "memory" / "memories.db")
    try:
        names = [r[0] for r in conn.execute("SELECT name FROM entities")]
        hook_sessions = conn.execute("SELECT COUNT(*) FROM hook_sessions").fetchone()[0]
    finally:
        conn.close()
    assert names == ["Billing"]
    assert hook_sessions == 0  # Signet's plugin stayed out: the pass is no session
    assert "Traceback" not in daemon.stderr()


def test_a_daemon_killed_mid_pass_leaves_no_opencode_and_an_interrupted_pass(
    launcher: Launcher, tmp_path: Path
) -> None:
    binary = OPENCODE.find()
    plugin_sdk()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "agent.yaml").write_text(opencode_yaml(binary), encoding="utf-8")
    asked = threading.Event()

    def stalls(body: dict[str, Any]) -> Answer:
        asked.set()
        time.sleep(20)  # the model "thinks" while the daemon dies
        return "too late"

    with model_server(stalls) as model:
        users_opencode(launcher.home, model.url, tmp_path / "marker")
        daemon = start(launcher, workspace)
        with httpx.Client(base_url=daemon.url, timeout=10) as client:
            client.post("/api/memory/remember", json={"content": MEMORY})
            pass_id = client.post("/api/dream/trigger", json={}).json()["passId"]
        assert asked.wait(90), "OpenCode never asked the model"
        assert pass_processes() != []
        daemon.proc.kill()
        daemon.proc.wait(10)
        deadline = time.monotonic() + 10
        while pass_processes() and time.monotonic() < deadline:
            time.sleep(0.1)
        left = pass_processes()
        again = start(launcher, workspace)
        with httpx.Client(base_url=again.url, timeout=10) as client:
            deadline = time.monotonic() + 30
            detail = client.get(f"/api/dream/passes/{pass_id}").json()
            while detail["status"] == "running" and time.monotonic() < deadline:
                time.sleep(0.1)
                detail = client.get(f"/api/dream/passes/{pass_id}").json()
        assert (detail["status"], detail["error"]) == ("failed", "interrupted")
        assert left == [], left  # it died with the daemon
        assert again.signal() == 0


def pass_processes() -> list[str]:
    """OpenCode processes of a pass: the npm launcher and the native binary it starts."""
    listed = subprocess.run(["ps", "-ww", "-eo", "pid=,args="], capture_output=True, text=True)
    return [
        line
        for line in listed.stdout.splitlines()
        if "opencode" in line and "--agent signet-dreaming" in line and "ps -ww" not in line
    ]
