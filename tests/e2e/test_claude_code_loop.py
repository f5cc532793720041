"""The memory loop with the real Claude Code binary, installed the way the README says.

A scripted Anthropic Messages server on loopback stands in for the model and keeps every
request, so the assertions are on what Claude Code's model was actually shown. Claude Code
runs from a PATH without this project's virtualenv, as it would from the user's shell.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.claude_code import ClaudeCode, claude_binary, hook_error_lines
from tests.e2e.launcher import HARNESS_TIMEOUT_S, DaemonProcess, Launcher, args_for, clean_env
from tests.e2e.npm_harness import failed_open_at_once, hook_log_reasons
from tests.support.anthropic_server import ModelServer, model_server

# A hang guard for real harness runs: each takes 10-20 s quiet and 40 s or more at load 15-19
# on 2 cores, and a test makes several (the suite's default 120 s cut one off there).
pytestmark = pytest.mark.timeout(HARNESS_TIMEOUT_S)


FACT = "the billing service runs on Postgres 16 in eu-west-1"
SESSION_ONE = f"Please remember for later: {FACT}, and Dana owns its on-call rota."
SESSION_TWO = "Which database does the billing service use?"


@pytest.fixture
def model() -> Iterator[ModelServer]:
    with model_server() as server:
        yield server


def signet_cli(home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """`signet ...` as `uv run signet` runs it: this environment's script, its PATH."""
    script = Path(sys.executable).with_name("signet")
    env = clean_env(home, PATH=f"{Path(sys.executable).parent}:/usr/bin:/bin")
    return subprocess.run(
        [str(script), *argv], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def start_daemon(launcher: Launcher, workspace: Path) -> DaemonProcess:
    daemon = launcher.start(*args_for(workspace), env=clean_env(launcher.home))
    daemon.wait_listening()
    return daemon


def texts_after(model: ModelServer, start: int) -> str:
    """Everything the model was shown in the message requests from index `start` on."""
    bodies = [r["body"] for r in model.requests[start:] if r["path"].startswith("/v1/messages")]
    return "\n".join(json.dumps(body, ensure_ascii=False) for body in bodies)


def test_what_session_one_says_reaches_session_two(
    launcher: Launcher, model: ModelServer, tmp_path: Path
) -> None:
    binary = claude_binary()
    workspace, project = tmp_path / "workspace", tmp_path / "billing"
    project.mkdir()
    daemon = start_daemon(launcher, workspace)
    installed = signet_cli(launcher.home, "install", "claude-code", "--url", daemon.url)
    assert installed.returncode == 0, installed.stderr
    claude = ClaudeCode(binary, launcher.home, model.url)

    first = claude.prompt(project, SESSION_ONE)
    assert first.returncode == 0, first.stderr
    assert hook_error_lines(first.stdout + first.stderr) == []

    start = len(model.requests)
    second = claude.prompt(project, SESSION_TWO)
    assert second.returncode == 0, second.stderr
    assert hook_error_lines(second.stdout + second.stderr) == []
    seen = texts_after(model, start)
    assert "Postgres 16" in seen, "session 2's model was not shown session 1's fact"
    assert "## Signet memory" in seen  # the SessionStart command hook's context

    listed = claude.run(project, "mcp", "list")
    assert listed.returncode == 0, listed.stderr
    [line] = [row for row in listed.stdout.splitlines() if row.startswith("signet")]
    assert "Connected" in line, listed.stdout
    assert hook_error_lines(listed.stdout + listed.stderr) == []

    status = signet_cli(launcher.home, "install", "--status", "--url", daemon.url)
    assert status.returncode == 0, status.stdout + status.stderr
    assert "MCP server signet: yes, starts" in status.stdout
    assert "Traceback" not in daemon.stderr()


def test_a_daemon_that_is_down_never_stops_claude_code(
    launcher: Launcher, model: ModelServer, tmp_path: Path
) -> None:
    binary = claude_binary()
    workspace, project = tmp_path / "workspace", tmp_path / "app"
    project.mkdir()
    daemon = start_daemon(launcher, workspace)
    installed = signet_cli(launcher.home, "install", "claude-code", "--url", daemon.url)
    assert installed.returncode == 0, installed.stderr
    assert daemon.signal() == 0
    claude = ClaudeCode(binary, launcher.home, model.url)

    run = claude.prompt(project, "What is two plus two?")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "Noted."  # the model's answer, and nothing of ours
    assert hook_error_lines(run.stdout + run.stderr) == []
    # Each hook failed open at once on the refused connection (read from what each logged,
    # not from the wall clock: at load 13 the whole run took 17 s with every hook prompt).
    assert failed_open_at_once(launcher.home), hook_log_reasons(launcher.home)
