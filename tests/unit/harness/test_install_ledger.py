"""The install ledger: one backup per file, and an uninstall that gives back the bytes found."""

from __future__ import annotations

import json
from pathlib import Path

from installer_support import backups

from signet_desktop.harness.installers import claude_code, codex, opencode
from signet_desktop.harness.installers.files import Locations, Plan, apply
from signet_desktop.harness.installers.json_edit import loads
from signet_desktop.harness.installers.ledger import InstallLedger

# Empty containers, a comment, a trailing comma, no final newline: what an in-place removal
# cannot give back (it drops a key it emptied and rewrites the object around it).
JSONC = '{\n  // keep me\n  "mcp": {},\n  "plugin": [],\n  "theme": "dark",\n}'


def install(locations: Locations, plan: Plan) -> list[Path]:
    return apply(plan, InstallLedger.of(locations))


def uninstall(locations: Locations, plan: Plan) -> Plan:
    ledger = InstallLedger.of(locations)
    restoring = ledger.restoring(plan)
    apply(restoring, ledger, uninstall=True)
    return restoring


def opencode_config(locations: Locations, text: str) -> Path:
    path = locations.home / ".config" / "opencode" / "opencode.jsonc"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_uninstall_gives_back_the_exact_bytes_of_an_untouched_file(locations: Locations) -> None:
    path = opencode_config(locations, JSONC)
    made = install(locations, opencode.plan_install(locations))
    assert [b.name for b in made] == ["opencode.jsonc.signet-backup"]
    assert "// keep me" in path.read_text() and "signet" in loads(path.read_text())["mcp"]
    plan = uninstall(locations, opencode.plan_uninstall(locations))
    assert path.read_bytes() == JSONC.encode()
    assert f"{path}: given back as it was before install" in plan.notes
    assert backups(path.parent) == []  # the file is its own backup again
    assert not (locations.config_home / "opencode" / "plugins" / "signet.mjs").exists()


def test_the_same_removal_in_place_cannot_give_those_bytes_back(locations: Locations) -> None:
    path = opencode_config(locations, JSONC)
    apply(opencode.plan_install(locations))  # no ledger: what an uninstall can do without one
    apply(opencode.plan_uninstall(locations))
    assert path.read_text() != JSONC and loads(path.read_text()) == {"theme": "dark"}


def test_one_backup_per_file_over_many_installs_and_uninstalls(locations: Locations) -> None:
    path = opencode_config(locations, JSONC)
    for url in ("http://127.0.0.1:3850", "http://127.0.0.1:3851", "http://127.0.0.1:3850"):
        install(locations, opencode.plan_install(locations, url))
        assert [b.name for b in backups(path.parent)] == ["opencode.jsonc.signet-backup"]
        assert (path.parent / "opencode.jsonc.signet-backup").read_text() == JSONC
    uninstall(locations, opencode.plan_uninstall(locations))
    assert path.read_text() == JSONC and backups(path.parent) == []
    install(locations, opencode.plan_install(locations))  # a second cycle starts afresh
    uninstall(locations, opencode.plan_uninstall(locations))
    assert path.read_text() == JSONC and backups(path.parent) == []


def test_a_file_changed_since_install_keeps_the_change_and_its_backup(
    locations: Locations,
) -> None:
    path = opencode_config(locations, JSONC)
    install(locations, opencode.plan_install(locations))
    edited = path.read_text().replace('"theme": "dark"', '"theme": "light"')
    path.write_text(edited)  # the user edits after the install
    plan = uninstall(locations, opencode.plan_uninstall(locations))
    config = loads(path.read_text())
    assert config["theme"] == "light" and "signet" not in json.dumps(config)
    assert "// keep me" in path.read_text()
    assert any("changed since install" in note for note in plan.notes)
    assert (path.parent / "opencode.jsonc.signet-backup").read_text() == JSONC


def test_a_reinstall_onto_an_edited_file_never_restores_the_old_backup(
    locations: Locations,
) -> None:
    """The backup no longer is the file without Signet once the user edited in between."""
    path = opencode_config(locations, JSONC)
    install(locations, opencode.plan_install(locations))
    path.write_text(path.read_text().replace('"theme": "dark"', '"theme": "light"'))
    install(locations, opencode.plan_install(locations, "http://127.0.0.1:4000"))
    uninstall(locations, opencode.plan_uninstall(locations))
    assert loads(path.read_text())["theme"] == "light"


def test_a_file_install_created_is_removed_and_a_kept_one_is_not(locations: Locations) -> None:
    settings = locations.claude_dir / "settings.json"
    install(locations, claude_code.plan_install(locations, claude_code.Options(url="http://x:1")))
    assert settings.is_file() and locations.claude_json.is_file()
    locations.claude_json.write_text(  # Claude Code rewrites its own file all the time
        json.dumps({**json.loads(locations.claude_json.read_text()), "numStartups": 4})
    )
    uninstall(locations, claude_code.plan_uninstall(locations))
    assert not settings.exists()
    assert json.loads(locations.claude_json.read_text()) == {"numStartups": 4}
    assert json.loads(InstallLedger.of(locations).path.read_text())["files"] == {}


def test_shell_and_toml_files_come_back_byte_for_byte(locations: Locations) -> None:
    zshrc = locations.home / ".zshrc"
    zshrc.write_text("alias gs='git status'")  # no final newline
    config = locations.codex_dir / "config.toml"
    config.parent.mkdir(parents=True)
    toml = '# mine\nmodel = "o3"\n\n\n[tui]\nnotifications = true'
    config.write_text(toml)
    install(locations, codex.plan_install(locations))
    assert zshrc.read_text() != "alias gs='git status'"
    uninstall(locations, codex.plan_uninstall(locations))
    assert zshrc.read_bytes() == b"alias gs='git status'" and config.read_text() == toml
    assert backups(locations.home) == [] and backups(config.parent) == []


def test_an_unreadable_ledger_means_removal_in_place(locations: Locations) -> None:
    path = opencode_config(locations, JSONC)
    install(locations, opencode.plan_install(locations))
    InstallLedger.of(locations).path.write_text("{not json")
    uninstall(locations, opencode.plan_uninstall(locations))
    assert loads(path.read_text()) == {"theme": "dark"}
    assert [b.read_text() for b in backups(path.parent)] == [JSONC]  # kept: not given back
