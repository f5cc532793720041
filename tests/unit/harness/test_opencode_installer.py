"""OpenCode installer: plugin file, `plugin` and `mcp.signet` registration, JSONC in place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from installer_support import SIGNET_MCP, URL, backups, put

from signet_desktop.harness.installers import opencode
from signet_desktop.harness.installers.files import ConfigFileError, Locations, apply
from signet_desktop.harness.installers.json_edit import loads

ENTRY = {"type": "local", "command": [SIGNET_MCP, "--url", URL], "enabled": True}


def directory(locations: Locations) -> Path:
    return locations.home / ".config" / "opencode"


def test_empty_home_gets_plugin_file_and_a_new_opencode_json(locations: Locations) -> None:
    apply(opencode.plan_install(locations))
    plugin = directory(locations) / "plugins" / "signet.mjs"
    assert plugin.read_text() == opencode.plugin_text(URL) == opencode.plugin_source()
    assert "x-signet-runtime-path" in plugin.read_text()
    config = json.loads((directory(locations) / "opencode.json").read_text())
    assert config == {"plugin": ["./plugins/signet.mjs"], "mcp": {"signet": ENTRY}}
    assert opencode.status(locations) | {"config": ""} == {
        "config": "", "found": True, "hooks": "plugin", "mcp": True,
        "mcp_argv": [SIGNET_MCP, "--url", URL], "mcp_env": {}}  # fmt: skip


def test_the_users_plugins_and_servers_stay_and_uninstall_restores_them(
    locations: Locations,
) -> None:
    path = put("opencode_user.json", directory(locations) / "opencode.json")
    original = json.loads(path.read_text())
    apply(opencode.plan_install(locations))
    config = json.loads(path.read_text())
    assert config["plugin"] == ["opencode-wakatime", "./plugins/signet.mjs"]
    assert config["mcp"] == {**original["mcp"], "signet": ENTRY}
    assert config["theme"] == "tokyonight" and config["$schema"] == original["$schema"]
    assert opencode.plan_install(locations).pending == ()
    assert len(backups(path.parent)) == 1
    assert backups(path.parent / "plugins") == []  # the plugin file is wholly ours
    apply(opencode.plan_uninstall(locations))
    assert json.loads(path.read_text()) == original
    assert not (directory(locations) / "plugins" / "signet.mjs").exists()


def test_the_first_existing_config_name_is_used(locations: Locations) -> None:
    put("opencode_user.json", directory(locations) / "config.json")
    apply(opencode.plan_install(locations))
    assert "signet" in json.loads((directory(locations) / "config.json").read_text())["mcp"]
    assert not (directory(locations) / "opencode.json").exists()


def test_jsonc_with_comments_is_edited_in_place_and_uninstall_restores_its_bytes(
    locations: Locations,
) -> None:
    path = put("opencode_comments.jsonc", directory(locations) / "opencode.jsonc")
    text = path.read_text()
    apply(opencode.plan_install(locations))
    installed = path.read_text()
    assert "// my theme" in installed and "/* plugins I use */" in installed
    assert "// files" in installed
    assert '"plugin": ["opencode-wakatime", "./plugins/signet.mjs",],' in installed
    assert loads(installed)["mcp"] == {
        "fs": {"type": "local", "command": ["fs-mcp"], "enabled": True},
        "signet": ENTRY,
    }
    assert opencode.plan_install(locations).pending == ()  # a reinstall changes nothing
    apply(opencode.plan_uninstall(locations))
    assert path.read_text() == text  # byte for byte
    assert len(backups(path.parent)) == 1  # one per file, never one per run


def test_invalid_json_is_reported_and_never_written(locations: Locations) -> None:
    path = directory(locations) / "opencode.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"plugin": [')
    with pytest.raises(ConfigFileError, match="not valid JSON"):
        opencode.plan_install(locations)
    assert path.read_text() == '{"plugin": [' and backups(path.parent) == []


def test_a_foreign_plugin_file_is_backed_up_and_not_removed_by_uninstall(
    locations: Locations,
) -> None:
    plugin = directory(locations) / "plugins" / "signet.mjs"
    plugin.parent.mkdir(parents=True)
    plugin.write_text("export const Mine = async () => ({})\n")
    apply(opencode.plan_install(locations))
    assert len(backups(plugin.parent)) == 1
    plugin.write_text("export const Mine = async () => ({})\n")  # the user put theirs back
    apply(opencode.plan_uninstall(locations))
    assert plugin.is_file()


def test_xdg_config_home_moves_the_directory(home: Path, tmp_path: Path) -> None:
    locations = Locations(home, {"HOME": str(home), "XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    apply(opencode.plan_install(locations))
    assert (tmp_path / "xdg" / "opencode" / "plugins" / "signet.mjs").is_file()
