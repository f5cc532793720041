"""Reading `opencode run --format json` during a pass (`dreaming/harness_streams.py`), and
OpenCode's launch (`inference/harness_opencode.py`). The real binary:
tests/e2e/test_dream_opencode.py."""

from __future__ import annotations

import json
from pathlib import Path

from signet_desktop.dreaming.harness_streams import OpenCodeStream
from signet_desktop.inference.harness_agent import HarnessAgent
from signet_desktop.inference.harness_opencode import CONFIG_ENV, user_mcp_servers

SERVER = "signet-dreaming"


def folded(*events: dict[str, object]) -> tuple[OpenCodeStream, list[tuple[str, object]]]:
    refused: list[tuple[str, object]] = []
    stream = OpenCodeStream(lambda name, args: refused.append((name, args)), SERVER)
    for event in events:
        stream.take(json.dumps({"sessionID": "ses_1", **event}).encode() + b"\n")
    return stream, refused


def step(reason: str, cost: float, **tokens: int) -> dict[str, object]:
    counts = {"input": tokens.get("i", 0), "output": tokens.get("o", 0), "reasoning": 0}
    counts["cache"] = {"read": tokens.get("r", 0), "write": 0}  # type: ignore[assignment]
    return {"type": "step_finish", "part": {"reason": reason, "tokens": counts, "cost": cost}}


def tool(name: str, status: str = "completed") -> dict[str, object]:
    part = {"type": "tool", "tool": name, "state": {"status": status, "input": {"q": 1}}}
    return {"type": "tool_use", "part": part}


def test_steps_are_summed_and_the_last_text_is_the_summary() -> None:
    stream, refused = folded(
        {"type": "step_start", "part": {}},
        tool(SERVER + "_search_evidence"),
        step("tool-calls", 0.002, i=1000, o=20, r=300),
        {"type": "step_start", "part": {}},
        {"type": "text", "part": {"type": "text", "text": " Recorded. "}},
        step("stop", 0.001, i=1100, o=5),
    )
    state = stream.state
    assert (state.finished, state.error, state.summary, state.turns) == (True, None, "Recorded.", 2)
    assert (state.usage.input_tokens, state.usage.output_tokens, state.usage.cache_read) == (
        2100,
        25,
        300,
    )
    assert state.usage.cost_usd is not None and abs(state.usage.cost_usd - 0.003) < 1e-9
    assert state.session_id == "ses_1" and refused == []


def test_a_cost_of_zero_is_unknown_not_free() -> None:
    stream, _ = folded({"type": "step_start", "part": {}}, step("stop", 0, i=10, o=2))
    assert stream.state.finished and stream.state.usage.cost_usd is None


def test_an_error_event_is_the_pass_s_error_in_opencode_s_words() -> None:
    stream, _ = folded(
        {
            "type": "error",
            "error": {"name": "APIError", "data": {"message": "Cannot connect to API"}},
        }
    )
    assert stream.state.finished and stream.state.error == "Cannot connect to API"
    stream, _ = folded({"type": "error", "error": {"name": "ProviderAuthError"}})
    assert stream.state.error == "ProviderAuthError"


def test_a_run_cut_off_mid_step_has_not_finished() -> None:
    stream, _ = folded({"type": "step_start", "part": {}}, step("tool-calls", 0, i=1))
    assert not stream.state.finished


def test_tools_the_pass_never_gave_are_refused() -> None:
    _, refused = folded(tool("bash", "error"), tool("my-notes_read"))
    assert refused == [("bash", {"q": 1}), ("my-notes_read", {"q": 1})]


def opencode_home(tmp_path: Path, text: str, name: str = "opencode.jsonc") -> dict[str, str]:
    folder = tmp_path / "home" / ".config" / "opencode"
    folder.mkdir(parents=True)
    (folder / name).write_text(text, encoding="utf-8")
    return {"HOME": str(tmp_path / "home")}


def test_the_launch_leaves_opencode_no_tool_but_the_pass_s(tmp_path: Path) -> None:
    env = opencode_home(
        tmp_path,
        '{\n  // my servers\n  "mcp": {\n    "notes": {"type": "local", "command": ["n"]},\n'
        '    /* off for now */ "web//x": {"type": "remote", "url": "http://a/*b*/"},\n  },\n}\n',
    )
    agent = HarnessAgent(kind="opencode", binary="/opt/opencode", target="opencode")
    launch = agent.launch(system_prompt="S", tools_url="http://x/mcp/dream", token="sdp_T", env=env)
    argv = launch.argv
    assert argv[:4] == ["/opt/opencode", "run", "--format", "json"]
    assert "--pure" in argv and argv[argv.index("--agent") + 1] == "signet-dreaming"
    assert not any("sdp_T" in arg for arg in argv)  # the secret goes by environment
    added = launch.env
    layer = json.loads(added[CONFIG_ENV])
    assert layer["mcp"]["notes"] == {"enabled": False}
    assert layer["mcp"]["web//x"] == {"enabled": False}
    assert layer["mcp"][SERVER]["headers"] == {"Authorization": "Bearer sdp_T"}
    dreaming = layer["agent"]["signet-dreaming"]
    assert dreaming["prompt"] == "S"
    assert dreaming["tools"] == {"*": False, SERVER + "_*": True}
    assert added["SIGNET_NO_HOOKS"] == "1"


def test_an_unreadable_opencode_config_switches_nothing_off(tmp_path: Path) -> None:
    assert user_mcp_servers(opencode_home(tmp_path, "{ not json")) == []
    assert user_mcp_servers({"HOME": str(tmp_path / "nobody")}) == []


def test_only_opencode_s_session_is_deleted_after_a_pass() -> None:
    opencode = HarnessAgent(kind="opencode", binary="/opt/opencode", target="opencode")
    assert opencode.forget_command("ses_1") == [
        "/opt/opencode", "session", "delete", "ses_1", "--pure"
    ]  # fmt: skip
    assert HarnessAgent(kind="codex", binary="/opt/codex", target="c").forget_command("x") is None
