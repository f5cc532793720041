"""The tray icon: the daemon's state at a glance, its menu, and rate-limited failure notices.

The icon shows one of `TRAY_STATES` with the summary in the tooltip (`status_view.tray_state`:
the verdict of `service/verdict.py` on the status the window read, the same the status bar,
Health and Queue show; a failed item is counted there, it never turns the icon). The menu
only emits what was chosen; the desktop shell (`ui/app.py`) acts on it through the facade, off
the GUI thread. Failures seen on the bus (a crashed worker, a dead job) and a turn for the
worse in the state become notifications, at most one per kind per `NOTIFY_INTERVAL_S`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from signet_desktop.domain.events import Event, JobDead, WorkerStateChanged
from signet_desktop.ui.icon import tray_icon
from signet_desktop.ui.status_view import TrayState

APP_NAME = "Signet Desktop"
NOTIFY_INTERVAL_S = 60.0
NOTIFY_MS = 6000
_BAD = ("degraded", "error")


class TrayIcon(QSystemTrayIcon):
    """Tray presence and its menu; a click or "Open Inspector" shows the window."""

    open_chosen = Signal()
    search_chosen = Signal()
    pause_chosen = Signal(bool)  # True: pause the workers, False: resume them
    workspace_chosen = Signal()
    autostart_chosen = Signal(bool)
    quit_chosen = Signal()

    def __init__(
        self,
        parent: QObject | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        autostart: bool = False,
    ) -> None:
        super().__init__(tray_icon("healthy"), parent)
        self._clock = clock
        self._notified: dict[str, float] = {}
        self.state = TrayState("healthy", "Starting…")
        self.paused = False
        self.notices: list[tuple[str, str, str]] = []  # (kind, title, message) shown so far
        self.menu = QMenu()
        self.open_action = QAction("Open Inspector", self.menu)
        self.search_action = QAction("Search Memory…", self.menu)
        self.pause_action = QAction("Pause workers", self.menu)
        self.workspace_action = QAction("Open workspace folder", self.menu)
        self.autostart_action = QAction("Start at login", self.menu)
        self.autostart_action.setCheckable(True)
        self.autostart_action.setChecked(autostart)
        self.quit_action = QAction("Quit", self.menu)
        self.menu.addAction(self.open_action)
        self.menu.addAction(self.search_action)
        self.menu.addSeparator()
        self.menu.addAction(self.pause_action)
        self.menu.addAction(self.workspace_action)
        self.menu.addAction(self.autostart_action)
        self.menu.addSeparator()
        self.menu.addAction(self.quit_action)
        self.setContextMenu(self.menu)
        self.open_action.triggered.connect(self.open_chosen)
        self.search_action.triggered.connect(self.search_chosen)
        self.pause_action.triggered.connect(lambda: self.pause_chosen.emit(not self.paused))
        self.workspace_action.triggered.connect(self.workspace_chosen)
        self.autostart_action.toggled.connect(self.autostart_chosen)
        self.quit_action.triggered.connect(self.quit_chosen)
        self.activated.connect(self._activated)
        self._render()

    def show_state(self, state: TrayState, paused: bool) -> None:
        """New facts: icon, tooltip, the pause action; a turn for the worse notifies."""
        before = self.state
        self.state = state
        self.set_paused(paused)
        self._render()
        if state.state in _BAD and before.state != state.state:
            self.notify(state.state, APP_NAME, state.reason)

    def set_paused(self, paused: bool) -> None:
        self.paused = paused
        self.pause_action.setText("Resume workers" if paused else "Pause workers")

    def set_autostart(self, enabled: bool) -> None:
        self.autostart_action.blockSignals(True)
        self.autostart_action.setChecked(enabled)
        self.autostart_action.blockSignals(False)

    def note_event(self, event: Event) -> None:
        """Failures on the bus become notifications (rate-limited per kind)."""
        if isinstance(event, WorkerStateChanged) and event.state == "crashed":
            detail = f": {event.error}" if event.error else ""
            self.notify("worker.crashed", "A worker stopped", f"{event.worker} crashed{detail}")
        elif isinstance(event, JobDead):
            kind = event.job_type.replace("_", " ").capitalize()
            self.notify("job.dead", f"{kind} job failed", f"{event.error} (Retry it in Queue)")

    def notify(self, kind: str, title: str, message: str) -> bool:
        """Show a notification unless one of this kind was shown in the last minute."""
        now = self._clock()
        last = self._notified.get(kind)
        if last is not None and now - last < NOTIFY_INTERVAL_S:
            return False
        self._notified[kind] = now
        self.notices.append((kind, title, message))
        icon = QSystemTrayIcon.MessageIcon.Information
        if kind in _BAD or kind.startswith(("worker.", "job.")):
            icon = QSystemTrayIcon.MessageIcon.Warning
        if self.isVisible():
            self.showMessage(title, message, icon, NOTIFY_MS)
        return True

    def _render(self) -> None:
        self.setIcon(tray_icon(self.state.state))
        self.setToolTip(f"{APP_NAME}\n{self.state.reason}")

    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (
            QSystemTrayIcon.ActivationReason.Trigger,
            QSystemTrayIcon.ActivationReason.DoubleClick,
        ):
            self.open_chosen.emit()
