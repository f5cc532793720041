"""The command palette shows live recall hits as you type and is sized to its rows."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from signet_desktop.domain.memory import Actor
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest
from signet_desktop.ui.command_palette import (
    MAX_VISIBLE_ROWS,
    MEMORY_ROLE,
    CommandPalette,
    palette_entries,
)
from signet_desktop.ui.event_bridge import EventBridge
from signet_desktop.ui.main_window import MainWindow
from signet_desktop.ui.settings import ShellSettings
from signet_desktop.ui.style import LIGHT, stylesheet
from tests.ui.test_health_pane import wait_until
from tests.ui.test_main_window import SPECS, make_window, pane, show_active

pytestmark = pytest.mark.gui


def labels(palette: CommandPalette) -> list[str]:
    return [palette.list.item(row).text() for row in range(palette.list.count())]


def kinds(palette: CommandPalette) -> list[str]:
    return [
        palette.list.item(row).data(Qt.ItemDataRole.UserRole) for row in range(palette.list.count())
    ]


def fits(palette: CommandPalette) -> bool:
    """No blank space: the popup ends where its list does (plus the margin), and up to
    MAX_VISIBLE_ROWS rows show without scrolling."""
    palette.list.doItemsLayout()
    bottom = palette.list.geometry().bottom() if palette.list.isVisible() else 0
    scrolls = palette.list.verticalScrollBar().maximum() > 0
    return (
        palette.height() == palette.sizeHint().height()
        and palette.height() - bottom <= 12
        and (not scrolls or palette.list.count() > MAX_VISIBLE_ROWS)
    )


def opened(qtbot: QtBot, window: MainWindow) -> CommandPalette:
    window.setStyleSheet(stylesheet(LIGHT))  # the real rows' padding
    show_active(qtbot, window)
    qtbot.keyClick(window, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    palette = window.command_palette
    assert palette.isVisible()
    return palette


def test_typing_shows_live_recall_hits_and_enter_opens_the_memory(
    qtbot: QtBot,
    service: SignetService,
    bridge: EventBridge,
    settings: ShellSettings,
    qt_loop: asyncio.AbstractEventLoop,
) -> None:
    memory = service.memories.remember(
        RememberRequest(content="Invoices live in PostgreSQL 16 on the billing host."), Actor()
    ).memory
    service.memories.remember(RememberRequest(content="The frontend is Svelte."), Actor())
    window = make_window(qtbot, service, bridge, settings)
    palette = opened(qtbot, window)
    shown: list[str] = []
    palette.hits_shown.connect(shown.append)
    qtbot.keyClicks(palette.input, "invoices")
    wait_until(lambda: shown == ["invoices"])  # one read once typing paused
    assert kinds(palette) == ["search", MEMORY_ROLE]
    assert labels(palette)[1].startswith("Invoices live in PostgreSQL 16")
    assert fits(palette)

    qtbot.keyClick(palette.input, Qt.Key.Key_Down)
    qtbot.keyClick(palette.input, Qt.Key.Key_Return)
    assert not palette.isVisible()
    assert window.current_key == "memories"
    assert pane(window, "memories").calls[-1] == ("reveal", {"memory_id": memory.id})


def test_hits_for_older_text_are_never_shown_for_newer_text(
    qtbot: QtBot,
    service: SignetService,
    bridge: EventBridge,
    settings: ShellSettings,
    qt_loop: asyncio.AbstractEventLoop,
) -> None:
    service.memories.remember(RememberRequest(content="Invoices live in PostgreSQL."), Actor())
    window = make_window(qtbot, service, bridge, settings)
    palette = opened(qtbot, window)
    shown: list[str] = []
    palette.hits_shown.connect(shown.append)
    qtbot.keyClicks(palette.input, "invoices")
    wait_until(lambda: shown == ["invoices"])
    qtbot.keyClicks(palette.input, " zzqv")  # the old hits go at once; the new read finds none
    assert kinds(palette) == ["search"]
    wait_until(lambda: shown[-1] == "invoices zzqv")
    assert kinds(palette) == ["search"]
    assert fits(palette)


def test_the_popup_fits_its_rows_as_they_change(
    qtbot: QtBot, service: SignetService, bridge: EventBridge, settings: ShellSettings, qt_loop: Any
) -> None:
    window = make_window(qtbot, service, bridge, settings)
    palette = opened(qtbot, window)
    assert len(labels(palette)) == len(SPECS) and fits(palette)
    tall = palette.height()
    qtbot.keyClicks(palette.input, "heal")
    assert labels(palette)[1].startswith("Go to Health")
    assert fits(palette) and palette.height() < tall + 1
    qtbot.keyClicks(palette.input, "thy and more")  # no pane matches: the search row only
    assert len(labels(palette)) == 1 and fits(palette)
    assert palette.height() < tall


def test_pane_rows_name_the_windows_shortcut() -> None:
    rows = palette_entries("mem", SPECS, {"memories": "Ctrl+2"})
    assert [r.label for r in rows] == ["Search memory for “mem”", "Go to Memories   Ctrl+2"]
