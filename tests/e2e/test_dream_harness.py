"""A Dreaming pass run by the real Claude Code binary (`executor: acpx`), offline.

The daemon starts `claude -p` for the pass; a scripted Anthropic Messages server on loopback
stands in for the model and makes real tool calls through Claude Code: a search, an operation
quoting the window exactly, one with a fabricated quote, one batch over the per-request cap,
a call for another agent's data, and a built-in tool the pass never gave it. The pass must
record every call in order, apply only the good operation, and leave no process behind.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.claude_code import OFFLINE_ENV, claude_binary
from tests.e2e.dream_passes import (
    SUMMARY,
    acpx_yaml,
    assert_only_the_good_entity,
    assert_the_script_ran,
    kill_the_daemon_mid_pass,
    pass_processes,
    run_scripted_pass,
    script_calls,
    stalling_model,
)
from tests.e2e.launcher import HARNESS_TIMEOUT_S, DaemonProcess, Launcher, args_for, clean_env
from tests.e2e.test_claude_code_loop import signet_cli
from tests.support.anthropic_server import ToolUse, model_server

# A hang guard for real harness runs: each takes 10-20 s quiet and 40 s or more at load 15-19
# on 2 cores, and a test makes several (the suite's default 120 s cut one off there).
pytestmark = [pytest.mark.slow, pytest.mark.timeout(HARNESS_TIMEOUT_S)]

TOOL = "mcp__signet-dreaming__"


def script(ref: str) -> list[ToolUse | str]:
    """The model's turns, in order (turn n answers the n-th request of the pass)."""
    calls: list[ToolUse | str] = [ToolUse(TOOL + name, args) for name, args in script_calls(ref)]
    return [*calls, ToolUse("Bash", {"command": "cat ~/.ssh/id_ed25519"}), SUMMARY]


def scripted(turns: list[ToolUse | str]) -> Any:
    def reply(body: dict[str, Any]) -> ToolUse | str:
        step = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        return turns[min(step, len(turns) - 1)]

    return reply


def start(launcher: Launcher, workspace: Path, model_url: str) -> DaemonProcess:
    env = clean_env(launcher.home, ANTHROPIC_BASE_URL=model_url, **OFFLINE_ENV)
    daemon = launcher.start(*args_for(workspace), env=env)
    daemon.wait_listening()
    return daemon


def test_a_pass_through_real_claude_code_records_every_call_and_applies_only_the_good_one(
    launcher: Launcher, tmp_path: Path
) -> None:
    binary = claude_binary()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "agent.yaml").write_text(acpx_yaml("claude-code", binary), encoding="utf-8")
    turns: list[ToolUse | str] = []
    with model_server(scripted(turns)) as model:
        daemon = start(launcher, workspace, model.url)
        # The user's hooks are installed: the pass's own session must not reach them.
        assert (
            signet_cli(launcher.home, "install", "claude-code", "--url", daemon.url).returncode == 0
        )
        status, detail = run_scripted_pass(daemon, lambda ref: turns.extend(script(ref)))
        late = httpx.post(
            f"{daemon.url}/mcp/dream", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        )
        seen = model.seen_text()

    print(daemon.stderr())  # shown when an assertion below fails
    assert_the_script_ran(detail, "acpx:claude", "Bash")
    assert detail["model"]  # as Claude Code ran it
    assert "Signet's Dreaming agent" in seen and "Postgres 16" in seen  # prompt + window
    assert late.status_code == 401 and late.json()["code"] == "pass_ended"
    assert pass_processes(daemon) == []
    runs = status["inference"]
    assert (runs["executor"], runs["provider"], runs["harness"]) == ("acpx", "acpx:claude", binary)

    assert_only_the_good_entity(workspace)  # hooks off in the pass: it is no session
    assert "Traceback" not in daemon.stderr()


def test_a_daemon_killed_mid_pass_leaves_no_harness_and_an_interrupted_pass(
    launcher: Launcher, tmp_path: Path
) -> None:
    binary = claude_binary()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "agent.yaml").write_text(acpx_yaml("claude-code", binary), encoding="utf-8")
    asked, stalls = stalling_model()
    with model_server(stalls) as model:
        kill_the_daemon_mid_pass(lambda: start(launcher, workspace, model.url), asked)
