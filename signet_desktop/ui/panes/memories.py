"""The Memories pane: the whole store as a lazily paged table, filters, and the memory detail.

The table is `MemoryTableModel` (windowed pages fetched off the GUI thread, sorted and
filtered in SQL); selecting a row, or `reveal(memory_id=…)` from any pane, shows the
`MemoryDetail` beside it. A `memory.*` event of this agent refreshes the rows in view
(coalesced, so a bulk import costs a few reads, not one per memory); nothing polls.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHeaderView,
    QLineEdit,
    QPushButton,
    QTableView,
)

from signet_desktop.domain.browse import BrowseQuery
from signet_desktop.domain.events import Event
from signet_desktop.domain.memory import MEMORY_TYPES
from signet_desktop.ui.empty_state import Banner, EmptyState
from signet_desktop.ui.memory_detail import MEMORY_EVENTS, MemoryDetail
from signet_desktop.ui.memory_table_model import COLUMNS, MemoryTableModel
from signet_desktop.ui.pane import PaneContext, PaneSpec
from signet_desktop.ui.pane_frame import LivePane, pane_column
from signet_desktop.ui.widgets import hbox, single_shot, split, stack_of, title_row

REFRESH_DELAY_MS = 120  # events arriving together (an import) become one refresh
TYPING_DELAY_MS = 250  # the text filters apply when typing pauses
COLUMN_WIDTHS = {"content": 300, "type": 90, "tags": 140, "who": 100, "project": 100,
                 "importance": 80, "pinned": 60, "updated": 130, "created": 130}  # fmt: skip
EMPTY_TITLE = "No memories yet"
EMPTY_HINT = (
    'Remember one from a terminal with  signet remember "The billing service uses Postgres 16"  '
    "or POST /api/memory/remember to the daemon{url}. Every memory an agent saves appears here."
)
PINNED_CHOICES = (("Pinned or not", None), ("Pinned", True), ("Not pinned", False))
STATE_CHOICES = (("Live", False), ("Forgotten", True))


class MemoriesPane(LivePane):
    """Browse, filter and sort every memory of the agent; read and act on one."""

    def __init__(self, context: PaneContext) -> None:
        super().__init__(
            context, REFRESH_DELAY_MS, lambda: self.model.refresh(), lambda: self.model.reload()
        )
        self.setObjectName("memoriesPane")
        self._selected_id: str | None = None
        self._unlisted: str | None = None  # revealed but not in the table's list
        self._selecting = False
        self._pending_row: int | None = None  # the current row while its page is on its way
        self.model = MemoryTableModel(context.service.memories, context.tasks, context.agent_id)
        self.detail = MemoryDetail(context)
        self._typing_timer = single_shot(self, TYPING_DELAY_MS, self.apply_filters)
        self._build()
        self.model.loaded.connect(self._on_loaded)
        self.model.pages_stored.connect(self._on_pages_stored)
        self.model.failed.connect(lambda text: self.banner.show_message(text))
        self.detail.memory_shown.connect(lambda _memory: self._update_note())
        self.detail.memory_missing.connect(lambda _id: self._update_note())

    # -- layout ----------------------------------------------------------------------------

    def _build(self) -> None:
        header, self.count_label = title_row("Memories", "memoryCount")

        # Minimum widths small enough for the whole pane to fit a 1024-wide window.
        self.text_filter = self._line("memoryFilterText", "Contents contain…", 110)
        self.tag_filter = self._line("memoryFilterTag", "Tag", 60)
        self.who_filter = self._line("memoryFilterWho", "Who", 60)
        self.project_filter = self._line("memoryFilterProject", "Project", 60)
        self.type_filter = self._combo(
            "memoryFilterType", [("Any type", None)] + [(t, t) for t in sorted(MEMORY_TYPES)]
        )
        # As wide as "Any type"; the longest type ("document_chunk") shows whole in the list.
        self.type_filter.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.type_filter.setMinimumContentsLength(len("Any type") + 1)
        self.pinned_filter = self._combo("memoryFilterPinned", list(PINNED_CHOICES))
        self.state_filter = self._combo("memoryFilterState", list(STATE_CHOICES))
        self.clear_button = QPushButton("Clear")
        self.clear_button.setToolTip("Clear every filter")
        self.clear_button.setObjectName("memoryFilterClear")
        self.clear_button.clicked.connect(self.clear_filters)
        filters = hbox(
            self.text_filter,
            self.type_filter,
            self.tag_filter,
            self.who_filter,
            self.project_filter,
            self.pinned_filter,
            self.state_filter,
            self.clear_button,
            1,
        )

        self.banner = Banner(dismissible=False)
        self.note = Banner(dismissible=False)
        self.table = self._table()
        self.splitter = split(self.table, self.detail, stretch=(3, 2), name="memoriesSplitter")
        url = f" at {self.context.url}" if self.context.url else ""
        self.empty = EmptyState("memories.svg", EMPTY_TITLE, EMPTY_HINT.format(url=url))
        self.stack = stack_of(self.splitter, self.empty)
        pane_column(self, header, filters, self.banner, self.note, content=self.stack)
        QShortcut(QKeySequence.StandardKey.Find, self, self.text_filter.setFocus)
        QShortcut(QKeySequence.StandardKey.Delete, self.table, self.detail._ask_forget)

    def _line(self, name: str, placeholder: str, width: int) -> QLineEdit:
        line = QLineEdit()
        line.setObjectName(name)
        line.setPlaceholderText(placeholder)
        line.setClearButtonEnabled(True)
        line.setMinimumWidth(width)
        line.textEdited.connect(lambda _text: self._typing_timer.start())
        line.returnPressed.connect(self.apply_filters)
        return line

    def _combo(self, name: str, choices: list[tuple[str, Any]]) -> QComboBox:
        combo = QComboBox()
        combo.setObjectName(name)
        for label, value in choices:
            combo.addItem(label, value)
        combo.currentIndexChanged.connect(lambda _index: self.apply_filters())
        return combo

    def _table(self) -> QTableView:
        table = QTableView()
        table.setObjectName("memoryTable")
        table.setModel(self.model)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        table.setAlternatingRowColors(True)
        table.setWordWrap(False)
        table.setShowGrid(False)
        table.verticalHeader().hide()
        table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        table.verticalHeader().setDefaultSectionSize(26)
        header = table.horizontalHeader()
        header.setHighlightSections(False)
        for number, (name, _title) in enumerate(COLUMNS):
            table.setColumnWidth(number, COLUMN_WIDTHS[name])
        header.setStretchLastSection(True)
        created = [name for name, _ in COLUMNS].index("created")
        header.setSortIndicator(created, Qt.SortOrder.DescendingOrder)
        table.setSortingEnabled(True)
        selection = table.selectionModel()
        selection.currentRowChanged.connect(self._on_current_row)
        return table

    # -- the PaneWidget hooks --------------------------------------------------------------

    def reveal(self, **reveal: Any) -> None:
        """`memory_id=…`: show that memory's detail and select its row (loading its page)."""
        self.start()
        memory_id = reveal.get("memory_id")
        if not isinstance(memory_id, str) or not memory_id:
            return
        self._selected_id = memory_id
        self._unlisted = None
        self._update_note()
        self.detail.show_memory(memory_id)
        self.model.locate(memory_id, lambda row: self._located(memory_id, row))

    def shutdown(self) -> None:
        super().shutdown()
        self._typing_timer.stop()
        self.detail.shutdown()

    # -- filters ---------------------------------------------------------------------------

    def current_query(self) -> BrowseQuery:
        """The filters as a query, keeping the table's order."""
        return replace(
            self.model.query,
            text=self.text_filter.text().strip() or None,
            type=self.type_filter.currentData(),
            tag=self.tag_filter.text().strip() or None,
            who=self.who_filter.text().strip() or None,
            project=self.project_filter.text().strip() or None,
            pinned=self.pinned_filter.currentData(),
            deleted=bool(self.state_filter.currentData()),
        )

    def apply_filters(self) -> None:
        self._typing_timer.stop()
        self.banner.clear()
        self.model.set_query(self.current_query())

    def clear_filters(self) -> None:
        for line in (self.text_filter, self.tag_filter, self.who_filter, self.project_filter):
            line.clear()
        for combo in (self.type_filter, self.pinned_filter, self.state_filter):
            combo.blockSignals(True)
            combo.setCurrentIndex(0)
            combo.blockSignals(False)
        self.apply_filters()

    # -- model and selection ---------------------------------------------------------------

    def _on_loaded(self) -> None:
        query, total = self.model.query, self.model.total
        filtered = query != replace(BrowseQuery(), sort=query.sort, descending=query.descending)
        if not filtered and total == 0:
            self.stack.setCurrentWidget(self.empty)
        else:
            self.stack.setCurrentWidget(self.splitter)
        self.count_label.setText(count_text(total, filtered, query.deleted))
        self._reselect()

    def _reselect(self) -> None:
        """After new rows arrived, keep the selected memory selected (it may have moved)."""
        memory_id = self._selected_id
        row = None if memory_id is None else self.model.row_of(memory_id)
        current = self.table.selectionModel().currentIndex()
        if row is None:
            if current.isValid():
                self._select(None)
            return
        if memory_id == self._unlisted:  # a reload lists it after all: drop the note
            self._unlisted = None
            self._update_note()
        if current.row() != row:
            self._select(row)

    def _select(self, row: int | None) -> None:
        self._selecting = True
        try:
            selection = self.table.selectionModel()
            if row is None:
                selection.clear()
                return
            index = self.model.index(row, 0)
            flags = (
                QItemSelectionModel.SelectionFlag.ClearAndSelect
                | QItemSelectionModel.SelectionFlag.Rows
            )
            selection.setCurrentIndex(index, flags)
            self.table.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
        finally:
            self._selecting = False

    def _located(self, memory_id: str, row: int | None) -> None:
        if memory_id != self._selected_id:
            return  # another memory was asked for meanwhile
        if row is None:
            self._unlisted = memory_id
            self._select(None)
        else:
            self._select(row)
        self._update_note()

    def _update_note(self) -> None:
        memory = self.detail.memory
        if self._unlisted is None or memory is None or memory.id != self._unlisted:
            self.note.clear()
        elif memory.is_deleted and not self.model.query.deleted:
            self.note.show_message(
                "This memory is forgotten, so the list does not show it; choose “Forgotten” "
                "to list forgotten memories.",
                "warn",
            )
        else:
            self.note.show_message(
                "The filters hide this memory from the list; “Clear filters” shows every one.",
                "warn",
            )

    def _on_current_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self._selecting or not current.isValid():
            return
        memory = self.model.memory_at(current.row())
        self._pending_row = current.row() if memory is None else None
        if memory is None:
            self.model.ensure_row(current.row())
        if memory is not None:
            self._selected_id = memory.id
            self._unlisted = None
            self._update_note()
            self.detail.show_memory(memory.id)

    def _on_pages_stored(self) -> None:
        """Keyboard paging onto rows still loading: open the detail once they arrive."""
        row = self._pending_row
        current = self.table.selectionModel().currentIndex()
        if row is not None and current.isValid() and current.row() == row:
            self._on_current_row(current, current)

    def on_event(self, event: Event) -> None:
        if event.kind in MEMORY_EVENTS:
            self.schedule_refresh()  # a throttle, not a debounce: a long import still shows


def count_text(total: int, filtered: bool, deleted: bool) -> str:
    """`12,431 memories`, `37 match`, `4 forgotten`, `No memory matches these filters`."""
    if deleted:
        return f"{total:,} forgotten" if total else "No forgotten memories"
    if filtered:
        return f"{total:,} match" if total else "No memory matches these filters"
    return f"{total:,} {'memory' if total == 1 else 'memories'}"


PANE = PaneSpec(
    key="memories",
    title="Memories",
    icon="memories.svg",
    order=20,
    factory=MemoriesPane,
    shortcut="Ctrl+2",
)
