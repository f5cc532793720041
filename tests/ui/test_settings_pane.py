"""The Settings pane over the real service: agents installed through the installer's own code
after a diff, Dreaming saved (key in the secret store) and tested with a real call, auth mode
and tokens, the theme, and nothing written for bad input."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QDialog, QDialogButtonBox
from pytestqt.qtbot import QtBot

from signet_desktop.config import WorkspacePaths, describe_config, load_config
from signet_desktop.ui.diff_dialog import DiffDialog
from signet_desktop.ui.main_window import MainWindow
from signet_desktop.ui.pane import PaneContext, discover_panes, pane_shortcuts
from signet_desktop.ui.panes.settings import PANE, SettingsPane
from signet_desktop.ui.settings import ShellSettings
from signet_desktop.ui.style import apply_style, current_theme
from tests.support.fake_llm import FakeLLM, reply
from tests.ui.test_health_pane import wait_until

pytestmark = pytest.mark.gui

START = "# mine\nsearch:\n  alpha: 0.4\n"


class Answers:
    """The confirmation the pane asks for: records what it showed, answers as told."""

    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.asked: list[tuple[str, str, str]] = []

    def __call__(self, title: str, lead: str, details: str) -> bool:
        self.asked.append((title, lead, details))
        return self.answer


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A HOME with a `claude` on PATH (it answers `--version`), and no Codex or OpenCode."""
    found = tmp_path / "home"
    binaries = found / "bin"
    binaries.mkdir(parents=True)
    claude = binaries / "claude"
    claude.write_text("#!/bin/sh\necho '2.0.1 (Claude Code)'\n", encoding="utf-8")
    claude.chmod(0o755)
    return found


@pytest.fixture
def pane(
    qt_loop: asyncio.AbstractEventLoop, qtbot: QtBot, pane_context: PaneContext, home: Path,
    tmp_path: Path,
) -> Iterator[SettingsPane]:  # fmt: skip
    (pane_context.workspace / "agent.yaml").write_text(START, encoding="utf-8")
    shell = ShellSettings.at(tmp_path / "shell.ini")
    context = dataclasses.replace(pane_context, settings=shell)
    opened = SettingsPane(context)
    opened.env = {"HOME": str(home), "PATH": str(home / "bin")}
    opened.confirm_change = Answers(True)
    qtbot.addWidget(opened)
    opened.resize(1100, 900)
    opened.show()
    opened.activated()
    wait_until(lambda: opened.snapshot is not None)
    yield opened
    opened.choose_theme("system")


def settle(pane: SettingsPane) -> None:
    wait_until(lambda: pane.context.tasks.pending == 0 and not pane._flight.busy)


def agent_yaml(pane: SettingsPane) -> Path:
    return pane.workspace / "agent.yaml"


def test_registers_with_the_preferences_shortcut() -> None:
    specs = discover_panes()
    assert PANE in specs
    assert pane_shortcuts(specs)["settings"] == "Ctrl+,"


def test_each_harness_shows_found_and_connected_or_not(pane: SettingsPane, home: Path) -> None:
    found, state, _ = pane.agents.rows["claude-code"]
    assert found.text() == f"found: 2.0.1 (Claude Code) · {home / 'bin' / 'claude'}"
    assert state.text() == "not connected"
    assert pane.agents.rows["codex"][0].text() == "not found on this machine"


def test_install_shows_the_diff_and_writes_only_after_yes(pane: SettingsPane, home: Path) -> None:
    settings = home / ".claude" / "settings.json"
    refuse = Answers(False)
    pane.confirm_change = refuse
    pane.agents.install("claude-code", "Claude Code")
    wait_until(lambda: bool(refuse.asked))
    settle(pane)
    [(title, lead, details)] = refuse.asked
    assert title == "Install into Claude Code?" and str(settings) in lead
    assert f"+++ {settings}" in details and "signet" in details
    assert not settings.exists()
    assert pane.notice.text() == "Claude Code: nothing was changed."

    agree = Answers(True)
    pane.confirm_change = agree
    pane.agents.install("claude-code", "Claude Code")
    wait_until(lambda: pane.notice.text().startswith("Installed into Claude Code"))
    settle(pane)
    hooks = json.loads(settings.read_text(encoding="utf-8"))["hooks"]
    assert "SessionStart" in hooks
    assert pane.agents.rows["claude-code"][1].text().startswith("connected (command hooks")

    pane.agents.uninstall("claude-code", "Claude Code")
    wait_until(lambda: pane.notice.text().startswith("Uninstalled from Claude Code"))
    settle(pane)
    assert not settings.exists()  # install created it: uninstall gives that back
    assert pane.agents.rows["claude-code"][1].text() == "not connected"


def test_check_reports_what_is_written_in_words(pane: SettingsPane) -> None:
    pane.agents.check("codex", "Codex")
    wait_until(lambda: pane.notice.text().startswith("codex: checked"))
    report = pane.agents.report.toPlainText()
    assert report.startswith("codex: config ") and "MCP server signet: no" in report
    assert pane.agents.report.isVisible()


def test_an_http_provider_is_saved_with_its_key_as_a_secret_and_tested(
    pane: SettingsPane, fake_llm: FakeLLM
) -> None:
    section = pane.dreaming
    section.use_http.setChecked(True)
    section.provider.setCurrentIndex(section.provider.findData("openai-compatible"))
    section.endpoint.setText(fake_llm.base_url)
    section.model.setText("qwen3:4b")
    section.secret.setText("LLM_KEY")
    section.key.setText("sk-test-123")
    section.save.click()
    wait_until(lambda: pane.notice.text().startswith("Dreaming runs on openai-compatible"))
    settle(pane)
    text = agent_yaml(pane).read_text(encoding="utf-8")
    assert "sk-test-123" not in text and "$secret:LLM_KEY" in text
    assert (pane.workspace / "agent.yaml.bak").read_text(encoding="utf-8") == START
    assert pane.service.secrets.names("default") == ("LLM_KEY",)
    assert section.key.text() == ""
    assert "quit Signet Desktop" in pane.notice.text()  # the daemon loads it at its start
    assert section.now.text().endswith("runs on openai-compatible · qwen3:4b.")

    fake_llm.script(reply("ready", input_tokens=9, output_tokens=1))
    section.test.click()
    wait_until(lambda: section.outcome.text().startswith(("✔", "✘")))
    assert section.outcome.text().startswith("✔"), section.outcome.text()
    assert "“ready”" in section.outcome.text()
    assert fake_llm.requests[0].headers.get("authorization") == "Bearer sk-test-123"


@pytest.mark.parametrize(
    ("model", "secret", "key", "message"),
    [
        ("", "", "", "Name the model Dreaming should use."),
        ("gpt-4.1-mini", "9-bad name", "sk-x", "API key: a secret name is"),
        ("gpt-4.1-mini", "NEVER_STORED", "", "No secret named NEVER_STORED is stored yet"),
    ],
)
def test_bad_dreaming_input_writes_nothing(
    pane: SettingsPane, model: str, secret: str, key: str, message: str
) -> None:
    before = agent_yaml(pane).read_bytes()
    section = pane.dreaming
    section.use_http.setChecked(True)
    section.provider.setCurrentIndex(section.provider.findData("openai"))
    section.model.setText(model)
    section.secret.setText(secret)
    section.key.setText(key)
    section.save.click()
    settle(pane)
    assert section.outcome.text().startswith(message)
    assert agent_yaml(pane).read_bytes() == before
    assert pane.service.secrets.names("default") == ()


def test_a_value_the_loader_refuses_is_not_written(pane: SettingsPane) -> None:
    before = agent_yaml(pane).read_bytes()
    section = pane.dreaming
    section.use_http.setChecked(True)
    section.provider.setCurrentIndex(section.provider.findData("ollama"))
    section.model.setText("qwen3:8b")
    section.secret.setText("")
    section.endpoint.setText("http://127.0.0.1:11434")
    section.save.click()  # valid: written
    wait_until(lambda: pane.notice.text().startswith("Dreaming runs on ollama"))
    settle(pane)
    assert agent_yaml(pane).read_bytes() != before
    written = agent_yaml(pane).read_bytes()
    pane.network.mode.addItem("everyone", "everyone")  # a mode the loader does not know
    pane.network.mode.setCurrentIndex(pane.network.mode.findData("everyone"))
    pane.network.save()
    wait_until(lambda: bool(pane.banner.text))
    assert "not saved" in pane.banner.text and "auth.mode" in pane.banner.text
    assert agent_yaml(pane).read_bytes() == written


def test_a_harness_is_bound_as_dream_setup_does(pane: SettingsPane, home: Path) -> None:
    section = pane.dreaming
    section.use_harness.setChecked(True)
    assert section.harness.currentData() == str(home / "bin" / "claude")
    section.save.click()
    wait_until(lambda: pane.notice.text().startswith("Dreaming runs on"))
    settle(pane)
    inference = load_config(WorkspacePaths.for_root(pane.workspace)).config.inference
    target = inference.targets["claude-code"]
    assert target.executor == "acpx" and target.acpx == {"agent": str(home / "bin" / "claude")}
    section.test.click()
    wait_until(lambda: section.outcome.text().startswith(("✔", "✘")))
    assert section.outcome.text().startswith("✔ Claude Code starts (2.0.1")


def test_enabling_dreaming_says_it_applies_after_a_restart(pane: SettingsPane) -> None:
    paths = WorkspacePaths.for_root(pane.workspace)
    pane.service.status_board.set("config", describe_config(load_config(paths)))  # running
    pane.refresh()
    settle(pane)
    assert "has saved changes" not in pane.restart.text()
    pane.dreaming.enabled.click()
    wait_until(lambda: pane.notice.text().startswith("Dreaming turned on"))
    settle(pane)
    assert load_config(paths).config.memory.dreaming.enabled is True
    assert "quit Signet Desktop" in pane.notice.text()
    assert pane.restart.text().startswith("agent.yaml has saved changes the daemon has not")


def test_auth_mode_is_written_and_tokens_are_created_and_revoked(pane: SettingsPane) -> None:
    network = pane.network
    network.mode.setCurrentIndex(network.mode.findData("hybrid"))
    network.save()
    wait_until(lambda: pane.notice.text().startswith("auth.mode is hybrid"))
    settle(pane)
    assert load_config(WorkspacePaths.for_root(pane.workspace)).config.auth.mode == "hybrid"

    network.name.setText("laptop-ci")
    network.permissions["write"].setChecked(True)
    network.create_button.click()
    wait_until(lambda: pane.notice.text().startswith("Token laptop-ci created"))
    settle(pane)
    assert network.secret.text().startswith("sgt_") and network.secret.isVisible()
    assert pane.service.tokens.find(network.secret.text()) is not None
    assert network.table.rowCount() == 1
    cells = [network.table.item(0, c).text() for c in range(6)]
    assert cells[0:4] == ["laptop-ci", "api", "read, write", "default"] and cells[5] == "active"

    network.table.selectRow(0)
    network.revoke.click()
    wait_until(lambda: pane.notice.text() == "Token laptop-ci revoked.")
    settle(pane)
    assert network.table.item(0, 5).text() == "revoked"


def test_a_bad_token_name_is_refused_in_words(pane: SettingsPane) -> None:
    pane.network.name.setText("no spaces allowed")
    pane.network.create_button.click()
    wait_until(lambda: bool(pane.banner.text))
    assert "name" in pane.banner.text.lower()
    assert pane.service.tokens.list() == []


def test_the_theme_applies_at_once_and_is_remembered(pane: SettingsPane) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    system = current_theme().name
    other = "dark" if system == "light" else "light"
    pane.theme.buttons[other].click()
    assert current_theme().name == other
    assert pane.context.settings is not None and pane.context.settings.theme() == other
    pane.theme.buttons["system"].click()
    assert current_theme().name == system
    assert pane.context.settings.theme() == "system"


def test_the_embedder_section_states_the_facts(pane: SettingsPane) -> None:
    text = pane.embedder.facts.text()
    assert text.startswith("No embedder is running") and "Vector search: unavailable" in text


def test_a_config_that_does_not_load_is_said_and_never_rewritten(pane: SettingsPane) -> None:
    agent_yaml(pane).write_text("search: [unclosed\n", encoding="utf-8")
    before = agent_yaml(pane).read_bytes()
    pane.refresh()
    wait_until(lambda: "does not load" in pane.restart.text())
    pane.network.save()
    wait_until(lambda: "fix it first" in pane.banner.text)
    assert agent_yaml(pane).read_bytes() == before
    pane.dreaming.test.click()
    wait_until(lambda: pane.dreaming.outcome.text().startswith("✘"))
    assert "agent.yaml does not load" in pane.dreaming.outcome.text()
    assert pane.dreaming.test.isEnabled()


def test_the_confirmation_shows_the_diff_and_defaults_to_cancel(qtbot: QtBot) -> None:
    dialog = DiffDialog(None, "Install into Codex?", "these files change", "+++ b/config.toml\n")
    qtbot.addWidget(dialog)
    assert dialog.details.toPlainText() == "+++ b/config.toml\n" and dialog.details.isReadOnly()
    buttons = dialog.findChild(QDialogButtonBox)
    assert buttons is not None
    cancel = buttons.button(QDialogButtonBox.StandardButton.Cancel)
    assert cancel.isDefault()
    cancel.click()
    assert dialog.result() == QDialog.DialogCode.Rejected


def test_a_chosen_theme_recolours_the_rail_icons(
    qtbot: QtBot, pane_context: PaneContext, tmp_path: Path, qt_loop: asyncio.AbstractEventLoop
) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    window = MainWindow(
        pane_context.service,
        events=pane_context.events,
        settings=ShellSettings.at(tmp_path / "window.ini"),
        specs=[PANE],
    )
    qtbot.addWidget(window)

    def drawn() -> QImage:
        return window.rail.item(0).icon().pixmap(24, 24).toImage()

    before = drawn()
    other = "dark" if current_theme().name == "light" else "light"
    try:
        apply_style(app, other)
        qtbot.waitUntil(lambda: drawn() != before)
    finally:
        apply_style(app, "system")
    qtbot.waitUntil(lambda: drawn() == before)
    window.shutdown()
