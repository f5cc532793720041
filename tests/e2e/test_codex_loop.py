"""The memory loop with the real Codex CLI, installed the way the README says.

A scripted OpenAI Responses API on loopback stands in for the model and keeps every request,
so the assertions are on what Codex's model was actually shown. Codex runs from the user's
shell (its ~/.bashrc puts the installed `codex` wrapper first on PATH) without this project's
virtualenv; the wrapper gives session 2 the context of session 1 as `developer_instructions`
(beside Codex's own instructions) and hands each session's rollout file to Signet at exit.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.codex_cli import CODEX, Codex, error_lines, user_config
from tests.e2e.launcher import HARNESS_TIMEOUT_S, Launcher
from tests.e2e.npm_harness import (
    failed_open_at_once,
    hook_log_reasons,
    signet_cli,
    start_daemon,
)
from tests.support.openai_server import ModelServer, model_server

# A hang guard for real harness runs: each takes 10-20 s quiet and 40 s or more at load 15-19
# on 2 cores, and a test makes several (the suite's default 120 s cut one off there).
pytestmark = pytest.mark.timeout(HARNESS_TIMEOUT_S)


FACT = "the billing service runs on Postgres 16 in eu-west-1"
SESSION_ONE = f"Please remember for later: {FACT}, and Dana owns its on-call rota."
SESSION_TWO = "Which database does the billing service use?"
CODEX_BASE_INSTRUCTIONS = "You are a coding agent running in the Codex CLI"


@pytest.fixture
def model() -> Iterator[ModelServer]:
    with model_server() as server:
        yield server


def installed_codex(launcher: Launcher, model: ModelServer, url: str) -> Codex:
    """The user's config.toml, then `signet install codex --url URL`, which must keep it."""
    config = launcher.home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(user_config(model.url))
    installed = signet_cli(launcher.home, "install", "codex", "--url", url)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert config.read_text().startswith(user_config(model.url))
    return Codex(CODEX.find(), launcher.home)


def tool_names(body: dict[str, object]) -> list[str]:
    tools = body.get("tools")
    names = []
    for tool in tools if isinstance(tools, list) else []:
        if isinstance(tool, dict):
            names.append(str(tool.get("name") or ""))
    return names


def test_what_session_one_says_reaches_session_two(
    launcher: Launcher, model: ModelServer, tmp_path: Path
) -> None:
    CODEX.find()  # skip (or fail in CI) before starting anything
    workspace, project = tmp_path / "workspace", tmp_path / "billing"
    project.mkdir()
    daemon = start_daemon(launcher, workspace)
    codex = installed_codex(launcher, model, daemon.url)

    first = codex.exec(project, SESSION_ONE)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "Noted."
    assert error_lines(first.stdout + first.stderr) == []

    start = len(model.requests)
    # Codex starts MCP servers in the background and lets a turn go out before an optional
    # one is ready; `required` makes it wait for ours (and fail if it cannot initialize).
    second = codex.exec(project, SESSION_TWO, "-c", "mcp_servers.signet.required=true")
    assert second.returncode == 0, second.stderr
    assert error_lines(second.stdout + second.stderr) == []
    seen = model.seen_text(start)
    assert "Postgres 16" in seen, "session 2's model was not shown session 1's fact"
    assert "## Signet memory" in seen  # the wrapper's session-start context
    # ... added to Codex's own instructions, not put in their place.
    assert CODEX_BASE_INSTRUCTIONS in seen, "the context replaced Codex's base instructions"

    # The MCP server started from the user's PATH and answered: its tools reached the model.
    [body, *_] = model.model_requests(start)
    assert "mcp__signet" in tool_names(body), tool_names(body)

    status = signet_cli(launcher.home, "install", "--status", "--url", daemon.url)
    assert status.returncode == 0, status.stdout + status.stderr
    codex_status = status.stdout.split("codex:", 1)[1].split("opencode:", 1)[0]
    assert "MCP server signet: yes, starts" in codex_status, status.stdout
    assert "hook command: ok" in codex_status, status.stdout
    # The wrapper keeps `signet hook`'s stderr from Codex's screen; its log holds any failure.
    hooks_log = launcher.home / ".agents" / ".daemon" / "logs" / "hooks.log"
    assert not hooks_log.exists() or hooks_log.read_text() == ""
    assert "Traceback" not in daemon.stderr()


def test_a_daemon_that_is_down_never_stops_codex(
    launcher: Launcher, model: ModelServer, tmp_path: Path
) -> None:
    CODEX.find()
    workspace, project = tmp_path / "workspace", tmp_path / "app"
    project.mkdir()
    daemon = start_daemon(launcher, workspace)
    codex = installed_codex(launcher, model, daemon.url)
    assert daemon.signal() == 0

    run = codex.exec(project, "What is two plus two?")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "Noted."  # the model's answer, and nothing of ours
    assert error_lines(run.stdout + run.stderr) == []
    # `signet hook` failed open at once on the refused connection (from what it logged).
    assert failed_open_at_once(launcher.home), hook_log_reasons(launcher.home)
    assert "## Signet memory" not in model.seen_text()
