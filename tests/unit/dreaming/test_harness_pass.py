"""Harness passes (`executor: acpx`) with harnesses that misbehave: a stand-in `claude`
script that prints garbage, reports an error, hangs with a child, or is cancelled. The real
binary's happy path is tests/e2e/test_dream_harness.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from signet_desktop.config.models import DreamingConfig
from signet_desktop.domain.errors import Conflict, Unavailable
from signet_desktop.dreaming.harness_pass import kill_leftovers
from signet_desktop.dreaming.runner import PassLimits, PassRunner
from signet_desktop.dreaming.tool_sessions import PassEnded, ToolSession, ToolSessions
from signet_desktop.inference.errors import ProviderNotConfigured
from signet_desktop.inference.harness_agent import HarnessAgent, resolve_harness
from signet_desktop.inference.types import ChatProvider
from signet_desktop.service.dreaming.service import DreamingService
from signet_desktop.storage import dreaming_passes as passes
from signet_desktop.storage.database import Database
from tests.unit.dreaming.dream_fakes import RecordingSeam, add_memory


def fake_claude(tmp_path: Path, body: str) -> str:
    """An executable named `claude` running `body` (sh)."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    path = folder / "claude"
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(0o755)
    return str(path)


def service(
    db: Database, tmp_path: Path, agent: ChatProvider | None, timeout_s: float = 1_200.0
) -> DreamingService:
    settings = DreamingConfig(enabled=True)
    runner = PassRunner(
        db,
        config=settings,
        seam=lambda a, p: RecordingSeam("Lisbon"),
        workspace=tmp_path,
        limits=PassLimits(timeout_s=timeout_s),
    )

    def factory() -> ChatProvider:
        if agent is None:
            raise ProviderNotConfigured("set inference.workloads.memoryExtraction")
        return agent

    svc = DreamingService(db, settings, runner, provider=factory, load=lambda: 0.0)
    svc.serve_tools_at("http://127.0.0.1:9/mcp/dream")
    return svc


def run_pass(svc: DreamingService, db: Database) -> passes.DreamingPass:
    add_memory(db, "a", "m1", "Alice moved to Lisbon.")
    pass_id = svc.trigger("a")
    assert svc.wait(pass_id, 30)
    found = passes.get_pass(db.reader(), "a", pass_id)
    assert found is not None
    return found


def agent(binary: str) -> HarnessAgent:
    return HarnessAgent(kind="claude", binary=binary, target="claude-code")


def alive(marker: str) -> list[str]:
    listed = subprocess.run(["ps", "-eo", "args="], capture_output=True, text=True).stdout
    return [line for line in listed.splitlines() if marker in line and "ps -eo" not in line]


def test_garbage_output_fails_the_pass_and_says_what_came(db: Database, tmp_path: Path) -> None:
    binary = fake_claude(tmp_path, "echo 'Segmentation fault (core dumped)'; exit 139")
    done = run_pass(service(db, tmp_path, agent(binary)), db)
    assert done.status == "failed"
    assert done.error is not None
    assert "ended without a result (exit 139; 1 unreadable output lines)" in done.error
    assert "Segmentation fault" in done.error


def test_a_truncated_stream_fails_the_pass(db: Database, tmp_path: Path) -> None:
    init = json.dumps({"type": "system", "subtype": "init", "model": "m", "mcp_servers": []})
    binary = fake_claude(tmp_path, f'echo \'{init}\'; printf \'{{"type":"assistant","mess\'')
    done = run_pass(service(db, tmp_path, agent(binary)), db)
    assert done.status == "failed" and "ended without a result" in (done.error or "")


def test_a_harness_not_logged_in_fails_with_its_own_words(db: Database, tmp_path: Path) -> None:
    result = {
        "type": "result",
        "subtype": "success",
        "is_error": True,
        "result": "Invalid API key · Please run /login",
    }
    binary = fake_claude(tmp_path, f"cat >/dev/null; echo '{json.dumps(result)}'; exit 1")
    done = run_pass(service(db, tmp_path, agent(binary)), db)
    assert done.status == "failed"
    assert done.error == "Claude Code reported an error: Invalid API key · Please run /login"


def test_usage_and_cost_are_the_harness_s_own(db: Database, tmp_path: Path) -> None:
    result = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "result": "Nothing new worth keeping.",
        "total_cost_usd": 0.0123,
        "usage": {"input_tokens": 1200, "output_tokens": 80, "cache_read_input_tokens": 300},
    }
    init = {"type": "system", "subtype": "init", "model": "claude-sonnet-4-5",
            "mcp_servers": [{"name": "signet-dreaming", "status": "connected"}]}  # fmt: skip
    lines = "\n".join(json.dumps(e) for e in (init, result))
    binary = fake_claude(tmp_path, f"cat >/dev/null; cat <<'EOF'\n{lines}\nEOF")
    done = run_pass(service(db, tmp_path, agent(binary)), db)
    assert done.status == "completed" and done.summary == "Nothing new worth keeping."
    assert (done.usage.input_tokens, done.usage.output_tokens) == (1200, 80)
    assert done.usage.cache_read == 300 and done.usage.cost_usd == pytest.approx(0.0123)
    assert (done.provider, done.model) == ("acpx:claude", "claude-sonnet-4-5")


def test_without_a_reported_cost_the_cost_stays_unknown(db: Database, tmp_path: Path) -> None:
    result = {"type": "result", "subtype": "success", "is_error": False, "result": "ok"}
    binary = fake_claude(tmp_path, f"cat >/dev/null; echo '{json.dumps(result)}'")
    done = run_pass(service(db, tmp_path, agent(binary)), db)
    assert done.status == "completed" and done.usage.cost_usd is None


def test_a_hanging_harness_is_killed_with_its_children_at_the_deadline(
    db: Database, tmp_path: Path
) -> None:
    marker = f"{time.time_ns() % 10**9}"
    binary = fake_claude(tmp_path, f"sleep 3{marker} & sleep 4{marker}")
    started = time.monotonic()
    done = run_pass(service(db, tmp_path, agent(binary), timeout_s=1.5), db)
    assert done.status == "failed"
    assert (done.error or "").startswith("pass timeout: 1.5 s elapsed")
    assert time.monotonic() - started < 15
    assert alive(marker) == []  # the child `sleep` went with it (its process group)


def test_a_person_cancels_a_harness_pass(db: Database, tmp_path: Path) -> None:
    marker = f"{time.time_ns() % 10**9}"
    binary = fake_claude(tmp_path, f"sleep 5{marker}")
    svc = service(db, tmp_path, agent(binary))
    add_memory(db, "a", "m1", "Alice moved to Lisbon.")
    pass_id = svc.trigger("a")
    deadline = time.monotonic() + 10
    while not alive(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    svc.cancel_pass("a", pass_id)
    assert svc.wait(pass_id, 10)
    done = passes.get_pass(db.reader(), "a", pass_id)
    assert done is not None and done.status == "cancelled"
    assert done.summary == "cancelled: a person cancelled the pass"
    assert alive(marker) == []
    with pytest.raises(Conflict) as caught:
        svc.cancel_pass("a", pass_id)
    assert caught.value.code == "pass_not_running"


def test_no_tool_endpoint_means_a_clear_failure(db: Database, tmp_path: Path) -> None:
    svc = service(db, tmp_path, agent(fake_claude(tmp_path, "exit 0")))
    svc.serve_tools_at(None)  # type: ignore[arg-type]
    done = run_pass(svc, db)
    assert done.status == "failed" and "/mcp/dream" in (done.error or "")


def test_a_missing_harness_is_a_503_and_no_pass(db: Database, tmp_path: Path) -> None:
    def missing() -> ChatProvider:
        return resolve_harness("inference.targets.cc", {"agent": "claude"}, "cc", None, {
            "PATH": str(tmp_path), "HOME": str(tmp_path)})  # fmt: skip

    settings = DreamingConfig(enabled=True)
    runner = PassRunner(db, config=settings, seam=lambda a, p: RecordingSeam(""))
    svc = DreamingService(db, settings, runner, provider=missing)
    add_memory(db, "a", "m1", "Alice moved to Lisbon.")
    with pytest.raises(Unavailable) as caught:
        svc.trigger("a")
    assert caught.value.code == "inference_not_configured"
    assert "Claude Code ('claude') was not found on this machine" in caught.value.message
    assert passes.list_passes(db.reader(), "a") == []
    status = svc.status("a")
    assert not status.inference_configured and "was not found" in (status.inference_reason or "")


def test_gemini_and_unknown_agents_are_refused_by_name() -> None:
    with pytest.raises(ProviderNotConfigured, match="Gemini CLI does not run Dreaming passes"):
        resolve_harness("t", {"agent": "gemini"}, "t", None)
    with pytest.raises(ProviderNotConfigured, match=r"npm install -g @openai/codex"):
        resolve_harness("t", {"agent": "codex"}, "t", None, env={"PATH": "", "HOME": "/nowhere"})
    with pytest.raises(ProviderNotConfigured, match="'vim' is not a harness"):
        resolve_harness("t", {"agent": "vim"}, "t", None)
    with pytest.raises(ProviderNotConfigured, match=r"acpx\.agent: name the harness"):
        resolve_harness("t", None, "t", None)


def test_the_command_gives_the_harness_no_tool_but_the_pass_s() -> None:
    launch = agent("/opt/claude").launch(
        system_prompt="S", tools_url="http://x/mcp/dream", token="T", env={}
    )
    argv = launch.argv
    assert argv[argv.index("--tools") + 1] == ""
    assert "--strict-mcp-config" in argv and "--no-session-persistence" in argv
    assert json.loads(argv[argv.index("--settings") + 1]) == {"disableAllHooks": True}
    servers = json.loads(argv[argv.index("--mcp-config") + 1])["mcpServers"]
    assert servers == {"signet-dreaming": {"type": "http", "url": "http://x/mcp/dream",
                                           "headers": {"Authorization": "Bearer T"},
                                           "alwaysLoad": True}}  # fmt: skip
    # its tools are listed before the first turn, on a busy machine too
    assert launch.env["MCP_CONNECTION_NONBLOCKING"] == "0"
    assert int(launch.env["MCP_CONNECT_TIMEOUT_MS"]) >= 30_000


def test_a_session_secret_works_only_while_the_pass_runs() -> None:
    sessions = ToolSessions()
    recorded: list[str] = []
    tools = type("T", (), {"agent_id": "a", "pass_id": "p", "call": lambda self, c: None})()
    session = ToolSession(tools, lambda c, o, ms: recorded.append(c.name), max_calls=0)  # type: ignore[arg-type]
    token = sessions.open(session)
    assert sessions.get(token) is session
    outcome = session.call("search_evidence", {})
    assert outcome.status == "refused" and "0-tool-call bound" in (outcome.error or "")
    assert recorded == ["search_evidence"]
    sessions.close(token)
    with pytest.raises(PassEnded):
        sessions.get(token)
    with pytest.raises(PassEnded):
        sessions.get("sdp_guess")


def test_start_up_kills_a_harness_a_killed_daemon_left(tmp_path: Path) -> None:
    marker = f"{time.time_ns() % 10**9}"
    binary = fake_claude(tmp_path, f"sleep 6{marker}")
    child = subprocess.Popen([binary], start_new_session=True)
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    (pid_dir / f"{child.pid}.pid").write_text(json.dumps({"pid": child.pid, "binary": binary}))
    (pid_dir / "1.pid").write_text(json.dumps({"pid": 1, "binary": binary}))  # not a harness
    deadline = time.monotonic() + 5
    while not alive(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert kill_leftovers(pid_dir) == 1
    assert child.wait(5) == -signal.SIGKILL
    assert alive(marker) == [] and list(pid_dir.iterdir()) == []
    assert os.getpgid(os.getpid()) > 0  # we are alive: pid 1's group was never touched


def test_threads_left_by_cancel_do_not_leak(db: Database, tmp_path: Path) -> None:
    before = threading.active_count()
    result = {"type": "result", "subtype": "success", "is_error": False, "result": "ok"}
    binary = fake_claude(tmp_path, f"cat >/dev/null; echo '{json.dumps(result)}'")
    for n in range(3):
        svc = service(db, tmp_path, agent(binary))
        add_memory(db, "a", f"m{n + 2}", f"Alice moved to city {n}.")
        pass_id = svc.trigger("a")
        assert svc.wait(pass_id, 30)
    assert threading.active_count() <= before + 1


def test_start_up_kills_what_a_harness_started_after_its_first_process_died(
    tmp_path: Path,
) -> None:
    """Codex's npm launcher on Node 20 starts the native `codex` as a child: when the daemon
    is killed, the launcher dies with it and the native binary lives on in the group."""
    marker = f"{time.time_ns() % 10**9}"
    native = tmp_path / "native" / "codex"
    native.parent.mkdir()
    native.write_text(f"#!/bin/sh\nsleep 7{marker}\n", encoding="utf-8")
    native.chmod(0o755)
    launcher = tmp_path / "bin" / "codex"
    launcher.parent.mkdir()
    launcher.write_text(f"#!/bin/sh\n{native} &\nexit 0\n", encoding="utf-8")
    launcher.chmod(0o755)
    leader = subprocess.Popen([str(launcher)], start_new_session=True)
    assert leader.wait(5) == 0
    deadline = time.monotonic() + 5
    while not alive(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert alive(marker) != []
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    record = {"pid": leader.pid, "binary": str(launcher)}
    (pid_dir / f"{leader.pid}.pid").write_text(json.dumps(record))
    assert kill_leftovers(pid_dir) == 1
    deadline = time.monotonic() + 5
    while alive(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert alive(marker) == []
