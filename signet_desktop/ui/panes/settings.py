"""Settings (Ctrl+,): agents, Dreaming, the embedder, network and auth, and the theme.

Everything is read in one call off the GUI thread (`settings_reads.read_settings`); each
section acts through this pane (`act`: the work off the GUI thread, then what happened in
words and a fresh read). Writes to agent.yaml go through `config/writer.py` (validated by the
loader first, a `.bak` kept, replaced atomically); the daemon reads agent.yaml only when it
starts, so the pane says when saved settings are not the running ones. Tokens, secrets,
installs and the theme apply at once.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from PySide6.QtWidgets import (
    QApplication,
    QButtonGroup,
    QRadioButton,
    QWidget,
)

from signet_desktop.inference.harness_discovery import Harness
from signet_desktop.ui.diff_dialog import ask_with_diff
from signet_desktop.ui.pane import PaneContext, PaneSpec
from signet_desktop.ui.pane_frame import Frame, FramedPane, error_text
from signet_desktop.ui.settings import THEMES
from signet_desktop.ui.settings_agents import AgentsSection
from signet_desktop.ui.settings_dreaming import DreamingSection
from signet_desktop.ui.settings_embedder import EmbedderSection
from signet_desktop.ui.settings_form import RESTART_NOTE, Section, muted, row_of, set_state
from signet_desktop.ui.settings_network import NetworkSection
from signet_desktop.ui.settings_reads import SettingsSnapshot, read_settings
from signet_desktop.ui.style import apply_style
from signet_desktop.ui.widgets import vbox, vertical_scroll

FRAME = Frame(
    title="Settings",
    name="settings",
    count_name="settingsFile",
    empty_title="Settings are unavailable",
    empty_hint="The message above says why.",
)
THEME_LABELS = {"system": "Follow the system", "light": "Light", "dark": "Dark"}
Confirm = Callable[[str, str, str], bool]


class ThemeSection(Section):
    """System, light or dark: applied at once and remembered (ShellSettings)."""

    def __init__(self, pane: SettingsPane) -> None:
        super().__init__("settingsTheme", "Theme", "How the inspector looks; kept for next time.")
        self.pane = pane
        self.buttons: dict[str, QRadioButton] = {}
        group = QButtonGroup(self)
        for choice in THEMES:
            button = QRadioButton(THEME_LABELS[choice])
            button.setObjectName(f"theme-{choice}")
            button.clicked.connect(lambda _=False, c=choice: pane.choose_theme(c))
            group.addButton(button)
            self.buttons[choice] = button
        self.body.addWidget(row_of(*self.buttons.values()))

    def show_choice(self, choice: str) -> None:
        self.buttons[choice].setChecked(True)


class SettingsPane(FramedPane):
    """The sections in one scrolling column; the `SettingsHost` they act through."""

    def __init__(self, context: PaneContext) -> None:
        super().__init__(context, FRAME)
        self.service = context.service
        self.workspace = context.workspace
        self.url = context.url
        self.env: Mapping[str, str] = os.environ  # tests pass their own HOME and PATH
        self.confirm_change: Confirm = lambda title, lead, details: ask_with_diff(
            self, title, lead, details
        )
        self.snapshot: SettingsSnapshot | None = None
        self.found: tuple[Harness, ...] | None = None  # harnesses found on this visit
        self.restart = muted(name="settingsRestart")
        self.agents = AgentsSection(self)
        self.dreaming = DreamingSection(self)
        self.embedder = EmbedderSection()
        self.network = NetworkSection(self)
        self.theme = ThemeSection(self)
        column = QWidget()
        column.setObjectName("settingsColumn")
        vbox(
            self.restart,
            self.agents,
            self.dreaming,
            self.embedder,
            self.network,
            self.theme,
            1,
            parent=column,
            margins=(0, 0, 8, 0),
            spacing=12,
        )
        self.frame_layout(vertical_scroll(column, "settingsScroll"))
        settings = context.settings
        self.theme.show_choice(settings.theme() if settings is not None else THEMES[0])

    # -- reading ---------------------------------------------------------------------------

    def activated(self) -> None:
        self.found = None  # look for the harnesses again on each visit (one `--version` each)
        super().activated()

    def reader(self) -> Callable[[], SettingsSnapshot]:
        service, workspace, env, url = self.service, self.workspace, dict(self.env), self.url
        found = self.found
        return lambda: read_settings(service, workspace, env, url, found)

    def show_snapshot(self, snapshot: SettingsSnapshot) -> None:
        self.snapshot = snapshot
        self.found = snapshot.found
        self.show_listing(False, str(snapshot.config_path))
        if snapshot.config_error is not None:
            self.restart.setText(
                "agent.yaml does not load, so nothing is saved to it until it is fixed: "
                f"{snapshot.config_error}"
            )
            set_state(self.restart, "error")
        elif snapshot.pending_restart:
            self.restart.setText(
                f"agent.yaml has saved changes the daemon has not loaded. {RESTART_NOTE}"
            )
            set_state(self.restart, "warn")
        else:
            self.restart.setText(
                "Changes to agent.yaml are validated, backed up (agent.yaml.bak) and apply at "
                "the daemon's next start; tokens, keys, installs and the theme apply at once."
            )
            set_state(self.restart, "")
        self.agents.show_agents(snapshot.agents)
        self.dreaming.show_facts(snapshot.dreaming)
        self.embedder.show_status(snapshot.embedding, snapshot.saved_embedding)
        self.network.show_facts(snapshot.network)

    # -- SettingsHost ----------------------------------------------------------------------

    def act(self, work: Callable[[], Any], done: Callable[[Any], str]) -> None:
        """Run `work` off the GUI thread; say what `done` makes of its result, then re-read."""
        self._started = True

        def finished(result: Any) -> None:
            self.banner.clear()
            self.say(done(result))
            self.refresh()

        self.context.tasks.call(work, done=finished, failed=self._act_failed)

    def confirm(self, title: str, lead: str, details: str) -> bool:
        return self.confirm_change(title, lead, details)

    def _act_failed(self, exc: BaseException) -> None:
        self.banner.show_message(error_text(exc))
        self.refresh()

    # -- theme -----------------------------------------------------------------------------

    def choose_theme(self, choice: str) -> None:
        app = QApplication.instance()
        if isinstance(app, QApplication):
            apply_style(app, choice)
        if self.context.settings is not None:
            self.context.settings.set_theme(choice)
            self.context.settings.sync()
        self.say(f"Theme: {THEME_LABELS[choice].lower()}.")


PANE = PaneSpec(
    key="settings",
    title="Settings",
    icon="settings.svg",
    order=100,
    factory=SettingsPane,
    shortcut="Ctrl+,",
)
