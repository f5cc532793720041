"""Every pane shortcut the window registers is unique, and pressing it shows its pane."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from signet_desktop.service.facade import SignetService
from signet_desktop.ui.event_bridge import EventBridge
from signet_desktop.ui.main_window import MainWindow
from signet_desktop.ui.pane import PaneContext, PaneSpec, PaneWidget, discover_panes, pane_shortcuts
from signet_desktop.ui.settings import ShellSettings

pytestmark = pytest.mark.gui


def light_pane(context: PaneContext) -> PaneWidget:
    return PaneWidget(context)


def spec(key: str, order: int, shortcut: str | None = None) -> PaneSpec:
    return PaneSpec(key, key.title(), f"{key}.svg", order, light_pane, shortcut)


def registered(window: QWidget) -> list[str]:
    """Every key sequence bound in the window: its QShortcuts and its actions'."""
    sequences = [s.key().toString() for s in window.findChildren(QShortcut)]
    for action in window.findChildren(QAction):
        sequences.extend(k.toString() for k in action.shortcuts())
    return [s for s in sequences if s]


def test_a_pane_without_a_shortcut_never_takes_a_later_panes_own() -> None:
    """The bug: the sixth pane had none (implicit Ctrl+6) and the seventh said Ctrl+6."""
    specs = [spec(f"p{n}", n, f"Ctrl+{n}") for n in range(1, 6)]
    specs += [spec("proposals", 6), spec("queue", 7, "Ctrl+6"), spec("late", 8, "Ctrl+1")]
    shortcuts = pane_shortcuts(specs)
    assert shortcuts["queue"] == "Ctrl+6"  # its own
    assert shortcuts["proposals"] == "Ctrl+7"  # the first digit nobody claims
    assert shortcuts["p1"] == "Ctrl+1" and shortcuts["late"] == "Ctrl+8"  # first claim wins
    assert len(set(shortcuts.values())) == len(shortcuts)


def test_the_shipped_panes_claim_distinct_shortcuts_of_their_own() -> None:
    specs = discover_panes()
    own = [QKeySequence(s.shortcut).toString() for s in specs if s.shortcut]
    assert len(own) == len(specs) and len(set(own)) == len(own)
    assert pane_shortcuts(specs) == {s.key: QKeySequence(s.shortcut).toString() for s in specs}


def test_every_window_shortcut_is_unique_and_shows_its_pane(
    qtbot: QtBot, service: SignetService, bridge: EventBridge, tmp_path: Path, qt_loop: Any
) -> None:
    specs = [dataclasses.replace(s, factory=light_pane) for s in discover_panes()]
    window = MainWindow(
        service,
        events=bridge,
        settings=ShellSettings.at(tmp_path / "settings.ini"),
        specs=specs,
    )
    qtbot.addWidget(window)
    with qtbot.waitActive(window):
        window.show()
        window.activateWindow()
    sequences = registered(window)
    assert len(sequences) == len(set(sequences)), sequences
    assert {"Ctrl+K", "Ctrl+Tab", "Ctrl+Shift+Tab"} <= set(sequences)
    for index, pane in enumerate(reversed(specs)):  # the last first: each press is a change
        sequence = window.shortcut_of(len(specs) - 1 - index)
        assert sequence in sequences, pane.key
        with qtbot.waitSignal(window.pane_shown, timeout=2000) as shown:
            QTest.keySequence(window, QKeySequence(sequence))
        assert shown.args == [pane.key]
        assert window.current_key == pane.key
        assert window.stack.currentWidget() is window.panes[pane.key]
