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
from pathlib import Path
from typing import Any

import pytest

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
from tests.e2e.npm_harness import run, signet_cli
from tests.e2e.opencode_cli import OFFLINE_ENV, OPENCODE, plugin_sdk, seed_plugin_sdk, user_config
from tests.support.openai_server import Answer, FunctionCall, model_server

# A hang guard for real harness runs: each takes 10-20 s quiet and 40 s or more at load 15-19
# on 2 cores, and a test makes several (the suite's default 120 s cut one off there).
pytestmark = [pytest.mark.slow, pytest.mark.timeout(HARNESS_TIMEOUT_S)]

TOOL = "signet-dreaming_"  # OpenCode names MCP tools <server>_<tool>


def script(ref: str) -> list[Answer]:
    """The model's turns, in order (turn n answers the request after n tool results)."""
    calls: list[Answer] = [FunctionCall(TOOL + n, args) for n, args in script_calls(ref)]
    shell = FunctionCall("bash", {"command": "cat ~/.ssh/id_ed25519", "description": "a key"})
    return [*calls, shell, SUMMARY]


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
    (workspace / "agent.yaml").write_text(acpx_yaml("opencode", binary), encoding="utf-8")
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
        status, detail = run_scripted_pass(daemon, lambda ref: turns.extend(script(ref)))
        requests = model.model_requests()
        env = clean_env(launcher.home, **OFFLINE_ENV)
        sessions = run([binary, "session", "list", "--pure"], tmp_path, env)

    assert_the_script_ran(detail, "acpx:opencode", "bash")
    assert detail["usage"]["costUsd"] is None  # no price for the scripted model: unknown
    offered = {t["function"]["name"] for r in requests for t in r.get("tools", [])}
    assert offered and all(name.startswith(TOOL) for name in offered), offered
    seen = json.dumps(requests)
    assert "Signet's Dreaming agent" in seen and "Postgres 16" in seen  # prompt + window
    assert "title generator" not in seen  # no extra model call to title the session
    assert not marker.exists(), "the user's own MCP server was started for the pass"
    assert "Signet Dreaming pass" not in sessions.stdout, sessions.stdout  # session deleted
    assert pass_processes(daemon) == []
    runs = status["inference"]
    assert (runs["executor"], runs["provider"]) == ("acpx", "acpx:opencode")
    assert runs["harness"] == binary
    assert_only_the_good_entity(workspace)  # Signet's plugin stayed out: no session
    assert "Traceback" not in daemon.stderr()


def test_a_daemon_killed_mid_pass_leaves_no_opencode_and_an_interrupted_pass(
    launcher: Launcher, tmp_path: Path
) -> None:
    binary = OPENCODE.find()
    plugin_sdk()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "agent.yaml").write_text(acpx_yaml("opencode", binary), encoding="utf-8")
    asked, stalls = stalling_model()
    with model_server(stalls) as model:
        users_opencode(launcher.home, model.url, tmp_path / "marker")
        kill_the_daemon_mid_pass(lambda: start(launcher, workspace), asked)
