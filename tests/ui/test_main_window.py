"""The inspector shell: rail of registered panes, lazy panes, navigation, settings, status bar."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path
from typing import Any, ClassVar

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from signet_desktop.domain.memory import Actor
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest
from signet_desktop.ui.empty_state import EmptyState
from signet_desktop.ui.event_bridge import EventBridge
from signet_desktop.ui.main_window import MainWindow
from signet_desktop.ui.pane import PaneContext, PaneSpec, PaneWidget, discover_panes
from signet_desktop.ui.settings import ShellSettings

pytestmark = pytest.mark.gui


class FakePane(PaneWidget):
    """Records the hooks the shell called."""

    built: ClassVar[list[str]] = []

    def __init__(self, context: PaneContext, key: str) -> None:
        super().__init__(context)
        self.key = key
        self.calls: list[tuple[str, dict[str, Any]]] = []
        FakePane.built.append(key)

    def activated(self) -> None:
        self.calls.append(("activated", {}))

    def deactivated(self) -> None:
        self.calls.append(("deactivated", {}))

    def reveal(self, **reveal: Any) -> None:
        self.calls.append(("reveal", reveal))

    def shutdown(self) -> None:
        self.calls.append(("shutdown", {}))


def fake_spec(key: str, order: int, title: str | None = None) -> PaneSpec:
    return PaneSpec(
        key=key,
        title=title or key.title(),
        icon=f"{key}.svg",
        order=order,
        factory=lambda context: FakePane(context, key),
    )


def broken_factory(context: PaneContext) -> PaneWidget:
    raise RuntimeError("the pane exploded")


SPECS = [fake_spec("recall", 10), fake_spec("memories", 20), fake_spec("health", 90)]


@pytest.fixture(autouse=True)
def _reset_built() -> None:
    FakePane.built = []


def make_window(
    qtbot: QtBot,
    service: SignetService,
    bridge: EventBridge,
    settings: ShellSettings,
    specs: list[PaneSpec] | None = SPECS,
    **kwargs: Any,
) -> MainWindow:
    window = MainWindow(
        service,
        events=bridge,
        settings=settings,
        url="http://127.0.0.1:3850",
        workspace="/tmp/ws",
        specs=specs,
        **kwargs,
    )
    qtbot.addWidget(window)
    return window


def show_active(qtbot: QtBot, window: MainWindow) -> None:
    """Window shortcuts need the window to be the active one."""
    with qtbot.waitActive(window):
        window.show()
        window.activateWindow()


def pane(window: MainWindow, key: str) -> FakePane:
    widget = window.panes[key]
    assert isinstance(widget, FakePane)
    return widget


def test_rail_lists_registered_panes_and_builds_only_the_shown_one(
    qtbot: QtBot, service: SignetService, bridge: EventBridge, settings: ShellSettings, qt_loop: Any
) -> None:
    window = make_window(qtbot, service, bridge, settings)
    titles = [window.rail.item(row).text() for row in range(window.rail.count())]
    assert titles == ["Recall", "Memories", "Health"]
    assert window.current_key == "recall" and FakePane.built == ["recall"]
    assert window.stack.currentWidget() is window.panes["recall"]
    window.rail.setCurrentRow(2)  # a click on the rail
    assert window.current_key == "health" and FakePane.built == ["recall", "health"]
    assert pane(window, "recall").calls == [("activated", {}), ("deactivated", {})]
    assert pane(window, "health").calls == [("activated", {})]
    window.show_pane("recall")
    assert FakePane.built == ["recall", "health"]  # built once, reused


def test_a_pane_module_registers_itself_without_the_shell_naming_it(
    qtbot: QtBot,
    service: SignetService,
    bridge: EventBridge,
    settings: ShellSettings,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    qt_loop: Any,
) -> None:
    package = tmp_path / "plugins" / "extra_panes"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "ledger.py").write_text(
        textwrap.dedent(
            """
            from PySide6.QtWidgets import QLabel, QVBoxLayout
            from signet_desktop.ui.pane import PaneSpec, PaneWidget

            class LedgerPane(PaneWidget):
                def __init__(self, context):
                    super().__init__(context)
                    self.revealed = {}
                    QVBoxLayout(self).addWidget(QLabel("ledger pane"))

                def reveal(self, **reveal):
                    self.revealed = reveal

            PANE = PaneSpec(key="ledger", title="Ledger", icon="queue.svg", order=5,
                            factory=LedgerPane)
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path / "plugins"))
    try:
        specs = discover_panes("extra_panes") + SPECS
        window = make_window(qtbot, service, bridge, settings, specs=specs)
        assert window.rail.item(0).text() == "Ledger"
        assert window.current_key == "ledger"
        window.show_pane("ledger", entry="42")
        ledger = window.panes["ledger"]
        assert type(ledger).__name__ == "LedgerPane" and ledger.revealed == {"entry": "42"}  # type: ignore[attr-defined]
    finally:
        for name in [n for n in sys.modules if n.startswith("extra_panes")]:
            del sys.modules[name]


def test_by_default_the_rail_is_what_discover_panes_finds(
    qtbot: QtBot, service: SignetService, bridge: EventBridge, settings: ShellSettings, qt_loop: Any
) -> None:
    window = make_window(qtbot, service, bridge, settings, specs=None)
    assert [s.key for s in window.specs] == [s.key for s in discover_panes()]
    assert window.rail.count() == len(window.specs)


def test_navigator_reveals_and_open_memory_goes_to_memories(
    qtbot: QtBot, service: SignetService, bridge: EventBridge, settings: ShellSettings, qt_loop: Any
) -> None:
    window = make_window(qtbot, service, bridge, settings)
    window.context.navigator.open_memory("m-1")
    assert window.current_key == "memories"
    assert pane(window, "memories").calls == [("activated", {}), ("reveal", {"memory_id": "m-1"})]
    assert window.rail.currentRow() == 1  # the rail follows navigation
    window.show_pane("memories", memory_id="m-2")  # same pane: reveal only
    assert pane(window, "memories").calls[-1] == ("reveal", {"memory_id": "m-2"})
    assert [c for c, _ in pane(window, "memories").calls].count("activated") == 1


def test_keyboard_moves_between_panes(
    qtbot: QtBot, service: SignetService, bridge: EventBridge, settings: ShellSettings, qt_loop: Any
) -> None:
    window = make_window(qtbot, service, bridge, settings)
    show_active(qtbot, window)
    qtbot.keyClick(window, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)
    assert window.current_key == "health"
    qtbot.keyClick(window, Qt.Key.Key_1, Qt.KeyboardModifier.ControlModifier)
    assert window.current_key == "recall"
    window.rail.setFocus()
    qtbot.keyClick(window.rail, Qt.Key.Key_Down)
    assert window.current_key == "memories"
    qtbot.keyClick(window, Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier)
    assert window.current_key == "health"
    qtbot.keyClick(window, Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier)
    assert window.current_key == "recall"  # wraps around
    assert window.shortcut_of(1) == "Ctrl+2"


def test_command_palette_jumps_to_recall_with_the_query(
    qtbot: QtBot, service: SignetService, bridge: EventBridge, settings: ShellSettings, qt_loop: Any
) -> None:
    window = make_window(qtbot, service, bridge, settings)
    show_active(qtbot, window)
    window.show_pane("health")
    qtbot.keyClick(window, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    palette = window.command_palette
    assert palette.isVisible()
    qtbot.keyClicks(palette.input, "billing database")
    assert palette.list.item(0).text() == "Search memory for “billing database”"
    qtbot.keyClick(palette.input, Qt.Key.Key_Return)
    assert not palette.isVisible()
    assert window.current_key == "recall"
    assert pane(window, "recall").calls[-1] == ("reveal", {"query": "billing database"})


def test_command_palette_lists_panes_to_jump_to(
    qtbot: QtBot, service: SignetService, bridge: EventBridge, settings: ShellSettings, qt_loop: Any
) -> None:
    window = make_window(qtbot, service, bridge, settings)
    window.show()
    window.open_palette("heal")
    palette = window.command_palette
    labels = [palette.list.item(r).text() for r in range(palette.list.count())]
    assert labels[0] == "Search memory for “heal”"
    assert labels[1].startswith("Go to Health")
    qtbot.keyClick(palette.input, Qt.Key.Key_Down)
    qtbot.keyClick(palette.input, Qt.Key.Key_Return)
    assert window.current_key == "health"
    assert ("reveal", {}) not in pane(window, "health").calls


def test_a_broken_pane_shows_a_banner_and_the_window_keeps_working(
    qtbot: QtBot, service: SignetService, bridge: EventBridge, settings: ShellSettings, qt_loop: Any
) -> None:
    specs = [*SPECS, PaneSpec("broken", "Broken", "map.svg", 95, broken_factory)]
    window = make_window(qtbot, service, bridge, settings, specs=specs)
    window.show()
    window.show_pane("broken")
    assert window.banner.isVisible()
    assert "The Broken pane could not open: the pane exploded" in window.banner.text_label.text()
    assert isinstance(window.stack.currentWidget(), EmptyState)
    window.show_pane("memories")
    assert window.stack.currentWidget() is window.panes["memories"]
    window.banner.close_button.click()
    assert not window.banner.isVisible()
    window.show_pane("nowhere")
    assert "no “nowhere” pane" in window.banner.text_label.text()


def test_without_panes_the_window_says_so(
    qtbot: QtBot, service: SignetService, bridge: EventBridge, settings: ShellSettings, qt_loop: Any
) -> None:
    window = make_window(qtbot, service, bridge, settings, specs=[])
    assert window.stack.currentWidget() is window.no_panes
    assert window.no_panes.title_label.text() == "No panes installed"
    window.step_pane(1)  # nothing to step to, nothing breaks


def test_geometry_and_last_pane_survive_a_restart(
    qtbot: QtBot, service: SignetService, bridge: EventBridge, tmp_path: Path, qt_loop: Any
) -> None:
    path = tmp_path / "settings.ini"
    first = make_window(qtbot, service, bridge, ShellSettings.at(path))
    first.show()
    first.resize(700, 500)
    first.show_pane("health")
    first.close()  # no tray: closing saves and quits
    assert path.is_file()
    second = make_window(qtbot, service, bridge, ShellSettings.at(path))
    assert second.current_key == "health"
    assert (second.width(), second.height()) == (700, 500)
    assert FakePane.built.count("recall") == 1  # the second window built only health


def test_close_hides_with_a_tray_and_quits_without(
    qtbot: QtBot, service: SignetService, bridge: EventBridge, settings: ShellSettings, qt_loop: Any
) -> None:
    with_tray = make_window(qtbot, service, bridge, settings, hide_on_close=True)
    with_tray.show()
    quits: list[bool] = []
    with_tray.quit_requested.connect(lambda: quits.append(True))
    with qtbot.waitSignal(with_tray.hidden_to_tray, timeout=1000):
        with_tray.close()
    assert not with_tray.isVisible() and quits == []

    alone = make_window(qtbot, service, bridge, settings)
    alone.show()
    with qtbot.waitSignal(alone.quit_requested, timeout=1000):
        alone.close()


def test_shutdown_tells_every_built_pane(
    qtbot: QtBot, service: SignetService, bridge: EventBridge, settings: ShellSettings, qt_loop: Any
) -> None:
    window = make_window(qtbot, service, bridge, settings)
    window.show_pane("health")
    window.shutdown()
    assert pane(window, "recall").calls[-1] == ("shutdown", {})
    assert pane(window, "health").calls[-1] == ("shutdown", {})
    assert "memories" not in window.panes


def test_status_bar_shows_the_facts_read_off_the_gui_thread(
    qtbot: QtBot,
    service: SignetService,
    bridge: EventBridge,
    settings: ShellSettings,
    qt_loop: asyncio.AbstractEventLoop,
) -> None:
    service.memories.remember(RememberRequest(content="Invoices live in PostgreSQL."), Actor())
    service.memories.remember(RememberRequest(content="The frontend is Svelte."), Actor())
    service.status_board.set("startup", {"embedder": {"state": "running", "error": None}})
    window = make_window(qtbot, service, bridge, settings)
    window.refresh_status()
    qt_loop.run_until_complete(window.tasks.wait_idle())
    bar = window.status
    assert bar.state_label.text() == "Warming up (embedder)…"
    assert bar.memories_label.text() == "· 2 memories"
    assert bar.vectors_label.full_text() == "· keyword only (no embedder)"
    declared = len(service.pipeline.status().workers)  # declared, none hosted in this test
    assert declared >= 5  # transcript TTL, safety, artifacts, MEMORY.md, retention, ...
    assert bar.workers_label.full_text() == f"· {declared} workers pending"
    assert bar.url_label.text() == "http://127.0.0.1:3850"


def test_status_follows_the_event_bus_without_polling(
    qtbot: QtBot,
    service: SignetService,
    bridge: EventBridge,
    settings: ShellSettings,
    qt_loop: asyncio.AbstractEventLoop,
) -> None:
    """A memory remembered on another thread shows in the count: the bridge pushed it."""
    window = make_window(qtbot, service, bridge, settings)
    reads: list[int] = []
    window.status_read.connect(lambda view: reads.append(view.memory_count))

    async def scenario() -> None:
        window.start_refreshing()
        await window.tasks.wait_idle()
        assert reads == [0]
        await asyncio.sleep(0.6)
        assert reads == [0]  # nothing happened: nothing was read again
        for text in ("pushed, not polled", "a second one", "and a third"):
            await asyncio.to_thread(
                service.memories.remember, RememberRequest(content=text), Actor()
            )
        for _ in range(100):
            if reads[-1] == 3:
                break
            await asyncio.sleep(0.05)
        window.stop_refreshing()

    qt_loop.run_until_complete(scenario())
    assert reads[-1] == 3
    assert len(reads) <= 3  # the burst was debounced, not one read per event
    assert window.status.memories_label.text() == "· 3 memories"
    assert window.status.last_label.full_text().startswith("· A memory was stored ")


def test_a_failed_status_read_shows_in_place(
    qtbot: QtBot,
    service: SignetService,
    bridge: EventBridge,
    settings: ShellSettings,
    qt_loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse() -> object:
        raise RuntimeError("database is closed")

    monkeypatch.setattr(service, "status", refuse)
    window = make_window(qtbot, service, bridge, settings)
    window.refresh_status()
    qt_loop.run_until_complete(window.tasks.wait_idle())
    assert window.status.state_label.text() == "status unavailable: database is closed"
    assert window.status.dot_label.property("state") == "error"
