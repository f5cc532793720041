"""The tray icon and its menu (Open, Quit)."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QIcon
from PySide6.QtWidgets import QMenu, QSystemTrayIcon


class TrayIcon(QSystemTrayIcon):
    """Tray presence: a click or "Open" shows the window, "Quit" stops the daemon."""

    open_chosen = Signal()
    quit_chosen = Signal()

    def __init__(self, icon: QIcon, tooltip: str, parent: QObject | None = None) -> None:
        super().__init__(icon, parent)
        self.setToolTip(tooltip)
        self.menu = QMenu()
        self.open_action = QAction("Open Signet Desktop", self.menu)
        self.quit_action = QAction("Quit", self.menu)
        self.menu.addAction(self.open_action)
        self.menu.addSeparator()
        self.menu.addAction(self.quit_action)
        self.setContextMenu(self.menu)
        self.open_action.triggered.connect(self.open_chosen)
        self.quit_action.triggered.connect(self.quit_chosen)
        self.activated.connect(self._activated)

    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (
            QSystemTrayIcon.ActivationReason.Trigger,
            QSystemTrayIcon.ActivationReason.DoubleClick,
        ):
            self.open_chosen.emit()
