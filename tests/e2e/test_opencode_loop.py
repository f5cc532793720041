"""The memory loop with the real OpenCode, installed the way the README says.

A scripted OpenAI Chat Completions API on loopback stands in for the model and keeps every
request, so the assertions are on what OpenCode's model was actually shown. OpenCode runs
from a PATH without this project's virtualenv; Signet's plugin gives session 2 the context of
session 1 on its first message (session-start and prompt hooks) and sends each session to the
daemon when it goes idle.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.launcher import HARNESS_TIMEOUT_S, Launcher
from tests.e2e.npm_harness import signet_cli, start_daemon
from tests.e2e.opencode_cli import (
    OPENCODE,
    OpenCode,
    error_lines,
    mcp_rows,
    plugin_sdk,
    seed_plugin_sdk,
    user_config,
)
from tests.support.openai_server import ModelServer, model_server

# A hang guard for real harness runs: each takes 10-20 s quiet and 40 s or more at load 15-19
# on 2 cores, and a test makes several (the suite's default 120 s cut one off there).
pytestmark = pytest.mark.timeout(HARNESS_TIMEOUT_S)


FACT = "the billing service runs on Postgres 16 in eu-west-1"
SESSION_ONE = f"Please remember for later: {FACT}, and Dana owns its on-call rota."
SESSION_TWO = "Which database does the billing service use?"
PLUGIN_TIMEOUTS_S = 5 + 2  # the plugin's session-start and prompt request timeouts
HANG_BOUND_S = 180.0  # OpenCode waiting on a down daemon would wait far past any of those


@pytest.fixture
def model() -> Iterator[ModelServer]:
    with model_server() as server:
        yield server


def installed_opencode(launcher: Launcher, model: ModelServer, url: str) -> OpenCode:
    """The user's opencode.json, then `signet install opencode --url URL`, which keeps it."""
    config = launcher.home / ".config" / "opencode" / "opencode.json"
    seed_plugin_sdk(config.parent)
    mine = user_config(model.url)
    config.write_text(json.dumps(mine, indent=2) + "\n")
    installed = signet_cli(launcher.home, "install", "opencode", "--url", url)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    written = json.loads(config.read_text())
    assert {key: written[key] for key in mine} == mine
    return OpenCode(OPENCODE.find(), launcher.home)


def tool_names(body: dict[str, object]) -> list[str]:
    tools = body.get("tools")
    names = []
    for tool in tools if isinstance(tools, list) else []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict):
            names.append(str(function.get("name") or ""))
    return names


def test_what_session_one_says_reaches_session_two(
    launcher: Launcher, model: ModelServer, tmp_path: Path
) -> None:
    OPENCODE.find()  # skip (or fail in CI) before starting anything
    plugin_sdk()
    workspace, project = tmp_path / "workspace", tmp_path / "billing"
    project.mkdir()
    daemon = start_daemon(launcher, workspace)
    opencode = installed_opencode(launcher, model, daemon.url)

    first = opencode.prompt(project, SESSION_ONE)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "Noted."
    assert error_lines(first.stdout + first.stderr) == []

    start = len(model.requests)
    second = opencode.prompt(project, SESSION_TWO)
    assert second.returncode == 0, second.stderr
    assert error_lines(second.stdout + second.stderr) == []
    seen = model.seen_text(start)
    assert "Postgres 16" in seen, "session 2's model was not shown session 1's fact"
    assert "## Signet memory" in seen  # the plugin's session-start context
    [main] = [body for body in model.model_requests(start) if body.get("tools")]
    [asked] = [m for m in main["messages"] if m["role"] == "user"]
    assert "Postgres 16" in json.dumps(asked["content"])  # beside the question, in its turn

    # The MCP server started from the user's PATH and answered: its tools reached the model.
    assert "signet_memory_search" in tool_names(main), tool_names(main)
    listed = opencode.run(project, "mcp", "list")
    assert listed.returncode == 0, listed.stderr
    assert mcp_rows(listed.stdout).get("signet") == "✓ connected", listed.stdout
    assert error_lines(listed.stdout + listed.stderr) == []

    status = signet_cli(launcher.home, "install", "--status", "--url", daemon.url)
    assert status.returncode == 0, status.stdout + status.stderr
    opencode_status = status.stdout.split("opencode:", 1)[1]
    assert "MCP server signet: yes, starts" in opencode_status, status.stdout
    assert "Traceback" not in daemon.stderr()


def test_a_daemon_that_is_down_never_stops_opencode(
    launcher: Launcher, model: ModelServer, tmp_path: Path
) -> None:
    OPENCODE.find()
    plugin_sdk()
    workspace, project = tmp_path / "workspace", tmp_path / "app"
    project.mkdir()
    daemon = start_daemon(launcher, workspace)
    opencode = installed_opencode(launcher, model, daemon.url)
    assert daemon.signal() == 0

    run = opencode.prompt(project, "What is two plus two?")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "Noted."  # the model's answer, and nothing of ours
    assert error_lines(run.stdout + run.stderr) == []
    # A hang bound, not a speed: the plugin's calls end at their own timeouts (PLUGIN_TIMEOUTS_S
    # in all) and a refused connection at once, but at load 15 OpenCode's own run took 40 s.
    assert run.seconds < HANG_BOUND_S
    assert "## Signet memory" not in model.seen_text()
