"""The menu bar: every item of File, View and Help does what it says (each one triggered)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QAction, QKeySequence, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QMenu
from pytestqt.qtbot import QtBot

from signet_desktop import __version__
from signet_desktop.service.facade import SignetService
from signet_desktop.ui.event_bridge import EventBridge
from signet_desktop.ui.help_dialogs import AboutDialog, ShortcutsDialog
from signet_desktop.ui.main_window import MainWindow
from signet_desktop.ui.pane import PaneContext, PaneWidget, discover_panes, pane_shortcuts
from signet_desktop.ui.settings import ShellSettings
from signet_desktop.ui.style import is_dark

pytestmark = pytest.mark.gui
URL = "http://127.0.0.1:3850"


def light_pane(context: PaneContext) -> PaneWidget:
    return PaneWidget(context)


@pytest.fixture(autouse=True)
def _restore_the_look(qapp: QApplication) -> Iterator[None]:
    """View ▸ Theme restyles the whole application: later tests get it back as it was."""
    palette, sheet, font = QPalette(qapp.palette()), qapp.styleSheet(), qapp.font()
    yield
    qapp.setPalette(palette)
    qapp.setStyleSheet(sheet)
    qapp.setFont(font)


@pytest.fixture
def window(
    qtbot: QtBot, service: SignetService, tmp_path: Path, qt_loop: Any
) -> Iterator[MainWindow]:
    bridge = EventBridge(service.events)
    specs = [  # the real Transcripts pane (File ▸ Import opens its sources), light others
        s if s.key == "transcripts" else dataclasses.replace(s, factory=light_pane)
        for s in discover_panes()
    ]
    shown = MainWindow(
        service,
        events=bridge,
        settings=ShellSettings.at(tmp_path / "settings.ini"),
        url=URL,
        workspace=tmp_path / "ws",
        specs=specs,
    )
    qtbot.addWidget(shown)
    shown.show()
    yield shown
    shown.shutdown()
    bridge.close()


def menu_items(window: MainWindow) -> dict[str, QAction]:
    """Every leaf action reachable from the menu bar, by object name."""
    found: dict[str, QAction] = {}

    def walk(menu: QMenu) -> None:
        for action in menu.actions():
            sub = action.menu()
            if isinstance(sub, QMenu):
                walk(sub)
            elif not action.isSeparator():
                found[action.objectName()] = action

    for top in window.menuBar().actions():
        menu = top.menu()
        assert isinstance(menu, QMenu)
        walk(menu)
    return found


def test_the_menu_bar_has_file_view_and_help(window: MainWindow) -> None:
    titles = [a.text().replace("&", "") for a in window.menuBar().actions()]
    assert titles == ["File", "View", "Help"]


def test_every_menu_item_works(window: MainWindow, qtbot: QtBot, qapp: QApplication) -> None:
    items = menu_items(window)
    checked: set[str] = set()

    def trigger(name: str) -> None:
        items[name].trigger()
        checked.add(name)

    # View: each pane with its shortcut from pane_shortcuts()
    shortcuts = pane_shortcuts(window.specs)
    for spec in reversed(window.specs):
        action = items[f"menuPane-{spec.key}"]
        assert action.shortcut() == QKeySequence(shortcuts[spec.key])
        with qtbot.waitSignal(window.pane_shown, timeout=2000) as shown:
            trigger(f"menuPane-{spec.key}")
        assert shown.args == [spec.key] and window.current_key == spec.key
    first, second = window.specs[0].key, window.specs[1].key
    trigger("menuNextPane")
    assert window.current_key == second
    trigger("menuPreviousPane")
    assert window.current_key == first
    trigger("menuSearch")
    qtbot.waitUntil(window.command_palette.isVisible, timeout=2000)
    window.command_palette.close()

    # File ▸ Import history… opens the Transcripts pane with its import panel
    trigger("menuImport")
    assert window.current_key == "transcripts"
    pane = window.panes["transcripts"]
    qtbot.waitUntil(lambda: pane.import_panel.isVisible(), timeout=2000)  # type: ignore[attr-defined]
    with qtbot.waitSignal(window.quit_requested, timeout=1000):
        trigger("menuQuit")

    # View ▸ Theme: dark, light, then back to the desktop's own palette
    system_dark = is_dark(qapp.palette())
    try:
        trigger("menuTheme-dark")
        assert is_dark(qapp.palette()) and window.settings.theme() == "dark"
        trigger("menuTheme-light")
        assert not is_dark(qapp.palette()) and window.settings.theme() == "light"
    finally:
        trigger("menuTheme-system")
    assert is_dark(qapp.palette()) == system_dark and window.settings.theme() == "system"

    # Help
    trigger("menuShortcuts")
    shortcuts_dialog = window.findChild(ShortcutsDialog, "shortcutsDialog")
    assert shortcuts_dialog is not None and shortcuts_dialog.isVisible()
    shortcuts_dialog.close()
    trigger("menuAbout")
    about = window.findChild(AboutDialog, "aboutDialog")
    assert about is not None and about.isVisible()
    about.close()
    assert checked == set(items), f"untested menu items: {set(items) - checked}"


def test_the_shortcut_list_is_every_registered_shortcut(window: MainWindow) -> None:
    dialog = window.show_shortcuts()
    listed = {
        dialog.table.topLevelItem(row).text(1): dialog.table.topLevelItem(row).text(0)
        for row in range(dialog.table.topLevelItemCount())
    }
    registered = [a for a in menu_items(window).values() if not a.shortcut().isEmpty()]
    assert len(listed) == len(registered) == dialog.table.topLevelItemCount()
    for spec in window.specs:
        keys = QKeySequence(window.shortcuts[spec.key]).toString(
            QKeySequence.SequenceFormat.NativeText
        )
        assert listed[keys] == f"View ▸ {spec.title}"
    assert listed["Ctrl+K"] == "View ▸ Search or jump"
    assert listed["Ctrl+Q"] == "File ▸ Quit"
    dialog.close()


def test_about_names_the_version_workspace_and_daemon(window: MainWindow, tmp_path: Path) -> None:
    dialog = window.show_about()
    assert dialog.facts == {
        "Version": __version__,
        "Workspace": str(tmp_path / "ws"),
        "Daemon": URL,
    }
    assert dialog.findChild(QLabel, "aboutDaemon").text() == URL
    dialog.close()


def test_an_unknown_theme_is_refused(window: MainWindow) -> None:
    with pytest.raises(ValueError, match="theme 'sepia' is not one of"):
        window.set_theme("sepia")
    assert window.settings.theme() == "system"
