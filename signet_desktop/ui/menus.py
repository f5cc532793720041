"""The window's menu bar: File (Import…, Quit), View (every pane, search, theme), Help.

The menu actions are the window's keyboard shortcuts: each pane's sequence from
`pane_shortcuts()` lives on its View action (no separate QShortcut), so the menu, the rail's
tooltips and Help ▸ Keyboard shortcuts all read the same registrations.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu

from signet_desktop.ui.icon import icon
from signet_desktop.ui.pane import PaneSpec
from signet_desktop.ui.settings import THEMES

THEME_LABELS = {"system": "Follow the system", "light": "Light", "dark": "Dark"}


@dataclass(frozen=True, slots=True)
class MenuTargets:
    """What the menu items do (the window's own methods)."""

    show_pane: Callable[[str], None]
    import_history: Callable[[], None]
    quit: Callable[[], None]
    open_palette: Callable[[], None]
    step_pane: Callable[[int], None]
    set_theme: Callable[[str], None]
    show_shortcuts: Callable[[], object]
    show_about: Callable[[], object]


def build_menus(
    window: QMainWindow,
    specs: Sequence[PaneSpec],
    shortcuts: Mapping[str, str],
    targets: MenuTargets,
    theme: str,
) -> dict[str, QAction]:
    """Fill `window`'s menu bar; returns every action by object name (tests trigger them)."""
    bar = window.menuBar()
    actions: dict[str, QAction] = {}

    def add(
        menu: QMenu, name: str, text: str, slot: Callable[[], object], keys: str = ""
    ) -> QAction:
        action = menu.addAction(text)
        action.setObjectName(name)
        if keys:
            action.setShortcut(QKeySequence(keys))
        action.triggered.connect(lambda _checked=False: slot())
        actions[name] = action
        return action

    file_menu = bar.addMenu("&File")
    add(file_menu, "menuImport", "&Import history…", targets.import_history, "Ctrl+I")
    file_menu.addSeparator()
    add(file_menu, "menuQuit", "&Quit", targets.quit, "Ctrl+Q")

    view = bar.addMenu("&View")
    for spec in specs:
        pane = add(view, f"menuPane-{spec.key}", spec.title, partial(targets.show_pane, spec.key))
        pane.setIcon(icon(spec.icon))
        if spec.key in shortcuts:
            pane.setShortcut(QKeySequence(shortcuts[spec.key]))
    view.addSeparator()
    add(view, "menuSearch", "&Search or jump…", targets.open_palette, "Ctrl+K")
    add(view, "menuNextPane", "&Next pane", partial(targets.step_pane, 1), "Ctrl+Tab")
    add(
        view, "menuPreviousPane", "&Previous pane", partial(targets.step_pane, -1), "Ctrl+Shift+Tab"
    )
    view.addSeparator()
    themes = view.addMenu("&Theme")
    group = QActionGroup(themes)
    for choice in THEMES:
        label = THEME_LABELS.get(choice, choice.title())
        item = add(themes, f"menuTheme-{choice}", label, partial(targets.set_theme, choice))
        item.setCheckable(True)
        item.setChecked(choice == theme)
        group.addAction(item)

    help_menu = bar.addMenu("&Help")
    add(help_menu, "menuShortcuts", "&Keyboard shortcuts", targets.show_shortcuts, "F1")
    add(help_menu, "menuAbout", "&About Signet Desktop", targets.show_about)
    return actions
