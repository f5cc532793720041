"""The inspector window: a navigation rail of registered panes, the pane area and a status bar.

The rail lists whatever `discover_panes()` found (or the specs a test passes); the shell names no
pane. Panes are built on first show into a QStackedWidget and reached by click, arrow keys,
each pane's own shortcut (unique: Ctrl+1..9, Ctrl+0), Ctrl+Tab or the command palette (Ctrl+K);
those shortcuts are the actions of the menu bar (`menus.py`: File, View, Help).
The window is the panes' `Navigator`. It fits a 1024×640 laptop screen (MIN_SIZE).
The status bar is re-read off the GUI thread when an event says something changed (debounced),
never on a timer. A pane that fails to build or act shows a banner; the window keeps working.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QSize, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMenu,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from signet_desktop.domain.events import Event
from signet_desktop.domain.memory import DEFAULT_AGENT_ID
from signet_desktop.service.facade import SignetService
from signet_desktop.ui.command_palette import CommandPalette, recall_entries
from signet_desktop.ui.empty_state import Banner, EmptyState
from signet_desktop.ui.event_bridge import EventBridge
from signet_desktop.ui.help_dialogs import AboutDialog, ShortcutsDialog, shortcut_rows
from signet_desktop.ui.icon import icon
from signet_desktop.ui.menus import MenuTargets, build_menus
from signet_desktop.ui.pane import (
    PaneContext,
    PaneSpec,
    PaneWidget,
    discover_panes,
    pane_shortcuts,
)
from signet_desktop.ui.settings import ShellSettings
from signet_desktop.ui.status_bar import StatusBar
from signet_desktop.ui.status_view import StatusView, read_status
from signet_desktop.ui.style import apply_style
from signet_desktop.ui.tasks import TaskRunner
from signet_desktop.ui.widgets import hbox, single_shot, vbox

log = logging.getLogger(__name__)

STATUS_DEBOUNCE_MS = 250  # a burst of events (an import, a backfill) costs one read
REFRESH_ON = (
    "memory.",
    "status.changed",
    "worker.state",
    "embedding.progress",
    "job.",
    "queue.repaired",
)
RECALL_PANE = "recall"
MEMORIES_PANE = "memories"
TRANSCRIPTS_PANE = "transcripts"
DEFAULT_SIZE = QSize(1120, 720)
MIN_SIZE = QSize(1024, 640)  # a laptop screen: every pane fits (tests/ui/test_laptop_size.py)
RAIL_WIDTH = 176
RAIL_ROW_HEIGHT = 36
_KEY = Qt.ItemDataRole.UserRole


class MainWindow(QMainWindow):
    """The shell: rail + panes + status bar; implements `Navigator` for its panes."""

    quit_requested = Signal()
    hidden_to_tray = Signal()  # closed while the tray keeps the daemon
    pane_shown = Signal(str)
    status_read = Signal(object)  # a fresh StatusView (the tray follows it too)

    def __init__(
        self,
        service: SignetService,
        *,
        events: EventBridge,
        settings: ShellSettings,
        url: str = "",
        workspace: Path | str = "",
        specs: Sequence[PaneSpec] | None = None,
        tasks: TaskRunner | None = None,
        hide_on_close: bool = False,
        agent_id: str = DEFAULT_AGENT_ID,
    ) -> None:
        super().__init__()
        self.service = service
        self.events = events
        self.settings = settings
        self.tasks = tasks or TaskRunner()
        self.hide_on_close = hide_on_close
        self.agent_id = agent_id
        self.specs: list[PaneSpec] = list(discover_panes() if specs is None else specs)
        self.shortcuts = pane_shortcuts(self.specs)  # pane key -> its key sequence, unique
        self.context = PaneContext(
            service=service,
            events=events,
            tasks=self.tasks,
            navigator=self,
            workspace=Path(workspace),
            url=url,
            agent_id=agent_id,
            settings=settings,
        )
        self.panes: dict[str, QWidget] = {}  # built lazily: a PaneWidget, or its failure
        self.current_key: str | None = None
        self._listening = False
        self._reading = False
        self._stale = False
        self.setWindowTitle("Signet Desktop")
        self._build()
        self.status.set_url(url)
        self._debounce = single_shot(self, STATUS_DEBOUNCE_MS, self.refresh_status)
        self._restore()

    # -- layout -----------------------------------------------------------------------------

    def _build(self) -> None:
        self.rail = QListWidget()
        self.rail.setObjectName("rail")
        self.rail.setIconSize(QSize(20, 20))
        self.rail.setFixedWidth(RAIL_WIDTH)
        for index, spec in enumerate(self.specs):
            item = QListWidgetItem(icon(spec.icon), spec.title)
            item.setData(_KEY, spec.key)
            item.setSizeHint(QSize(0, RAIL_ROW_HEIGHT))
            shortcut = self.shortcut_of(index)
            item.setToolTip(f"{spec.title} ({shortcut})" if shortcut else spec.title)
            self.rail.addItem(item)
        self.rail.currentRowChanged.connect(self._rail_changed)
        self.search_button = QPushButton(icon("search"), " Search…  Ctrl+K")
        self.search_button.setObjectName("railSearch")
        self.search_button.setToolTip("Search memory or jump to a pane (Ctrl+K)")
        self.search_button.clicked.connect(lambda: self.open_palette())
        self.command_palette = CommandPalette(
            self.specs,
            self,
            shortcuts=self.shortcuts,
            tasks=self.tasks,
            lookup=partial(recall_entries, self.service, self.agent_id),
        )
        self.command_palette.search_chosen.connect(self.search_memory)
        self.command_palette.pane_chosen.connect(lambda key: self.show_pane(key))
        self.command_palette.memory_chosen.connect(self.open_memory)

        rail_column = QVBoxLayout()
        rail_column.setContentsMargins(0, 0, 1, 0)  # 1 px: the rail's right border shows
        rail_column.setSpacing(0)
        title = QLabel("SIGNET")
        title.setObjectName("railTitle")
        rail_column.addWidget(title)
        search_row = QHBoxLayout()
        search_row.setContentsMargins(8, 4, 8, 4)
        search_row.addWidget(self.search_button)
        rail_column.addLayout(search_row)
        rail_column.addWidget(self.rail, 1)
        rail_box = QWidget()
        rail_box.setObjectName("railBox")
        rail_box.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        rail_box.setFixedWidth(RAIL_WIDTH)
        rail_box.setLayout(rail_column)

        self.banner = Banner()
        self.stack = QStackedWidget()
        self.no_panes = EmptyState(
            "palette",
            "No panes installed",
            "Panes are modules under signet_desktop/ui/panes that define PANE; none was found.",
        )
        self.stack.addWidget(self.no_panes)
        content = vbox(self.banner, (self.stack, 1), margins=(12, 8, 12, 6))
        body = hbox(rail_box, (content, 1), margins=(0, 0, 0, 0), spacing=0)
        central = QWidget()
        central.setLayout(body)
        self.setCentralWidget(central)
        self.status = StatusBar(self)
        self.setStatusBar(self.status)
        self.status.failures_chosen.connect(lambda: self.show_pane("queue", state="dead"))
        self._menus()

    def _menus(self) -> None:
        targets = MenuTargets(
            show_pane=lambda key: self.show_pane(key),
            import_history=lambda: self.show_pane(TRANSCRIPTS_PANE, sources=True),
            quit=self.quit_requested.emit,
            open_palette=lambda: self.open_palette(),
            step_pane=self.step_pane,
            set_theme=self.set_theme,
            show_shortcuts=self.show_shortcuts,
            show_about=self.show_about,
        )
        self.menu_actions = build_menus(
            self, self.specs, self.shortcuts, targets, self.settings.theme()
        )

    def set_theme(self, choice: str) -> None:
        """View ▸ Theme: remember the choice (refused when unknown) and restyle the app."""
        self.settings.set_theme(choice)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            apply_style(app, choice)

    def show_shortcuts(self) -> ShortcutsDialog:
        """Help ▸ Keyboard shortcuts, read from the menu bar's actions."""
        menus: dict[QAction, str] = {}
        for menu_action in self.menuBar().actions():
            menu = menu_action.menu()
            if isinstance(menu, QMenu):
                menus.update(
                    (action, menu.title().replace("&", "")) for action in _all_actions(menu)
                )
        dialog = ShortcutsDialog(shortcut_rows(list(menus), menus), self)
        dialog.open()
        return dialog

    def show_about(self) -> AboutDialog:
        dialog = AboutDialog(str(self.context.workspace), self.context.url, self)
        dialog.open()
        return dialog

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:  # e.g. a theme chosen in Settings
            for row, spec in enumerate(self.specs):  # line icons are drawn in its colour
                self.rail.item(row).setIcon(icon(spec.icon))
            self.search_button.setIcon(icon("search"))
        super().changeEvent(event)

    def shortcut_of(self, index: int) -> str | None:
        """The rail row's key sequence (`pane_shortcuts`: its own, else a free Ctrl+digit)."""
        return self.shortcuts.get(self.specs[index].key)

    # -- Navigator ----------------------------------------------------------------------------

    def show_pane(self, key: str, **reveal: Any) -> None:
        """Switch to pane `key` (building it on first show) and pass it `reveal`."""
        spec = self._spec(key)
        if spec is None:
            self.show_failure(f"There is no “{key}” pane in this build.")
            return
        widget = self.panes.get(key) or self._create(spec)
        if self.current_key != key:
            self._call_hook(self.current_key, "deactivated")
            self.stack.setCurrentWidget(widget)
            self.current_key = key
            self._select_rail(key)
            self._call_hook(key, "activated")
            self.settings.set_last_pane(key)
        if reveal:
            self._call_hook(key, "reveal", **reveal)
        self.pane_shown.emit(key)

    def open_memory(self, memory_id: str) -> None:
        self.show_pane(MEMORIES_PANE, memory_id=memory_id)

    def search_memory(self, text: str) -> None:
        """The Recall pane, searching `text`."""
        self.show_pane(RECALL_PANE, query=text)

    def step_pane(self, step: int) -> None:
        if self.specs:
            row = (max(self.rail.currentRow(), 0) + step) % len(self.specs)
            self.show_pane(self.specs[row].key)

    def open_palette(self, text: str = "") -> None:
        self.command_palette.open_over(self, text)

    def show_failure(self, text: str) -> None:
        """An inline error banner above the pane area."""
        log.warning("%s", text)
        self.banner.show_message(text, "error")

    def _spec(self, key: str) -> PaneSpec | None:
        return next((spec for spec in self.specs if spec.key == key), None)

    def _create(self, spec: PaneSpec) -> QWidget:
        widget: QWidget
        try:
            widget = spec.factory(self.context)
        except Exception as exc:  # a broken pane must not take the window down
            log.exception("pane %s failed to build", spec.key)
            self.show_failure(f"The {spec.title} pane could not open: {exc}")
            widget = EmptyState(spec.icon, f"{spec.title} is unavailable", str(exc))
        self.panes[spec.key] = widget
        self.stack.addWidget(widget)
        return widget

    def _call_hook(self, key: str | None, hook: str, **kwargs: Any) -> None:
        pane = self.panes.get(key) if key is not None else None
        if not isinstance(pane, PaneWidget):
            return
        try:
            getattr(pane, hook)(**kwargs)
        except Exception as exc:
            log.exception("pane %s: %s failed", key, hook)
            self.show_failure(f"{self._title(key)}: {exc}")

    def _title(self, key: str | None) -> str:
        spec = self._spec(key or "")
        return spec.title if spec is not None else str(key)

    def _select_rail(self, key: str) -> None:
        for row in range(self.rail.count()):
            if self.rail.item(row).data(_KEY) == key:
                self.rail.blockSignals(True)
                self.rail.setCurrentRow(row)
                self.rail.blockSignals(False)
                return

    def _rail_changed(self, row: int) -> None:
        if 0 <= row < len(self.specs):
            self.show_pane(self.specs[row].key)

    # -- status -------------------------------------------------------------------------------

    def start_refreshing(self) -> None:
        """Read the status now and whenever an event says it changed (once the loop runs)."""
        if not self._listening:
            self.events.event_published.connect(self._event_published)
            self._listening = True
        self.refresh_status()

    def stop_refreshing(self) -> None:
        if self._listening:
            self.events.event_published.disconnect(self._event_published)
            self._listening = False
        self._debounce.stop()

    def refresh_status(self) -> None:
        """Re-read the status facts in a worker thread (one read at a time; coalesced)."""
        if self._reading:
            self._stale = True
            return
        self._reading = True
        self.tasks.call(
            read_status,
            self.service,
            self.agent_id,
            done=self._status_done,
            failed=self._status_failed,
        )

    def _status_done(self, view: StatusView) -> None:
        self._reading = False
        self.status.show_view(view)
        self.status_read.emit(view)
        self._again()

    def _status_failed(self, exc: BaseException) -> None:
        self._reading = False
        log.warning("status unavailable: %s", exc)
        self.status.show_failure(f"status unavailable: {exc}")
        self._again()

    def _again(self) -> None:
        if self._stale:
            self._stale = False
            self._debounce.start()

    def _event_published(self, event: Event) -> None:
        self.status.note_event(event)
        if event.kind.startswith(REFRESH_ON) and not self._debounce.isActive():
            self._debounce.start()

    # -- lifetime -----------------------------------------------------------------------------

    def _restore(self) -> None:
        geometry = self.settings.geometry()
        if geometry is None or not self.restoreGeometry(geometry):
            self.resize(DEFAULT_SIZE)
        if not self.specs:
            return
        last = self.settings.last_pane()
        self.show_pane(last if last and self._spec(last) else self.specs[0].key)

    def save_state(self) -> None:
        self.settings.set_geometry(self.saveGeometry())
        if self.current_key is not None:
            self.settings.set_last_pane(self.current_key)
        self.settings.sync()

    def shutdown(self) -> None:
        """Stop listening, let every built pane clean up, cancel what is still running."""
        self.save_state()
        self.stop_refreshing()
        self.status.stop()
        for key in list(self.panes):
            self._call_hook(key, "shutdown")
        self.tasks.cancel_all()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_state()
        if self.hide_on_close:
            event.ignore()
            self.hide()
            self.hidden_to_tray.emit()
            return
        event.accept()
        self.quit_requested.emit()


def _all_actions(menu: QMenu) -> list[QAction]:
    """`menu`'s actions and its submenus', in order."""
    found: list[QAction] = []
    for action in menu.actions():
        submenu = action.menu()
        found.extend(_all_actions(submenu) if isinstance(submenu, QMenu) else [action])
    return found
