"""The Memories table: a windowed model over the whole store, pages fetched off the GUI thread.

`rowCount` is the browse's full count, so the scroll bar spans every memory and a jump to the
end costs one page, not the pages before it. A row whose page is not cached shows a
placeholder and asks for its page; the fetch runs through the `TaskRunner` (one in flight,
only the pages most recently asked for, so a fast drag across 100k rows reads a handful of
pages). A result from an older query (the filters or the order changed meanwhile) is dropped.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)

from signet_desktop.domain.browse import BrowseQuery
from signet_desktop.domain.memory import Memory
from signet_desktop.service.memories.service import MemoryService
from signet_desktop.ui.memory_format import cell_text
from signet_desktop.ui.tasks import TaskRunner

log = logging.getLogger(__name__)

PAGE_SIZE = 100  # about three screens: a jump anywhere costs one small read
MAX_CACHED_PAGES = 60  # 6,000 rows in memory at most
WANTED_PAGES = 3  # how many requested-but-unfetched pages are kept (the rest were scrolled by)
HOT_PAGES = 3  # the pages a refresh reads again at once (others reload when shown)
PLACEHOLDER = "…"
MEMORY_ROLE = Qt.ItemDataRole.UserRole + 1

# (column, header): the column names are BROWSE_SORTS names, so a header click sorts by it.
COLUMNS = (
    ("content", "Memory"),
    ("type", "Type"),
    ("tags", "Tags"),
    ("who", "Who"),
    ("project", "Project"),
    ("importance", "Importance"),
    ("pinned", "Pinned"),
    ("updated", "Updated"),
    ("created", "Created"),
)
LOCATE_RETRY_MS = 200  # a located row went stale: ask again after this pause
_Index = QModelIndex | QPersistentModelIndex


@dataclass(frozen=True, slots=True)
class Page:
    """One page's memories and their cell texts (made on the fetching thread)."""

    memories: list[Memory]
    cells: list[tuple[str, ...]]


def _with_cells(memories: list[Memory]) -> Page:
    names = [name for name, _title in COLUMNS]
    return Page(memories, [tuple(cell_text(m, name) for name in names) for m in memories])


Pages = dict[int, Page]
_HANDLED_ROLES = frozenset(
    {
        Qt.ItemDataRole.DisplayRole,
        Qt.ItemDataRole.ToolTipRole,
        Qt.ItemDataRole.TextAlignmentRole,
        MEMORY_ROLE,
    }
)


class MemoryTableModel(QAbstractTableModel):
    """Rows of `memories.browse(agent_id, query)`; call `reload()` once to start."""

    loaded = Signal()  # a new query's (or a refresh's) count and first rows arrived
    failed = Signal(str)  # a fetch failed (shown inline by the pane)
    pages_stored = Signal()  # pages asked for by a paint or `locate` arrived

    def __init__(
        self,
        memories: MemoryService,
        tasks: TaskRunner,
        agent_id: str,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._memories = memories
        self._tasks = tasks
        self._agent_id = agent_id
        self._query = BrowseQuery()
        self._generation = 0
        self._total = 0
        self._pages: OrderedDict[int, list[Memory]] = OrderedDict()
        self._cells: dict[int, list[tuple[str, ...]]] = {}  # each page's texts, made off-thread
        self._wanted: OrderedDict[int, None] = OrderedDict()
        self._fetching = False
        self._has_loaded = False

    # -- the query -------------------------------------------------------------------------

    @property
    def query(self) -> BrowseQuery:
        return self._query

    @property
    def total(self) -> int:
        return self._total

    @property
    def has_loaded(self) -> bool:
        """Whether a count has arrived at least once (before that, empty means unknown)."""
        return self._has_loaded

    def set_query(self, query: BrowseQuery) -> None:
        """Show another order or filter; the old rows stay until the new ones arrive."""
        if query != self._query:
            self._query = query
            self.reload()

    def reload(self) -> None:
        """Read the count and the first page of the current query again (one trip)."""
        self._generation += 1
        self._load(self._generation, (0,), reset=True)

    def refresh(self) -> None:
        """Rows were added, changed or removed: re-read the count and the pages in view."""
        hot = list(self._pages)[-HOT_PAGES:] or [0]
        self._generation += 1
        self._load(self._generation, tuple(sorted(hot)), reset=False)

    def locate(
        self, memory_id: str, done: Callable[[int | None], None], *, attempts: int = 20
    ) -> None:
        """Find the row of `memory_id` in the current query (its page loaded); None: absent.

        A reload or a count that changed while looking asks again, after a short pause (a burst
        of events, e.g. vectors arriving, reloads the rows many times in a row), so a memory
        that is listed is not reported absent because the rows moved meanwhile.
        """
        generation, query = self._generation, self._query

        def find() -> tuple[int | None, Page]:
            row = self._memories.browse_position(self._agent_id, query, memory_id)
            if row is None:
                return None, Page([], [])
            page = row // PAGE_SIZE
            rows = self._memories.browse(self._agent_id, query, PAGE_SIZE, page * PAGE_SIZE)
            return row, _with_cells(rows)

        def found(result: tuple[int | None, Page]) -> None:
            row, rows = result
            stale = generation != self._generation or (row is not None and row >= self._total)
            if stale and attempts > 1:
                if row is not None and row >= self._total:  # created since the count
                    self.refresh()
                again = partial(self.locate, memory_id, done, attempts=attempts - 1)
                QTimer.singleShot(LOCATE_RETRY_MS, again)
                return None
            if stale:
                return done(self.row_of(memory_id))
            if row is not None:
                self._store({row // PAGE_SIZE: rows})
            done(row)

        self._tasks.call(find, done=found, failed=self._failed)

    # -- reading rows ----------------------------------------------------------------------

    def memory_at(self, row: int) -> Memory | None:
        """The memory shown on `row`, if its page is cached."""
        page = self._pages.get(row // PAGE_SIZE)
        if page is None or row % PAGE_SIZE >= len(page):
            return None
        return page[row % PAGE_SIZE]

    def ensure_row(self, row: int) -> None:
        """Fetch the page of `row` unless cached (`pages_stored` follows)."""
        if 0 <= row < self._total and self.memory_at(row) is None:
            self._want(row // PAGE_SIZE)

    def row_of(self, memory_id: str) -> int | None:
        """The row of a cached memory."""
        for number, page in self._pages.items():
            for offset, memory in enumerate(page):
                if memory.id == memory_id:
                    return number * PAGE_SIZE + offset
        return None

    def cached_pages(self) -> tuple[int, ...]:
        return tuple(sorted(self._pages))

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 (Qt API)
        return 0 if parent.isValid() else self._total

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        # Called for every role of every visible cell on each paint: answer fast.
        if role not in _HANDLED_ROLES or not index.isValid():
            return None
        row, page_number = index.row(), index.row() // PAGE_SIZE
        page = self._pages.get(page_number)
        if page is None or row % PAGE_SIZE >= len(page):
            if role == Qt.ItemDataRole.DisplayRole and index.column() == 0 and row < self._total:
                self._want(page_number)
                return PLACEHOLDER
            return None
        memory = page[row % PAGE_SIZE]
        self._pages.move_to_end(page_number)
        column = COLUMNS[index.column()][0]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._cells[page_number][row % PAGE_SIZE][index.column()]
        if role == Qt.ItemDataRole.ToolTipRole and column == "content":
            return memory.content[:1000]
        if role == Qt.ItemDataRole.TextAlignmentRole and column == "importance":
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == MEMORY_ROLE:
            return memory
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section][1] if 0 <= section < len(COLUMNS) else None
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """A header click: order the whole store by that column (in SQL, not in the view)."""
        if 0 <= column < len(COLUMNS):
            descending = order == Qt.SortOrder.DescendingOrder
            self.set_query(replace(self._query, sort=COLUMNS[column][0], descending=descending))

    # -- fetching --------------------------------------------------------------------------

    def _want(self, page: int) -> None:
        if page in self._wanted:
            return
        self._wanted[page] = None
        while len(self._wanted) > WANTED_PAGES:
            self._wanted.popitem(last=False)
        self._next()

    def _next(self) -> None:
        if self._fetching or not self._wanted:
            return
        page, _ = self._wanted.popitem()
        self._load(self._generation, (page,), reset=None)

    def _load(self, generation: int, pages: tuple[int, ...], reset: bool | None) -> None:
        """Fetch `pages` (and the count unless `reset` is None) in one trip off the GUI thread."""
        query, agent_id, memories = self._query, self._agent_id, self._memories
        with_count = reset is not None
        self._fetching = True

        def fetch() -> tuple[int | None, Pages]:
            total = memories.browse_count(agent_id, query) if with_count else None
            rows = {p: memories.browse(agent_id, query, PAGE_SIZE, p * PAGE_SIZE) for p in pages}
            return total, {p: _with_cells(page) for p, page in rows.items()}

        def fetched(result: tuple[int | None, Pages]) -> None:
            self._fetching = False
            if generation == self._generation:
                total, rows = result
                if total is None:
                    self._store(rows)
                else:
                    self._install(total, rows, reset=bool(reset))
            self._next()

        def refused(exc: BaseException) -> None:
            self._fetching = False
            self._failed(exc)

        self._tasks.call(fetch, done=fetched, failed=refused)

    def _install(self, total: int, rows: Pages, *, reset: bool) -> None:
        """A new count with fresh pages: swap them in, keeping the view's place on a refresh."""
        self._has_loaded = True
        self._wanted.clear()
        if reset:
            self.beginResetModel()
            self._clear()
            self._total = total
            self._put(rows)
            self.endResetModel()
        else:
            self._clear()
            self._put(rows)
            self._resize(total)
            if self._total:
                last = self.index(self._total - 1, len(COLUMNS) - 1)
                self.dataChanged.emit(self.index(0, 0), last)
        self.loaded.emit()

    def _resize(self, total: int) -> None:
        if total > self._total:
            self.beginInsertRows(QModelIndex(), self._total, total - 1)
            self._total = total
            self.endInsertRows()
        elif total < self._total:
            self.beginRemoveRows(QModelIndex(), total, self._total - 1)
            self._total = total
            self.endRemoveRows()

    def _clear(self) -> None:
        self._pages.clear()
        self._cells.clear()

    def _put(self, rows: Pages) -> None:
        for number, page in rows.items():
            self._pages[number] = page.memories
            self._pages.move_to_end(number)
            self._cells[number] = page.cells
        while len(self._pages) > MAX_CACHED_PAGES:
            evicted, _ = self._pages.popitem(last=False)
            self._cells.pop(evicted, None)

    def _store(self, rows: Pages) -> None:
        self._put(rows)
        for number, page in rows.items():
            first = number * PAGE_SIZE
            last = min(self._total, first + len(page.memories)) - 1
            if last >= first and number in self._pages:
                self.dataChanged.emit(self.index(first, 0), self.index(last, len(COLUMNS) - 1))
        self.pages_stored.emit()

    def _failed(self, exc: BaseException) -> None:
        log.warning("memory table fetch failed: %s", exc)
        self.failed.emit(str(exc))
