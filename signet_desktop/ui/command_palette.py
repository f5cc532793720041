"""The command palette (Ctrl+K): type to search memory, or jump to a pane by name.

The first row searches recall for what was typed; the rows below are the registered panes whose
title matches. Up/Down move through the rows while typing continues, Enter runs the selected
row, Escape closes. The palette only emits what was chosen; the window navigates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QDialog, QLineEdit, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from signet_desktop.ui.icon import icon
from signet_desktop.ui.pane import PaneSpec

SEARCH_ROLE = "search"
PALETTE_WIDTH = 560
_KIND = Qt.ItemDataRole.UserRole
_VALUE = Qt.ItemDataRole.UserRole + 1


@dataclass(frozen=True, slots=True)
class PaletteEntry:
    """One row: search recall for `value`, or open the pane whose key is `value`."""

    kind: str  # "search" | "pane"
    value: str
    label: str
    icon: str


def palette_entries(text: str, specs: Sequence[PaneSpec]) -> list[PaletteEntry]:
    """The rows for `text` (pure: tested without a window)."""
    query = text.strip()
    rows: list[PaletteEntry] = []
    if query:
        rows.append(PaletteEntry(SEARCH_ROLE, query, f"Search memory for “{query}”", "search"))
    needle = query.casefold()
    for spec in specs:
        if not needle or needle in spec.title.casefold() or needle in spec.key:
            hint = f"   {spec.shortcut}" if spec.shortcut else ""
            rows.append(PaletteEntry("pane", spec.key, f"Go to {spec.title}{hint}", spec.icon))
    return rows


class CommandPalette(QDialog):
    """A popup over the window; `search_chosen(text)` or `pane_chosen(key)` when run."""

    search_chosen = Signal(str)
    pane_chosen = Signal(str)

    def __init__(self, specs: Sequence[PaneSpec], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("commandPalette")
        self.setWindowFlags(Qt.WindowType.Popup | Qt.WindowType.FramelessWindowHint)
        self._specs = list(specs)
        self.input = QLineEdit()
        self.input.setPlaceholderText("Search memory, or type a pane name…")
        self.input.setClearButtonEnabled(True)
        self.list = QListWidget()
        self.list.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        column = QVBoxLayout(self)
        column.setContentsMargins(10, 10, 10, 10)
        column.addWidget(self.input)
        column.addWidget(self.list)
        self.setFixedWidth(PALETTE_WIDTH)
        self.input.textChanged.connect(self._refill)
        self.input.returnPressed.connect(self.run_selected)
        self.input.installEventFilter(self)
        self.list.itemActivated.connect(lambda _item: self.run_selected())
        self.list.itemClicked.connect(lambda _item: self.run_selected())
        self._refill("")

    def set_specs(self, specs: Sequence[PaneSpec]) -> None:
        self._specs = list(specs)
        self._refill(self.input.text())

    def open_over(self, window: QWidget, text: str = "") -> None:
        """Show centred near the top of `window`, input focused, prefilled with `text`."""
        self.input.setText(text)
        self._refill(text)
        self.adjustSize()
        top_left = window.mapToGlobal(window.rect().topLeft())
        x = top_left.x() + max((window.width() - self.width()) // 2, 0)
        self.move(x, top_left.y() + 60)
        self.show()
        self.raise_()
        self.activateWindow()
        self.input.setFocus()
        self.input.selectAll()

    def entries(self) -> list[PaletteEntry]:
        return palette_entries(self.input.text(), self._specs)

    def run_selected(self) -> None:
        item = self.list.currentItem()
        if item is None:
            return
        kind, value = item.data(_KIND), item.data(_VALUE)
        self.hide()
        if kind == SEARCH_ROLE:
            self.search_chosen.emit(value)
        else:
            self.pane_chosen.emit(value)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.input and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            step = {Qt.Key.Key_Down: 1, Qt.Key.Key_Up: -1}.get(Qt.Key(event.key()))
            if step is not None and self.list.count():
                row = (self.list.currentRow() + step) % self.list.count()
                self.list.setCurrentRow(row)
                return True
        return super().eventFilter(watched, event)

    def _refill(self, text: str) -> None:
        self.list.clear()
        for entry in palette_entries(text, self._specs):
            item = QListWidgetItem(icon(entry.icon), entry.label)
            item.setData(_KIND, entry.kind)
            item.setData(_VALUE, entry.value)
            self.list.addItem(item)
        if self.list.count():
            self.list.setCurrentRow(0)
        rows = max(min(self.list.count(), 8), 1)
        self.list.setFixedHeight(rows * 34 + 6)
