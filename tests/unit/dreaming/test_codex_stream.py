"""Reading `codex exec --json` during a pass (`dreaming/harness_streams.py`), and the Codex
command line (`inference/harness_codex.py`). The real binary: tests/e2e/test_dream_codex.py."""

from __future__ import annotations

import itertools
import json
import tomllib
from pathlib import Path

from signet_desktop.dreaming.harness_streams import CodexStream
from signet_desktop.inference.harness_agent import HarnessAgent
from signet_desktop.inference.harness_codex import TOKEN_ENV, user_mcp_servers

SERVER = "signet-dreaming"


def folded(
    *events: dict[str, object], stderr: tuple[bytes, ...] = ()
) -> tuple[CodexStream, list[tuple[str, object]]]:
    refused: list[tuple[str, object]] = []
    stream = CodexStream(lambda name, args: refused.append((name, args)), SERVER)
    for event in events:
        stream.take(json.dumps(event).encode() + b"\n")
    for line in stderr:
        stream.take_stderr(line)
    return stream, refused


def tool_call(server: str, tool: str) -> dict[str, object]:
    item = {"type": "mcp_tool_call", "server": server, "tool": tool, "arguments": {"q": 1}}
    return {"type": "item.completed", "item": item}


def test_a_completed_turn_gives_the_summary_and_codex_s_own_token_counts() -> None:
    stream, refused = folded(
        {"type": "thread.started", "thread_id": "t"},
        {"type": "turn.started"},
        tool_call(SERVER, "search_evidence"),
        {"type": "item.completed", "item": {"type": "agent_message", "text": " Done. "}},
        {
            "type": "turn.completed",
            "usage": {
                "input_tokens": 1200,
                "cached_input_tokens": 200,
                "cache_write_input_tokens": 50,
                "output_tokens": 30,
                "reasoning_output_tokens": 12,
            },
        },
    )
    state = stream.state
    assert (state.finished, state.error, state.summary, state.turns) == (True, None, "Done.", 1)
    assert (state.usage.input_tokens, state.usage.output_tokens) == (1000, 42)
    assert (state.usage.cache_read, state.usage.cache_write) == (200, 50)
    assert state.usage.cost_usd is None  # Codex reports no cost
    assert refused == []


def test_a_failed_turn_is_the_pass_s_error_in_codex_s_words() -> None:
    stream, _ = folded(
        {"type": "error", "message": "stream disconnected; retrying 1/5"},
        {"type": "turn.failed", "error": {"message": "401 Unauthorized: run codex login"}},
    )
    assert stream.state.finished and stream.state.error == "401 Unauthorized: run codex login"


def test_an_error_retried_past_is_not_the_pass_s_error() -> None:
    stream, _ = folded(
        {"type": "error", "message": "Reconnecting... 1/5"},
        {"type": "turn.completed", "usage": {}},
    )
    assert stream.state.finished and stream.state.error is None


def test_an_error_with_no_end_is_kept_for_the_message() -> None:
    stream, _ = folded({"type": "error", "message": "Model provider `x` not found"})
    assert not stream.state.finished and stream.state.error == "Model provider `x` not found"


def test_tools_the_pass_never_gave_are_refused() -> None:
    stream, refused = folded(
        tool_call("my-notes", "read"),
        {"type": "item.completed", "item": {"type": "command_execution", "command": "ls"}},
        stderr=(
            b"2026-12-06T03:02:22Z ERROR codex_core::tools::router: error=unsupported call: "
            b"exec_command\n",
            b"WARNING: proceeding, even though we could not create PATH aliases\n",
        ),
    )
    assert refused == [
        ("my-notes:read", {"q": 1}),
        ("command_execution", "ls"),
        ("exec_command", None),
    ]
    assert stream.state.turns == 3


def test_garbage_lines_are_counted() -> None:
    stream = CodexStream(lambda name, args: None, SERVER)
    stream.take(b"Segmentation fault\n")
    stream.take(b"\n")
    assert stream.state.garbage_count == 1 and stream.state.garbage == ["Segmentation fault"]


def codex_home(tmp_path: Path, config: str) -> dict[str, str]:
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(config, encoding="utf-8")
    return {"HOME": str(home)}


def overrides(argv: list[str]) -> dict[str, object]:
    """Every `-c key=value` as Codex reads it (the value is TOML)."""
    found: dict[str, object] = {}
    for flag, value in itertools.pairwise(argv):
        if flag == "-c":
            key, _, raw = value.partition("=")
            found[key] = tomllib.loads(f"v = {raw}")["v"]
    return found


def test_the_codex_command_leaves_it_no_tool_but_the_pass_s(tmp_path: Path) -> None:
    env = codex_home(
        tmp_path,
        '[mcp_servers.signet]\ncommand = "signet"\n[mcp_servers."my notes"]\nurl = "http://n"\n',
    )
    agent = HarnessAgent(kind="codex", binary="/opt/codex", target="codex")
    prompt = 'You are Signet\'s Dreaming agent.\n"Quote" exactly; \\ not a path.\t—'
    launch = agent.launch(
        system_prompt=prompt, tools_url="http://x/mcp/dream", token="sdp_T", env=env
    )
    argv = launch.argv
    assert argv[:3] == ["/opt/codex", "exec", "--json"] and argv[-1] == "-"
    disabled = {argv[i + 1] for i, flag in enumerate(argv) if flag == "--disable"}
    assert {"shell_tool", "unified_exec", "view_image", "hooks", "apps", "plugins"} <= disabled
    assert "--ephemeral" in argv and argv[argv.index("--sandbox") + 1] == "read-only"
    values = overrides(argv)
    assert values["developer_instructions"] == prompt
    assert values["web_search"] == "disabled"
    assert values["mcp_servers.signet.enabled"] is False
    assert values['mcp_servers."my notes".enabled'] is False
    assert values["mcp_servers.signet-dreaming"] == {
        "url": "http://x/mcp/dream",
        "bearer_token_env_var": TOKEN_ENV,
        "required": True,
        "default_tools_approval_mode": "approve",
    }
    assert not any("sdp_T" in arg for arg in argv)  # the secret goes by environment
    added = launch.env
    assert added[TOKEN_ENV] == "sdp_T" and added["SIGNET_NO_HOOKS"] == "1"


def test_an_unreadable_codex_config_switches_nothing_off(tmp_path: Path) -> None:
    assert user_mcp_servers(codex_home(tmp_path, "this is = = not toml")) == []
    assert user_mcp_servers({"HOME": str(tmp_path / "nobody")}) == []
    assert user_mcp_servers({"CODEX_HOME": str(tmp_path / "home" / ".codex")}) == []
