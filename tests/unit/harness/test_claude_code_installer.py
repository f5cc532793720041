"""Claude Code installer on recorded settings: merge, idempotency, legacy rewrite, uninstall."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from installer_support import URL, backups, put

from signet_desktop.harness.installers import claude_code
from signet_desktop.harness.installers.files import ConfigFileError, Locations, apply, diff

COMMAND = claude_code.Options(URL)  # the default: a command hook for every event
HTTP = claude_code.Options(URL, http_hooks=True)
# This installation's scripts, by absolute path: a harness's PATH may not hold this venv.
SIGNET = str(Path(sys.executable).with_name("signet"))
SIGNET_MCP = str(Path(sys.executable).with_name("signet-mcp"))


def hook_command(event: str, url: str = URL) -> str:
    return shlex.join([SIGNET, "hook", event, "-H", "claude-code", "--url", url])


def settings_path(locations: Locations) -> Path:
    return locations.home / ".claude" / "settings.json"


def read(path: Path) -> Any:
    return json.loads(path.read_text())


def ours(settings: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [
        hook
        for group in settings["hooks"][event]
        for hook in group["hooks"]
        if claude_code.is_ours(hook)
    ]


def install(locations: Locations, options: claude_code.Options = COMMAND) -> list[Path]:
    return apply(claude_code.plan_install(locations, options))


def test_empty_home_gets_absolute_command_hooks_and_the_mcp_entry(locations: Locations) -> None:
    assert install(locations) == []  # nothing existed, nothing to back up
    settings = read(settings_path(locations))
    assert settings["hooks"]["SessionStart"] == [
        {"hooks": [{"type": "command", "command": hook_command("session-start"), "timeout": 7}]}
    ]
    timeouts = {e: ours(settings, e)[0]["timeout"] for e in claude_code.EVENTS}
    assert timeouts == {"SessionStart": 7, "UserPromptSubmit": 7, "PreCompact": 12,
                        "SessionEnd": 62}  # fmt: skip
    assert ours(settings, "PreCompact")[0]["command"] == hook_command("pre-compaction")
    mcp = read(locations.home / ".claude.json")
    assert mcp == {"mcpServers": {"signet": {"type": "stdio", "command": SIGNET_MCP,
                                             "args": ["--url", URL], "env": {}}}}  # fmt: skip


def test_the_installed_commands_run_from_a_path_without_this_environment(
    home: Path, tmp_path: Path
) -> None:
    """`uv run signet install` sees the venv on PATH; the harness later runs without it."""
    bare = Locations(home, {"HOME": str(home), "PATH": "/usr/bin:/bin"})
    apply(claude_code.plan_install(bare, claude_code.Options("http://127.0.0.1:4100")))
    settings = read(settings_path(bare))
    for event in claude_code.EVENTS:
        [hook] = ours(settings, event)
        words = shlex.split(hook["command"])
        assert Path(words[0]).is_absolute() and Path(words[0]).is_file()
        assert words[-2:] == ["--url", "http://127.0.0.1:4100"]
    entry = read(home / ".claude.json")["mcpServers"]["signet"]
    assert Path(entry["command"]).is_absolute() and Path(entry["command"]).is_file()
    assert entry["args"] == ["--url", "http://127.0.0.1:4100"]


def test_http_hooks_leave_session_start_a_command(locations: Locations) -> None:
    """Claude Code runs no HTTP hook at SessionStart: --http-hooks keeps it a command."""
    install(locations, HTTP)
    settings = read(settings_path(locations))
    assert ours(settings, "SessionStart")[0]["type"] == "command"
    for event in ("UserPromptSubmit", "PreCompact", "SessionEnd"):
        [hook] = ours(settings, event)
        assert hook["type"] == "http" and hook["url"].startswith(f"{URL}/api/hooks/claude-code/")
    assert ours(settings, "PreCompact")[0]["url"].endswith("/api/hooks/claude-code/pre-compact")
    assert ours(settings, "SessionEnd")[0]["timeout"] == 60


def test_the_users_hooks_and_matchers_stay_and_a_second_install_changes_nothing(
    locations: Locations,
) -> None:
    path = put("claude_settings_user_hooks.json", settings_path(locations))
    original = read(path)
    install(locations)
    settings = read(path)
    assert settings["model"] == "opus" and settings["permissions"] == original["permissions"]
    assert settings["hooks"]["PreToolUse"] == original["hooks"]["PreToolUse"]
    assert settings["hooks"]["Stop"] == original["hooks"]["Stop"]
    assert settings["hooks"]["SessionStart"][0] == original["hooks"]["SessionStart"][0]
    assert len(ours(settings, "SessionStart")) == 1
    assert len(backups(path.parent)) == 1
    text = path.read_text()
    again = claude_code.plan_install(locations, COMMAND)
    assert again.pending == () and diff(again) == ""
    assert apply(again) == [] and path.read_text() == text
    assert len(backups(path.parent)) == 1


def test_switching_kinds_replaces_ours_in_place(locations: Locations) -> None:
    install(locations, HTTP)
    install(locations, COMMAND)
    settings = read(settings_path(locations))
    for event in claude_code.EVENTS:
        assert [h["type"] for h in ours(settings, event)] == ["command"]
        assert len(settings["hooks"][event]) == 1


def test_signets_legacy_millisecond_command_hooks_are_rewritten(locations: Locations) -> None:
    path = put("claude_settings_signet_legacy.json", settings_path(locations))
    install(locations)
    settings = read(path)
    assert "PreCompaction" not in settings["hooks"]  # held only Signet's own hook
    for event in claude_code.EVENTS:
        [hook] = ours(settings, event)
        assert hook["command"] == hook_command(claude_code.EVENTS[event][1])
        assert hook["timeout"] <= 62
    user = settings["hooks"]["UserPromptSubmit"]
    assert {"hooks": [{"type": "command", "command": "~/bin/log-prompt.sh"}]} in user
    assert not any(h.get("timeout", 0) >= 1000 for g in user for h in g["hooks"])


def test_a_legacy_key_with_a_users_hook_keeps_the_users_hook(locations: Locations) -> None:
    path = settings_path(locations)
    path.parent.mkdir(parents=True)
    mine = {"type": "command", "command": "~/bin/mine.sh"}
    signet = {"type": "command", "command": "signet hook pre-compaction -H claude-code"}
    path.write_text(json.dumps({"hooks": {"PreCompaction": [{"hooks": [signet, mine]}]}}))
    install(locations)
    assert read(path)["hooks"]["PreCompaction"] == [{"hooks": [mine]}]


def test_uninstall_leaves_exactly_the_users_content(locations: Locations) -> None:
    path = put("claude_settings_user_hooks.json", settings_path(locations))
    mcp = put("claude_json_user_servers.json", locations.home / ".claude.json")
    settings_before, mcp_before = read(path), read(mcp)
    install(locations)
    assert set(read(mcp)["mcpServers"]) == {"github", "signet"}
    assert read(mcp)["projects"] == mcp_before["projects"]
    apply(claude_code.plan_uninstall(locations))
    assert read(path) == settings_before
    assert read(mcp) == mcp_before
    assert claude_code.plan_uninstall(locations).pending == ()


def test_uninstall_after_install_on_an_empty_home_leaves_no_hooks_key(
    locations: Locations,
) -> None:
    install(locations, COMMAND)
    apply(claude_code.plan_uninstall(locations))
    assert read(settings_path(locations)) == {}
    assert read(locations.home / ".claude.json") == {}


def test_uninstall_leaves_a_signet_server_that_is_not_ours(locations: Locations) -> None:
    mcp = locations.home / ".claude.json"
    mcp.write_text(json.dumps({"mcpServers": {"signet": {"command": "/opt/other/server"}}}))
    assert claude_code.plan_uninstall(locations).pending == ()


@pytest.mark.parametrize(
    "text", ["{not json", '{"hooks": [1]}', "[]", '{"hooks": {"SessionStart": 3}}']
)
def test_an_invalid_settings_file_is_reported_and_never_written(
    locations: Locations, text: str
) -> None:
    path = settings_path(locations)
    path.parent.mkdir(parents=True)
    path.write_text(text)
    with pytest.raises(ConfigFileError) as caught:
        claude_code.plan_install(locations, HTTP)
    assert str(path) in str(caught.value)
    with pytest.raises(ConfigFileError):
        claude_code.plan_uninstall(locations)
    assert path.read_text() == text and backups(path.parent) == []


def test_parse_error_names_line_and_column(locations: Locations) -> None:
    path = settings_path(locations)
    path.parent.mkdir(parents=True)
    path.write_text('{\n  "hooks": {,}\n}')
    with pytest.raises(ConfigFileError, match=r"line 2, column 13"):
        claude_code.plan_install(locations, HTTP)


def test_dry_run_diff_names_the_file_and_writes_nothing(locations: Locations) -> None:
    path = put("claude_settings_user_hooks.json", settings_path(locations))
    text = path.read_text()
    plan = claude_code.plan_install(locations, HTTP)
    shown = diff(plan)
    assert f"--- {path}" in shown and "/api/hooks/claude-code/user-prompt-submit" in shown
    assert "--- /dev/null" in shown  # .claude.json would be created
    assert path.read_text() == text and not (locations.home / ".claude.json").exists()


def test_claude_config_dir_moves_both_files(home: Path, tmp_path: Path) -> None:
    config = tmp_path / "cc"
    locations = Locations(home, {"HOME": str(home), "CLAUDE_CONFIG_DIR": str(config)})
    apply(claude_code.plan_install(locations, HTTP))
    assert (config / "settings.json").is_file() and (config / ".claude.json").is_file()
    assert not (home / ".claude").exists() and not (home / ".claude.json").exists()


def test_a_file_keeps_its_mode_and_a_symlinked_file_stays_a_symlink(
    locations: Locations, tmp_path: Path
) -> None:
    real = put("claude_settings_user_hooks.json", tmp_path / "dotfiles" / "settings.json")
    real.chmod(0o640)
    link = settings_path(locations)
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    install(locations)
    assert link.is_symlink() and ours(read(real), "SessionStart")
    assert real.stat().st_mode & 0o777 == 0o640


def test_status_reports_kind_and_mcp(locations: Locations) -> None:
    assert claude_code.status(locations)["hooks"] == "none"
    install(locations, COMMAND)
    facts = claude_code.status(locations)
    assert facts["hooks"] == "command" and facts["mcp"] is True
    assert facts["hook_events"] == list(claude_code.EVENTS)
    assert facts["hook_commands"] == [
        tuple(shlex.split(hook_command(event)))
        for event in sorted(e for _, e, _ in claude_code.EVENTS.values())
    ]
    assert facts["mcp_argv"] == [SIGNET_MCP, "--url", URL]


def test_a_hand_formatted_settings_file_keeps_every_byte_we_do_not_add(
    locations: Locations,
) -> None:
    """Only our hooks' bytes go in; uninstall takes exactly those out again."""
    path = settings_path(locations)
    path.parent.mkdir(parents=True)
    text = (
        '{\n    "model": "opus",  "theme": "dark",\n'
        '    "permissions": {"allow": ["Bash(git status)", "Read(*)"]},\n'
        '    "hooks": {\n'
        '        "Stop": [{"hooks": [{"type": "command", "command": "~/bin/stop.sh"}]}],\n'
        '        "SessionStart": [ {"matcher": "startup", "hooks": [ {"type": "command",'
        ' "command": "~/bin/hello.sh"} ]} ]\n'
        "    }\n}"
    )
    path.write_text(text)
    install(locations)
    installed = path.read_text()
    assert installed.startswith('{\n    "model": "opus",  "theme": "dark",\n')
    assert '"command": "~/bin/hello.sh"} ]}, {"hooks": [{' in installed  # inline, as theirs
    assert not installed.endswith("\n")  # the file's own ending
    assert claude_code.plan_install(locations, COMMAND).pending == ()
    apply(claude_code.plan_uninstall(locations))
    assert path.read_text() == text
