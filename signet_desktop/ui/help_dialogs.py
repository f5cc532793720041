"""Help ▸ Keyboard shortcuts and Help ▸ About: small read-only dialogs.

The shortcut list is read from the window's actions (their menu, text and key sequence) at the
time it opens, so it lists exactly what is registered, never a hand-kept copy.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from signet_desktop import __version__
from signet_desktop.ui.widgets import vbox


@dataclass(frozen=True, slots=True)
class ShortcutRow:
    """One registered shortcut: where it lives, what it does, its keys."""

    menu: str
    text: str
    keys: str


def shortcut_rows(actions: Iterable[QAction], menus: dict[QAction, str]) -> list[ShortcutRow]:
    """Each action that has a key sequence, in menu order, with its `&` mnemonics removed."""
    rows = []
    for action in actions:
        keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
        if keys:
            text = action.text().replace("&&", "\0").replace("&", "").replace("\0", "&")
            rows.append(ShortcutRow(menus.get(action, ""), text.rstrip("…"), keys))
    return rows


class ShortcutsDialog(QDialog):
    """Every shortcut the window registers, grouped by menu."""

    def __init__(self, rows: list[ShortcutRow], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("shortcutsDialog")
        self.setWindowTitle("Keyboard shortcuts")
        self.table = QTreeWidget()
        self.table.setObjectName("shortcutList")
        self.table.setHeaderLabels(["Action", "Keys"])
        self.table.setRootIsDecorated(False)
        for row in rows:
            label = f"{row.menu} ▸ {row.text}" if row.menu else row.text
            self.table.addTopLevelItem(QTreeWidgetItem([label, row.keys]))
        self.table.resizeColumnToContents(0)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        column = QVBoxLayout(self)
        column.addWidget(self.table, 1)
        column.addWidget(buttons)
        self.resize(460, 420)


class AboutDialog(QDialog):
    """Version, workspace and daemon URL (selectable, to paste into a bug report)."""

    def __init__(self, workspace: str, url: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("aboutDialog")
        self.setWindowTitle("About Signet Desktop")
        title = QLabel("Signet Desktop")
        title.setProperty("role", "title")
        blurb = QLabel("A local-first memory service for AI coding agents.")
        blurb.setWordWrap(True)
        form = QFormLayout()
        self.facts: dict[str, str] = {
            "Version": __version__,
            "Workspace": workspace or "none",
            "Daemon": url or "not serving HTTP",
        }
        for name, value in self.facts.items():
            label = QLabel(value)
            label.setObjectName(f"about{name}")
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            form.addRow(f"{name}:", label)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        vbox(title, blurb, form, buttons, parent=self)
