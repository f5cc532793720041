"""A Dreaming pass run by the real Codex CLI (`executor: acpx`, `acpx.agent: codex`), offline.

The daemon starts `codex exec --json` for the pass with the user's own Codex config (their
provider: a scripted OpenAI Responses API on loopback). The scripted model makes real tool
calls through Codex: a search, an operation quoting the window exactly, one with a fabricated
quote, one batch over the per-request cap, a call for another agent's data, and the shell
tool the pass switched off. The pass must record every call in order, apply only the good
operation, start none of the user's own MCP servers, and leave no process behind.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.codex_cli import API_KEY_ENV, CODEX, user_config
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
from tests.e2e.npm_harness import signet_cli
from tests.support.openai_server import Answer, FunctionCall, model_server

# A hang guard for real harness runs: each takes 10-20 s quiet and 40 s or more at load 15-19
# on 2 cores, and a test makes several (the suite's default 120 s cut one off there).
pytestmark = [pytest.mark.slow, pytest.mark.timeout(HARNESS_TIMEOUT_S)]

TOOLS = "mcp__signet_dreaming"  # Codex's namespace for the server `signet-dreaming`


def script(ref: str) -> list[Answer]:
    """The model's turns, in order (turn n answers the request after n tool results)."""
    calls: list[Answer] = [FunctionCall(n, args, TOOLS) for n, args in script_calls(ref)]
    shell = FunctionCall("exec_command", {"cmd": "cat ~/.ssh/id_ed25519"})  # switched off
    return [*calls, shell, SUMMARY]


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
    (workspace / "agent.yaml").write_text(acpx_yaml("codex", binary), encoding="utf-8")
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
        status, detail = run_scripted_pass(daemon, lambda ref: turns.extend(script(ref)))
        requests = model.model_requests()

    assert_the_script_ran(detail, "acpx:codex", "exec_command")
    assert detail["usage"]["costUsd"] is None  # Codex reports no cost: unknown, not invented
    offered = [t.get("name") for t in requests[0].get("tools", [])]
    assert "exec_command" not in offered and "shell" not in offered and "web_search" not in offered
    assert TOOLS in offered and "mcp__my_notes" not in offered
    seen = "\n".join(str(r) for r in requests)
    assert "Signet's Dreaming agent" in seen and "Postgres 16" in seen  # prompt + window
    assert not marker.exists(), "the user's own MCP server was started for the pass"
    assert pass_processes(daemon) == []
    runs = status["inference"]
    assert (runs["executor"], runs["provider"], runs["harness"]) == ("acpx", "acpx:codex", binary)
    assert_only_the_good_entity(workspace)  # the wrapper stayed out: the pass is no session
    assert "Traceback" not in daemon.stderr()


def test_a_daemon_killed_mid_pass_leaves_no_codex_and_an_interrupted_pass(
    launcher: Launcher, tmp_path: Path
) -> None:
    binary = CODEX.find()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "agent.yaml").write_text(acpx_yaml("codex", binary), encoding="utf-8")
    asked, stalls = stalling_model()
    with model_server(stalls) as model:
        users_codex(launcher.home, model.url, tmp_path / "marker")
        kill_the_daemon_mid_pass(lambda: start(launcher, workspace), asked)
