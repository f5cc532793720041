"""`signet install|uninstall <harness>` and `signet install --status` through the real CLI."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from cli_fakes import FakeDaemon

from signet_desktop.cli.context import CliContext
from signet_desktop.cli.main import build_parser, run


def signet(home: Path, *argv: str, url: str | None = None) -> tuple[int, str, str]:
    env = {"HOME": str(home), "PATH": str(Path(sys.executable).parent)}
    if url:
        env["SIGNET_DAEMON_URL"] = url
    out, err = io.StringIO(), io.StringIO()
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as exc:
        return int(exc.code or 0), out.getvalue(), err.getvalue()
    code = run(args, CliContext(env=env, out=out, err=err), parser)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def test_dry_run_prints_the_diff_and_writes_nothing(home: Path) -> None:
    code, out, _ = signet(home, "install", "claude-code", "--dry-run")
    assert code == 0
    assert f"+++ {home / '.claude' / 'settings.json'}" in out
    assert "hook session-start -H claude-code --url http://127.0.0.1:3850" in out
    assert list(home.iterdir()) == []


def test_install_then_again_then_uninstall(home: Path) -> None:
    code, out, _ = signet(home, "install", "claude", "--url", "http://127.0.0.1:4000")
    assert code == 0 and f"created {home / '.claude' / 'settings.json'}" in out
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert command.endswith("hook user-prompt-submit -H claude-code --url http://127.0.0.1:4000")
    mcp = json.loads((home / ".claude.json").read_text())["mcpServers"]["signet"]
    assert mcp["args"] == ["--url", "http://127.0.0.1:4000"]
    code, out, _ = signet(home, "install", "claude-code", "--url", "http://127.0.0.1:4000")
    assert code == 0 and "claude-code: nothing to change" in out
    code, out, _ = signet(home, "uninstall", "claude-code")
    settings = home / ".claude" / "settings.json"
    assert code == 0 and f"removed {settings}" in out  # install created it: it goes
    assert f"{settings}: given back as it was before install" in out
    assert not settings.exists() and not (home / ".claude.json").exists()
    assert sorted(p.name for p in home.rglob("*.signet-backup")) == []


def test_an_invalid_settings_file_is_reported_with_its_path_and_kept(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"hooks": ')
    code, out, err = signet(home, "install", "claude-code")
    assert code == 1 and out == ""
    assert str(path) in err and "not valid JSON" in err
    assert path.read_text() == '{"hooks": ' and sorted(path.parent.iterdir()) == [path]


def test_jsonc_with_comments_is_installed_keeping_every_comment(home: Path) -> None:
    path = home / ".config" / "opencode" / "opencode.jsonc"
    path.parent.mkdir(parents=True)
    path.write_text('{\n  // mine\n  "theme": "x"\n}\n')
    code, out, _ = signet(home, "install", "opencode")
    assert code == 0 and f"updated {path}" in out
    text = path.read_text()
    assert text.startswith('{\n  // mine\n  "theme": "x",\n  "plugin": [')
    code, _, _ = signet(home, "uninstall", "opencode")
    assert code == 0 and path.read_text() == '{\n  // mine\n  "theme": "x"\n}\n'


def test_opencode_jsonc_round_trip_keeps_its_bytes_and_one_backup(home: Path) -> None:
    """Comments, empty containers, a trailing comma and no final newline: all come back."""
    path = home / ".config" / "opencode" / "opencode.jsonc"
    path.parent.mkdir(parents=True)
    text = '{\n  /* mine */\n  "mcp": {}, // none yet\n  "plugin": [],\n}'
    path.write_text(text)
    for _ in range(2):
        code, out, err = signet(home, "install", "opencode")
        assert code == 0, err
    assert "/* mine */" in path.read_text() and "// none yet" in path.read_text()
    assert [p.name for p in path.parent.glob("*.signet-backup")] == ["opencode.jsonc.signet-backup"]
    code, out, _ = signet(home, "uninstall", "opencode")
    assert code == 0 and f"{path}: given back as it was before install" in out
    assert path.read_bytes() == text.encode()
    assert list(path.parent.glob("*.signet-backup")) == []


def test_bad_usage(home: Path) -> None:
    assert signet(home, "install", "vim")[0] == 2
    assert signet(home, "install")[0] == 2
    code, _, err = signet(home, "install", "codex", "--command-hooks")
    assert code == 2 and "claude-code only" in err
    code, _, err = signet(home, "install", "codex", "--http-hooks")
    assert code == 2 and "--http-hooks applies to claude-code only" in err
    assert signet(home, "install", "claude-code", "--http-hooks", "--command-hooks")[0] == 2


def test_status_shows_each_harness_and_the_daemon(
    home: Path, fake_daemon: FakeDaemon, closed_url: str
) -> None:
    fake_daemon.reply("GET", "/health", 200, {"status": "healthy"})
    signet(home, "install", "claude-code", "--command-hooks")
    signet(home, "install", "codex")
    code, out, _ = signet(home, "install", "--status", url=fake_daemon.url)
    assert code == 0
    assert f"daemon {fake_daemon.url}: reachable (healthy)" in out
    claude, codex, opencode = (
        out.split("claude-code:")[1],
        out.split("codex:")[1],
        out.split("opencode:")[1],
    )
    claude = claude.split("codex:")[0]
    assert "hooks: command" in claude and "hook command: ok" in claude
    assert "MCP server signet: yes, starts (answers MCP initialize" in claude
    assert "MCP server signet: yes, starts" in codex and "hooks: wrapper " in codex
    assert "hooks: none" in opencode and "MCP server signet: no" in opencode
    code, out, _ = signet(home, "install", "--status", url=closed_url)
    assert code == 0 and "not reachable" in out.splitlines()[0]


def test_status_fails_when_a_written_command_does_not_start(
    home: Path, fake_daemon: FakeDaemon
) -> None:
    """A config entry is not proof: a moved virtualenv leaves commands that do not start."""
    fake_daemon.reply("GET", "/health", 200, {"status": "healthy"})
    signet(home, "install", "claude-code")
    claude_json = home / ".claude.json"
    data = json.loads(claude_json.read_text())
    data["mcpServers"]["signet"]["command"] = str(home / "gone" / "signet-mcp")
    claude_json.write_text(json.dumps(data))
    code, out, _ = signet(home, "install", "--status", url=fake_daemon.url)
    assert code == 1
    assert "MCP server signet: written, but FAILS to start" in out
    assert "not found from this PATH" in out and "do not start" in out
