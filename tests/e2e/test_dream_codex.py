"""A Dreaming pass run by the real Codex CLI (`executor: acpx`, `acpx.agent: codex`), offline.

The daemon starts `codex exec --json` for the pass with the user's own Codex config (their
provider: a scripted OpenAI Responses API on loopback). The scripted model makes real tool
calls through Codex: a search, an operation quoting the window exactly, one with a fabricated
quote, one batch over the per-request cap, a call for another agent's data, and the shell
tool the pass switched off. The pass must record every call in order, apply only the good
operation, start none of the user's own MCP servers, and leave no process behind.
"""

from __future__ import annotations

import sqlite3
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.codex_cli import API_KEY_ENV, CODEX, user_config
from tests.e2e.launcher import DaemonProcess, Launcher, args_for, clean_env
from tests.e2e.npm_harness import signet_cli
from tests.e2e.test_dream_harness import MEMORY, SUMMARY, entity, finished, harness_processes
from tests.support.openai_server import Answer, FunctionCall, model_server

pytestmark = pytest.mark.slow

TOOLS = "mcp__signet_dreaming"  # Codex's namespace for the server `signet-dreaming`


def codex_yaml(binary: str) -> str:
    return (
        "memory:\n  dreaming:\n    enabled: false\n"
        "inference:\n"
        "  targets:\n"
        "    codex:\n"
        "      executor: acpx\n"
        f"      acpx: {{agent: {binary}}}\n"
        "  workloads:\n"
        "    memoryExtraction: {target: codex}\n"
    )


def script(ref: str) -> list[Answer]:
    """The model's turns, in order (turn n answers the request after n tool results)."""
    over_cap = [entity(f"Service {n}", "billing service", ref) for n in range(101)]
    return [
        FunctionCall("search_evidence", {"query": "billing"}, TOOLS),
        FunctionCall(
            "apply_ontology_ops",
            {"operations": [entity("Billing", "billing service runs on Postgres 16", ref)]},
            TOOLS,
        ),
        FunctionCall(
            "apply_ontology_ops",
            {"operations": [entity("Oracle", "billing service runs on Oracle 9", ref)]},
            TOOLS,
        ),
        FunctionCall("apply_ontology_ops", {"operations": over_cap}, TOOLS),
        FunctionCall("search_evidence", {"query": "billing", "agentId": "intruder"}, TOOLS),
        FunctionCall("exec_command", {"cmd": "cat ~/.ssh/id_ed25519"}),  # switched off
        SUMMARY,
    ]


def users_codex(home: Path, model_url: str, marker: Path) -> None:
    """The user's config.toml: their provider, plus an MCP server of their own that would
    leave `marker` behind if Codex started it during the pass."""
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        user_config(model_url)
        + "\n[mcp_servers.my-notes]\n"
        + 'command = "/bin/sh"\n'
        + f'args = ["-c", "touch {marker}"]\n',
        encoding="utf-8",
    )


def start(launcher: Launcher, workspace: Path) -> DaemonProcess:
    env = clean_env(launcher.home, **{API_KEY_ENV: "sk-test-dummy"})
    daemon = launcher.start(*args_for(workspace), env=env)
    daemon.wait_listening()
    return daemon


def test_a_pass_through_real_codex_records_every_call_and_applies_only_the_good_one(
    launcher: Launcher, tmp_path: Path
) -> None:
    binary = CODEX.find()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "agent.yaml").write_text(codex_yaml(binary), encoding="utf-8")
    marker = tmp_path / "users-own-server-started"
    turns: list[Answer] = []

    def reply(body: dict[str, Any]) -> Answer:
        done = sum(1 for i in body.get("input", []) if i.get("type") == "function_call_output")
        return turns[min(done, len(turns) - 1)]

    with model_server(reply) as model:
        users_codex(launcher.home, model.url, marker)
        daemon = start(launcher, workspace)
        # Signet's codex wrapper is installed too: the pass must not run through it.
        installed = signet_cli(launcher.home, "install", "codex", "--url", daemon.url)
        assert installed.returncode == 0, installed.stderr
        with httpx.Client(base_url=daemon.url, timeout=10) as client:
            saved = client.post("/api/memory/remember", json={"content": MEMORY}).json()
            turns.extend(script(f"memory:{saved['id']}"))
            status = client.get("/api/dream/status").json()
            started = client.post("/api/dream/trigger", json={"mode": "incremental"})
            assert started.status_code == 202, started.text
            detail = finished(client, started.json()["passId"])
        requests = model.model_requests()

    assert detail["status"] == "completed", detail
    assert detail["summary"] == SUMMARY
    assert detail["provider"] == "acpx:codex", detail
    calls = [(c["tool"], c["status"]) for c in detail["toolCalls"]]
    assert calls == [
        ("search_evidence", "ok"),
        ("apply_ontology_ops", "ok"),
        ("apply_ontology_ops", "ok"),  # answered, its operation refused (below)
        ("apply_ontology_ops", "error"),  # 101 operations: over the per-request cap
        ("search_evidence", "refused"),  # another agent's data
        ("exec_command", "refused"),  # the shell, which the pass switched off
    ], detail["toolCalls"]
    outcomes = [(op["payload"]["name"], op["status"], op["code"]) for op in detail["operations"]]
    assert outcomes == [("Billing", "applied", None), ("Oracle", "skipped", "quote_not_found")]
    assert detail["mutations"]["applied"] == 1
    assert detail["usage"]["inputTokens"] > 0 and detail["usage"]["outputTokens"] > 0
    assert detail["usage"]["costUsd"] is None  # Codex reports no cost: unknown, not invented

    first = requests[0]
    offered = [t.get("name") for t in first.get("tools", [])]
    assert "exec_command" not in offered and "shell" not in offered and "web_search" not in offered
    assert TOOLS in offered and "mcp__my_notes" not in offered
    seen = "\n".join(str(r) for r in requests)
    assert "Signet's Dreaming agent" in seen and "Postgres 16" in seen  # prompt + window
    assert not marker.exists(), "the user's own MCP server was started for the pass"
    assert harness_processes(binary) == []
    runs = status["inference"]
    assert (runs["executor"], runs["provider"], runs["harness"]) == ("acpx", "acpx:codex", binary)

    conn = sqlite3.connect(workspace / "memory" / "memories.db")
    try:
        names = [r[0] for r in conn.execute("SELECT name FROM entities")]
        hook_sessions = conn.execute("SELECT COUNT(*) FROM hook_sessions").fetchone()[0]
    finally:
        conn.close()
    assert names == ["Billing"]
    assert hook_sessions == 0  # the wrapper stayed out: the pass is no session
    assert "Traceback" not in daemon.stderr()


def test_a_daemon_killed_mid_pass_leaves_no_codex_and_an_interrupted_pass(
    launcher: Launcher, tmp_path: Path
) -> None:
    binary = CODEX.find()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "agent.yaml").write_text(codex_yaml(binary), encoding="utf-8")
    asked = threading.Event()

    def stalls(body: dict[str, Any]) -> Answer:
        asked.set()
        time.sleep(20)  # the model "thinks" while the daemon dies
        return "too late"

    with model_server(stalls) as model:
        users_codex(launcher.home, model.url, tmp_path / "marker")
        daemon = start(launcher, workspace)
        with httpx.Client(base_url=daemon.url, timeout=10) as client:
            client.post("/api/memory/remember", json={"content": MEMORY})
            pass_id = client.post("/api/dream/trigger", json={}).json()["passId"]
        assert asked.wait(60), "Codex never asked the model"
        assert codex_processes() != []
        daemon.proc.kill()
        daemon.proc.wait(10)
        deadline = time.monotonic() + 10
        while codex_processes() and time.monotonic() < deadline:
            time.sleep(0.1)
        left = codex_processes()
        again = start(launcher, workspace)
        with httpx.Client(base_url=again.url, timeout=10) as client:
            deadline = time.monotonic() + 30
            detail = client.get(f"/api/dream/passes/{pass_id}").json()
            while detail["status"] == "running" and time.monotonic() < deadline:
                time.sleep(0.1)
                detail = client.get(f"/api/dream/passes/{pass_id}").json()
        assert (detail["status"], detail["error"]) == ("failed", "interrupted")
        assert left == [], left  # it died with the daemon
        assert codex_processes() == []
        assert again.signal() == 0


def codex_processes() -> list[str]:
    """Codex processes of a pass: the npm launcher and the native binary it starts."""
    listed = subprocess.run(["ps", "-ww", "-eo", "pid=,args="], capture_output=True, text=True)
    return [
        line
        for line in listed.stdout.splitlines()
        if "codex" in line and " exec --json" in line and "ps -eo" not in line
    ]
