"""What the real-harness Dreaming tests share: the scripted pass, what it must leave behind,
and the daemon killed while a harness thinks (tests/e2e/test_dream_*.py)."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.launcher import DaemonProcess

MEMORY = "The billing service runs on Postgres 16 and Dana owns its on-call rota."
SUMMARY = "Recorded the billing service's database and its on-call owner."
QUOTE = "billing service runs on Postgres 16"
FABRICATED = "billing service runs on Oracle 9"


def acpx_yaml(target: str, binary: str) -> str:
    """agent.yaml binding Dreaming to `binary` as the acpx target `target`."""
    return (
        "memory:\n  dreaming:\n    enabled: false\n"
        "inference:\n"
        "  targets:\n"
        f"    {target}:\n"
        "      executor: acpx\n"
        f"      acpx: {{agent: {binary}}}\n"
        "  workloads:\n"
        f"    memoryExtraction: {{target: {target}}}\n"
    )


def entity(name: str, quote: str, ref: str) -> dict[str, Any]:
    return {
        "operation": "create_entity",
        "payload": {"name": name, "type": "system"},
        "evidence": [{"quote": quote, "source_ref": ref}],
        "confidence": 0.9,
    }


def script_calls(ref: str) -> list[tuple[str, dict[str, Any]]]:
    """The scripted model's Dreaming tool calls, in order: a search, an exact quote, a
    fabricated one, a batch over the per-request cap, another agent's data."""
    over_cap = [entity(f"Service {n}", "billing service", ref) for n in range(101)]
    return [
        ("search_evidence", {"query": "billing"}),
        ("apply_ontology_ops", {"operations": [entity("Billing", QUOTE, ref)]}),
        ("apply_ontology_ops", {"operations": [entity("Oracle", FABRICATED, ref)]}),
        ("apply_ontology_ops", {"operations": over_cap}),
        ("search_evidence", {"query": "billing", "agentId": "intruder"}),
    ]


def assert_the_script_ran(detail: dict[str, Any], provider: str, shell_tool: str) -> None:
    """Every call recorded in order, only the good operation applied, usage reported."""
    assert detail["status"] == "completed", detail
    assert detail["summary"] == SUMMARY
    assert detail["provider"] == provider, detail
    calls = [(c["tool"], c["status"]) for c in detail["toolCalls"]]
    assert calls == [
        ("search_evidence", "ok"),
        ("apply_ontology_ops", "ok"),
        ("apply_ontology_ops", "ok"),  # answered, its operation refused (below)
        ("apply_ontology_ops", "error"),  # 101 operations: over the per-request cap
        ("search_evidence", "refused"),  # another agent's data
        (shell_tool, "refused"),  # the harness's shell, which the pass does not give it
    ], detail["toolCalls"]
    outcomes = [(op["payload"]["name"], op["status"], op["code"]) for op in detail["operations"]]
    assert outcomes == [("Billing", "applied", None), ("Oracle", "skipped", "quote_not_found")]
    assert "at most 100" in detail["toolCalls"][3]["error"]
    assert detail["mutations"]["applied"] == 1
    assert detail["usage"]["inputTokens"] > 0 and detail["usage"]["outputTokens"] > 0


def run_scripted_pass(
    daemon: DaemonProcess, script: Callable[[str], None]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Remember MEMORY, hand its source ref to `script` (which queues the model's turns), run
    one pass and wait for its end: (Dreaming status before the pass, the pass's detail)."""
    with httpx.Client(base_url=daemon.url, timeout=10) as client:
        saved = client.post("/api/memory/remember", json={"content": MEMORY}).json()
        script(f"memory:{saved['id']}")
        status: dict[str, Any] = client.get("/api/dream/status").json()
        started = client.post("/api/dream/trigger", json={"mode": "incremental"})
        assert started.status_code == 202, started.text
        return status, finished(client, started.json()["passId"])


def assert_only_the_good_entity(workspace: Path) -> None:
    """One entity written, and no hook session: the pass is not itself a session."""
    conn = sqlite3.connect(workspace / "memory" / "memories.db")
    try:
        names = [r[0] for r in conn.execute("SELECT name FROM entities")]
        sessions = conn.execute("SELECT COUNT(*) FROM hook_sessions").fetchone()[0]
    finally:
        conn.close()
    assert names == ["Billing"]
    assert sessions == 0


def finished(client: httpx.Client, pass_id: str, timeout: float = 120.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        detail: dict[str, Any] = client.get(f"/api/dream/passes/{pass_id}").json()
        if detail["status"] != "running":
            return detail
        time.sleep(0.2)
    raise AssertionError(f"pass {pass_id} still running after {timeout} s")


def pass_processes(daemon: DaemonProcess) -> list[str]:
    """The harness processes of `daemon`'s passes: those whose command line (Claude Code,
    Codex) or environment (OpenCode's config layer) holds its `/mcp/dream` address, so that
    harnesses other tests run meanwhile are not counted."""
    mark = f":{daemon.url.rsplit(':', 1)[1]}/mcp/dream".encode()
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (proc / "cmdline").read_bytes()
            environ = (proc / "environ").read_bytes()
        except OSError:
            continue
        if mark in cmdline or mark in environ:
            args = cmdline.replace(b"\0", b" ").decode(errors="replace")
            found.append(f"{proc.name} {args}")
    return found


def stalling_model() -> tuple[threading.Event, Callable[[dict[str, Any]], str]]:
    """A model that says when it is asked, then thinks for 20 s (while a daemon dies)."""
    asked = threading.Event()

    def stalls(body: dict[str, Any]) -> str:
        asked.set()
        time.sleep(20)
        return "too late"

    return asked, stalls


def kill_the_daemon_mid_pass(start: Callable[[], DaemonProcess], asked: threading.Event) -> None:
    """Start a pass, kill -9 the daemon while the (stalling) model thinks: no harness process
    may be left, and the restarted daemon's recovery ends the pass `failed: interrupted`."""
    daemon = start()
    with httpx.Client(base_url=daemon.url, timeout=10) as client:
        client.post("/api/memory/remember", json={"content": MEMORY})
        pass_id = client.post("/api/dream/trigger", json={}).json()["passId"]
    assert asked.wait(90), "the harness never asked the model"
    assert pass_processes(daemon) != []
    daemon.proc.kill()
    daemon.proc.wait(10)
    deadline = time.monotonic() + 10
    while pass_processes(daemon) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = pass_processes(daemon)
    again = start()
    with httpx.Client(base_url=again.url, timeout=10) as client:
        detail = _settled(client, pass_id)
    assert (detail["status"], detail["error"]) == ("failed", "interrupted")
    assert left == [], left  # it died with the daemon
    assert again.signal() == 0


def _settled(client: httpx.Client, pass_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    detail: dict[str, Any] = client.get(f"/api/dream/passes/{pass_id}").json()
    while detail["status"] == "running" and time.monotonic() < deadline:
        time.sleep(0.1)
        detail = client.get(f"/api/dream/passes/{pass_id}").json()
    return detail
