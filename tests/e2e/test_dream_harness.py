"""A Dreaming pass run by the real Claude Code binary (`executor: acpx`), offline.

The daemon starts `claude -p` for the pass; a scripted Anthropic Messages server on loopback
stands in for the model and makes real tool calls through Claude Code: a search, an operation
quoting the window exactly, one with a fabricated quote, one batch over the per-request cap,
a call for another agent's data, and a built-in tool the pass never gave it. The pass must
record every call in order, apply only the good operation, and leave no process behind.
"""

from __future__ import annotations

import sqlite3
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.claude_code import OFFLINE_ENV, claude_binary
from tests.e2e.launcher import DaemonProcess, Launcher, args_for, clean_env
from tests.e2e.test_claude_code_loop import signet_cli
from tests.support.anthropic_server import ToolUse, model_server

pytestmark = pytest.mark.slow

MEMORY = "The billing service runs on Postgres 16 and Dana owns its on-call rota."
TOOL = "mcp__signet-dreaming__"
SUMMARY = "Recorded the billing service's database and its on-call owner."


def harness_yaml(binary: str) -> str:
    return (
        "memory:\n  dreaming:\n    enabled: false\n"
        "inference:\n"
        "  targets:\n"
        "    claude-code:\n"
        "      executor: acpx\n"
        f"      acpx: {{agent: {binary}}}\n"
        "  workloads:\n"
        "    memoryExtraction: {target: claude-code}\n"
    )


def entity(name: str, quote: str, ref: str) -> dict[str, Any]:
    return {
        "operation": "create_entity",
        "payload": {"name": name, "type": "system"},
        "evidence": [{"quote": quote, "source_ref": ref}],
        "confidence": 0.9,
    }


def script(ref: str) -> list[ToolUse | str]:
    """The model's turns, in order (turn n answers the n-th request of the pass)."""
    over_cap = [entity(f"Service {n}", "billing service", ref) for n in range(101)]
    return [
        ToolUse(TOOL + "search_evidence", {"query": "billing"}),
        ToolUse(
            TOOL + "apply_ontology_ops",
            {"operations": [entity("Billing", "billing service runs on Postgres 16", ref)]},
        ),
        ToolUse(
            TOOL + "apply_ontology_ops",
            {"operations": [entity("Oracle", "billing service runs on Oracle 9", ref)]},
        ),
        ToolUse(TOOL + "apply_ontology_ops", {"operations": over_cap}),
        ToolUse(TOOL + "search_evidence", {"query": "billing", "agentId": "intruder"}),
        ToolUse("Bash", {"command": "cat ~/.ssh/id_ed25519"}),
        SUMMARY,
    ]


def scripted(turns: list[ToolUse | str]) -> Callable[[dict[str, Any]], ToolUse | str]:
    def reply(body: dict[str, Any]) -> ToolUse | str:
        step = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        return turns[min(step, len(turns) - 1)]

    return reply


def start(launcher: Launcher, workspace: Path, model_url: str) -> DaemonProcess:
    env = clean_env(launcher.home, ANTHROPIC_BASE_URL=model_url, **OFFLINE_ENV)
    daemon = launcher.start(*args_for(workspace), env=env)
    daemon.wait_listening()
    return daemon


def finished(client: httpx.Client, pass_id: str, timeout: float = 120.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        detail: dict[str, Any] = client.get(f"/api/dream/passes/{pass_id}").json()
        if detail["status"] != "running":
            return detail
        time.sleep(0.2)
    raise AssertionError(f"pass {pass_id} still running after {timeout} s")


def harness_processes(binary: str) -> list[str]:
    """Running processes whose command line names the harness binary."""
    listed = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True)
    return [line for line in listed.stdout.splitlines() if binary in line and "ps -eo" not in line]


def test_a_pass_through_real_claude_code_records_every_call_and_applies_only_the_good_one(
    launcher: Launcher, tmp_path: Path
) -> None:
    binary = claude_binary()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "agent.yaml").write_text(harness_yaml(binary), encoding="utf-8")
    turns: list[ToolUse | str] = []
    with model_server(scripted(turns)) as model:
        daemon = start(launcher, workspace, model.url)
        # The user's hooks are installed: the pass's own session must not reach them.
        assert (
            signet_cli(launcher.home, "install", "claude-code", "--url", daemon.url).returncode == 0
        )
        with httpx.Client(base_url=daemon.url, timeout=10) as client:
            saved = client.post("/api/memory/remember", json={"content": MEMORY}).json()
            turns.extend(script(f"memory:{saved['id']}"))
            status = client.get("/api/dream/status").json()
            started = client.post("/api/dream/trigger", json={"mode": "incremental"})
            assert started.status_code == 202, started.text
            detail = finished(client, started.json()["passId"])
            late = client.post(
                "/mcp/dream", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
            )
        seen = model.seen_text()

    assert detail["status"] == "completed", detail
    assert detail["summary"] == SUMMARY
    assert detail["provider"] == "acpx:claude" and detail["model"], detail  # as Claude Code ran
    calls = [(c["tool"], c["status"]) for c in detail["toolCalls"]]
    assert calls == [
        ("search_evidence", "ok"),
        ("apply_ontology_ops", "ok"),
        ("apply_ontology_ops", "ok"),  # answered, its operation refused (below)
        ("apply_ontology_ops", "error"),  # 101 operations: over the per-request cap
        ("search_evidence", "refused"),  # another agent's data
        ("Bash", "refused"),  # a tool the pass never gave the harness
    ], detail["toolCalls"]
    outcomes = [(op["payload"]["name"], op["status"], op["code"]) for op in detail["operations"]]
    assert outcomes == [("Billing", "applied", None), ("Oracle", "skipped", "quote_not_found")]
    assert "at most 100" in detail["toolCalls"][3]["error"]
    assert detail["mutations"]["applied"] == 1
    assert detail["usage"]["inputTokens"] > 0 and detail["usage"]["outputTokens"] > 0
    assert "Signet's Dreaming agent" in seen and "Postgres 16" in seen  # prompt + window
    assert late.status_code == 401 and late.json()["code"] == "pass_ended"
    assert harness_processes(binary) == []
    runs = status["inference"]
    assert (runs["executor"], runs["provider"], runs["harness"]) == ("acpx", "acpx:claude", binary)

    conn = sqlite3.connect(workspace / "memory" / "memories.db")
    try:
        names = [r[0] for r in conn.execute("SELECT name FROM entities")]
        sessions = conn.execute("SELECT COUNT(*) FROM hook_sessions").fetchone()[0]
    finally:
        conn.close()
    assert names == ["Billing"]
    assert sessions == 0  # hooks off in the pass: it is no session to remember
    assert "Traceback" not in daemon.stderr()


def test_a_daemon_killed_mid_pass_leaves_no_harness_and_an_interrupted_pass(
    launcher: Launcher, tmp_path: Path
) -> None:
    binary = claude_binary()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "agent.yaml").write_text(harness_yaml(binary), encoding="utf-8")
    asked = threading.Event()

    def stalls(body: dict[str, Any]) -> ToolUse | str:
        asked.set()
        time.sleep(20)  # the model "thinks" while the daemon dies
        return "too late"

    with model_server(stalls) as model:
        daemon = start(launcher, workspace, model.url)
        with httpx.Client(base_url=daemon.url, timeout=10) as client:
            client.post("/api/memory/remember", json={"content": MEMORY})
            pass_id = client.post("/api/dream/trigger", json={}).json()["passId"]
        assert asked.wait(60), "Claude Code never asked the model"
        assert harness_processes(binary) != []
        daemon.proc.kill()
        daemon.proc.wait(10)
        deadline = time.monotonic() + 10
        while harness_processes(binary) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert harness_processes(binary) == []  # it died with the daemon
        again = start(launcher, workspace, model.url)
        with httpx.Client(base_url=again.url, timeout=10) as client:
            deadline = time.monotonic() + 30
            detail = client.get(f"/api/dream/passes/{pass_id}").json()
            while detail["status"] == "running" and time.monotonic() < deadline:
                time.sleep(0.1)
                detail = client.get(f"/api/dream/passes/{pass_id}").json()
        assert (detail["status"], detail["error"]) == ("failed", "interrupted")
        assert again.signal() == 0
