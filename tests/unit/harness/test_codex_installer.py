"""Codex installer: `[mcp_servers.signet]` in config.toml with the user's formatting kept."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from installer_support import SIGNET_MCP, URL, backups, put

from signet_desktop.harness.installers import codex
from signet_desktop.harness.installers.files import ConfigFileError, Locations, apply, diff


def config(locations: Locations) -> Path:
    return locations.home / ".codex" / "config.toml"


def test_empty_home_gets_the_mcp_server(locations: Locations) -> None:
    plan = codex.plan_install(locations)
    assert any("session hooks: the wrapper" in note for note in plan.notes)
    apply(plan)
    parsed = tomllib.loads(config(locations).read_text())
    assert parsed == {"mcp_servers": {"signet": {"command": SIGNET_MCP, "args": ["--url", URL]}}}


def test_no_wrapper_installs_the_mcp_server_alone(locations: Locations) -> None:
    plan = codex.plan_install(locations, wrapper=False)
    assert [change.path for change in plan.pending] == [config(locations)]
    assert codex.NO_WRAPPER_NOTE in plan.notes
    apply(plan)
    assert not (locations.home / ".bashrc").exists()
    assert codex.status(locations)["hooks"] == "none"


def test_comments_and_the_users_servers_stay_and_reinstall_changes_nothing(
    locations: Locations,
) -> None:
    path = put("codex_config_user.toml", config(locations))
    original = path.read_text()
    apply(codex.plan_install(locations))
    text = path.read_text()
    ours = f'[mcp_servers.signet]\ncommand = "{SIGNET_MCP}"\nargs = ["--url", "{URL}"]\n\n'
    assert text.replace(ours, "") == original  # every byte of the user's file, plus ours
    assert "# the good one" in text and "# keep stdio" in text
    parsed = tomllib.loads(text)
    assert parsed["mcp_servers"]["docs"] == {"command": "docs-mcp", "args": ["--stdio"]}
    assert parsed["mcp_servers"]["signet"]["command"] == SIGNET_MCP
    assert len(backups(path.parent)) == 1
    assert codex.plan_install(locations).pending == ()
    apply(codex.plan_uninstall(locations))
    assert path.read_text() == original


def test_a_stale_signet_entry_is_replaced(locations: Locations) -> None:
    path = config(locations)
    path.parent.mkdir(parents=True)
    path.write_text('[mcp_servers.signet]\ncommand = "/old/signet-mcp"\nargs = ["--x"]\n')
    apply(codex.plan_install(locations))
    entry = tomllib.loads(path.read_text())["mcp_servers"]["signet"]
    assert entry == {"command": SIGNET_MCP, "args": ["--url", URL]}


def test_uninstall_of_a_file_we_created_removes_it_and_keeps_a_backup(
    locations: Locations,
) -> None:
    apply(codex.plan_install(locations))
    apply(codex.plan_uninstall(locations))
    assert not config(locations).exists() and len(backups(config(locations).parent)) == 1


def test_uninstall_leaves_a_signet_server_that_is_not_ours(locations: Locations) -> None:
    path = config(locations)
    path.parent.mkdir(parents=True)
    path.write_text('[mcp_servers.signet]\ncommand = "other"\n')
    assert codex.plan_uninstall(locations).pending == ()


@pytest.mark.parametrize("text", ["model = \n", "[mcp_servers\n", "mcp_servers = 3\n"])
def test_invalid_toml_is_reported_and_never_written(locations: Locations, text: str) -> None:
    path = config(locations)
    path.parent.mkdir(parents=True)
    path.write_text(text)
    with pytest.raises(ConfigFileError, match=str(path)):
        codex.plan_install(locations)
    assert path.read_text() == text and backups(path.parent) == []


def test_codex_home_moves_the_file_and_dry_run_writes_nothing(home: Path, tmp_path: Path) -> None:
    locations = Locations(home, {"HOME": str(home), "CODEX_HOME": str(tmp_path / "cx")})
    plan = codex.plan_install(locations)
    assert f"+++ {tmp_path / 'cx' / 'config.toml'}" in diff(plan)
    assert not (tmp_path / "cx").exists()
    apply(plan)
    assert codex.status(locations)["mcp"] is True
