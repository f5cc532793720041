"""The command palette (Ctrl+K): type to search memory, jump to a pane, or open a live hit.

The first row searches recall for what was typed; the rows below are the registered panes whose
title matches, then the memories recall finds for the text as it is typed (read off the GUI
thread once typing pauses, one read at a time, through the window's `TaskRunner`). Up/Down
move through the rows while typing continues, Enter runs the selected row, Escape closes. The
popup is sized to its rows. The palette only emits what was chosen; the window navigates.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QDialog, QLineEdit, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from signet_desktop.domain.recall import RecallQuery
from signet_desktop.service.facade import SignetService
from signet_desktop.ui.hit_format import preview
from signet_desktop.ui.icon import icon
from signet_desktop.ui.pane import PaneSpec
from signet_desktop.ui.tasks import SingleFlight, TaskRunner
from signet_desktop.ui.widgets import single_shot

log = logging.getLogger(__name__)

SEARCH_ROLE = "search"
PANE_ROLE = "pane"
MEMORY_ROLE = "memory"
PALETTE_WIDTH = 560
MIN_ROW_HEIGHT = 34
MAX_VISIBLE_ROWS = 10
LIVE_DELAY_MS = 250  # typing pauses this long before recall is asked (each ask is a search)
LIVE_HITS = 5
HIT_CHARS = 72
_KIND = Qt.ItemDataRole.UserRole
_VALUE = Qt.ItemDataRole.UserRole + 1

Lookup = Callable[[str], Sequence["PaletteEntry"]]


@dataclass(frozen=True, slots=True)
class PaletteEntry:
    """One row: search recall for `value`, open the pane or the memory whose id is `value`."""

    kind: str  # "search" | "pane" | "memory"
    value: str
    label: str
    icon: str
    tooltip: str = ""


def palette_entries(
    text: str,
    specs: Sequence[PaneSpec],
    shortcuts: Mapping[str, str] | None = None,
    hits: Sequence[PaletteEntry] = (),
) -> list[PaletteEntry]:
    """The rows for `text` (pure: tested without a window); `hits` are the live recall rows."""
    query = text.strip()
    keys = shortcuts if shortcuts is not None else {s.key: s.shortcut or "" for s in specs}
    rows: list[PaletteEntry] = []
    if query:
        rows.append(PaletteEntry(SEARCH_ROLE, query, f"Search memory for “{query}”", "search"))
    needle = query.casefold()
    for spec in specs:
        if not needle or needle in spec.title.casefold() or needle in spec.key:
            hint = f"   {keys[spec.key]}" if keys.get(spec.key) else ""
            rows.append(PaletteEntry(PANE_ROLE, spec.key, f"Go to {spec.title}{hint}", spec.icon))
    if query:
        rows.extend(hits)
    return rows


def recall_entries(
    service: SignetService, agent_id: str, text: str, limit: int = LIVE_HITS
) -> list[PaletteEntry]:
    """The memories recall ranks first for `text`, as palette rows (blocks: a worker thread)."""
    query = RecallQuery(query=text, agent_id=agent_id, limit=limit)
    result = service.recall.search(query, recorded=False)  # half-typed text is not a search
    return [
        PaletteEntry(
            MEMORY_ROLE,
            hit.memory.id,
            preview(hit.memory.content, HIT_CHARS),
            "memories",
            preview(hit.memory.content, 400),
        )
        for hit in result.hits
    ]


class CommandPalette(QDialog):
    """A popup over the window; `search_chosen(text)`, `pane_chosen(key)` or
    `memory_chosen(id)` when run; `hits_shown(text)` when live hits for `text` are listed."""

    search_chosen = Signal(str)
    pane_chosen = Signal(str)
    memory_chosen = Signal(str)
    hits_shown = Signal(str)

    def __init__(
        self,
        specs: Sequence[PaneSpec],
        parent: QWidget | None = None,
        *,
        shortcuts: Mapping[str, str] | None = None,
        tasks: TaskRunner | None = None,
        lookup: Lookup | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("commandPalette")
        self.setWindowFlags(Qt.WindowType.Popup | Qt.WindowType.FramelessWindowHint)
        self._specs = list(specs)
        self._shortcuts = shortcuts
        self._tasks = tasks
        self._lookup = lookup
        self._hits: tuple[str, list[PaletteEntry]] = ("", [])  # (text they answer, rows)
        self._live = SingleFlight(self._read_hits)
        self._typing = single_shot(self, LIVE_DELAY_MS, self._live.ask)
        self.input = QLineEdit()
        self.input.setPlaceholderText("Search memory, or type a pane name…")
        self.input.setClearButtonEnabled(True)
        self.list = QListWidget()
        self.list.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.list.setUniformItemSizes(True)
        column = QVBoxLayout(self)
        column.setContentsMargins(10, 10, 10, 10)
        column.setSizeConstraint(QVBoxLayout.SizeConstraint.SetFixedSize)  # fits its rows
        column.addWidget(self.input)
        column.addWidget(self.list)
        self.input.setFixedWidth(PALETTE_WIDTH - 20)
        self.list.setFixedWidth(PALETTE_WIDTH - 20)
        self.input.textChanged.connect(self._typed)
        self.input.returnPressed.connect(self.run_selected)
        self.input.installEventFilter(self)
        self.list.itemActivated.connect(lambda _item: self.run_selected())
        self.list.itemClicked.connect(lambda _item: self.run_selected())
        self._refill()

    def set_specs(self, specs: Sequence[PaneSpec]) -> None:
        self._specs = list(specs)
        self._refill()

    def open_over(self, window: QWidget, text: str = "") -> None:
        """Show centred near the top of `window`, input focused, prefilled with `text`."""
        self.input.setText(text)
        self._refill()
        top_left = window.mapToGlobal(window.rect().topLeft())
        x = top_left.x() + max((window.width() - self.width()) // 2, 0)
        self.move(x, top_left.y() + 60)
        self.show()
        self.raise_()
        self.activateWindow()
        self.input.setFocus()
        self.input.selectAll()

    def entries(self) -> list[PaletteEntry]:
        text = self.input.text()
        hits = self._hits[1] if self._hits[0] == text.strip() else []
        return palette_entries(text, self._specs, self._shortcuts, hits)

    def run_selected(self) -> None:
        item = self.list.currentItem()
        if item is None:
            return
        kind, value = item.data(_KIND), item.data(_VALUE)
        self.hide()
        chosen = {SEARCH_ROLE: self.search_chosen, MEMORY_ROLE: self.memory_chosen}
        chosen.get(kind, self.pane_chosen).emit(value)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.input and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            step = {Qt.Key.Key_Down: 1, Qt.Key.Key_Up: -1}.get(Qt.Key(event.key()))
            if step is not None and self.list.count():
                row = (self.list.currentRow() + step) % self.list.count()
                self.list.setCurrentRow(row)
                return True
        return super().eventFilter(watched, event)

    # -- live hits ----------------------------------------------------------------------------

    def _typed(self, _text: str) -> None:
        self._refill()
        if self._lookup is not None and self._tasks is not None and self.input.text().strip():
            self._typing.start()

    def _read_hits(self) -> None:
        """Ask recall for the text as it is now (SingleFlight: one read at a time)."""
        assert self._lookup is not None and self._tasks is not None
        text = self.input.text().strip()
        if not text:
            self._live.done()
            return
        self._tasks.call(
            self._lookup,
            text,
            done=lambda rows: self._hits_read(text, rows),
            failed=self._hits_failed,
        )

    def _hits_read(self, text: str, rows: Sequence[PaletteEntry]) -> None:
        self._live.done()  # typed on meanwhile: the typing timer asks for the new text
        if text == self.input.text().strip():
            self._hits = (text, list(rows))
            self._refill()
            self.hits_shown.emit(text)

    def _hits_failed(self, exc: BaseException) -> None:
        self._live.done()
        log.warning("palette recall failed: %s", exc)

    def _refill(self) -> None:
        current = self.list.currentItem()
        keep = None if current is None else (current.data(_KIND), current.data(_VALUE))
        self.list.clear()
        for entry in self.entries():
            item = QListWidgetItem(icon(entry.icon), entry.label)
            item.setData(_KIND, entry.kind)
            item.setData(_VALUE, entry.value)
            if entry.tooltip:
                item.setToolTip(entry.tooltip)
            self.list.addItem(item)
        rows = [self._row_key(r) for r in range(self.list.count())]
        # The selection survives hits arriving, unless it was the search row (its text moved).
        kept = keep is not None and keep[0] != SEARCH_ROLE and keep in rows
        self.list.setCurrentRow(rows.index(keep) if kept else 0)
        self.list.setVisible(bool(rows))
        visible = min(len(rows), MAX_VISIBLE_ROWS)
        self.list.ensurePolished()  # the stylesheet's row padding counts in the row heights
        rows_high = sum(max(self.list.sizeHintForRow(r), MIN_ROW_HEIGHT) for r in range(visible))
        self.list.setFixedHeight(rows_high + 2 * self.list.frameWidth() + 2)
        self.adjustSize()

    def _row_key(self, row: int) -> tuple[str, str]:
        item = self.list.item(row)
        return item.data(_KIND), item.data(_VALUE)
