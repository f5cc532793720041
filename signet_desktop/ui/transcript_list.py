"""The Transcripts pane's sessions list: a paged model (newest first) and its row delegate.

A row reads

    Why does the billing replica lag behind the pr…       2 Nov
    ~/src/billing · claude-code · 42 turns             [imported]

titled by the session's first user prompt and dated by its first turn (`session_row`); the
session key is in the tooltip.

Pages of `PAGE_SIZE` come from `transcripts.sessions(...)` through the `TaskRunner` as the
list scrolls (`canFetchMore`/`fetchMore`); the rows' strings are made on the fetching thread.
`refresh()` reads the rows in view again in one call (after a capture event); a result of an
older filter is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QRect,
    QRectF,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from signet_desktop.service.transcripts.service import MAX_LIST_LIMIT, TranscriptService
from signet_desktop.ui.style import current_theme
from signet_desktop.ui.tasks import TaskRunner
from signet_desktop.ui.transcript_format import SessionRow, session_rows

PAGE_SIZE = 100
ROW_ROLE = Qt.ItemDataRole.UserRole + 1
PAD = 8

_Index = QModelIndex | QPersistentModelIndex


@dataclass(frozen=True, slots=True)
class SessionFilter:
    """The list's filters (None: any)."""

    harness: str | None = None
    project: str | None = None
    status: str | None = None

    @property
    def active(self) -> bool:
        return any(value is not None for value in (self.harness, self.project, self.status))


@dataclass(frozen=True, slots=True)
class _Page:
    rows: list[SessionRow]
    projects: list[str]
    harnesses: list[str]
    total: int


class SessionListModel(QAbstractListModel):
    """The agent's sessions under `filter`, newest first; `reload()` starts it."""

    loaded = Signal()  # a new filter's (or a refresh's) first rows and count arrived
    failed = Signal(str)
    seen = Signal(list, list)  # projects, harnesses met in the rows read (filter choices)

    def __init__(
        self,
        transcripts: TranscriptService,
        tasks: TaskRunner,
        agent_id: str,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._transcripts = transcripts
        self._tasks = tasks
        self._agent_id = agent_id
        self._filter = SessionFilter()
        self._rows: list[SessionRow] = []
        self._total = 0
        self._generation = 0
        self._fetching = False

    @property
    def filter(self) -> SessionFilter:
        return self._filter

    @property
    def total(self) -> int:
        return self._total

    def set_filter(self, session_filter: SessionFilter) -> None:
        self._filter = session_filter
        self.reload()

    def reload(self) -> None:
        """Read the first page under the current filter (the rows shown are replaced)."""
        self._read(0, PAGE_SIZE, replace=True)

    def refresh(self) -> None:
        """Read again the rows loaded so far (at least a page), e.g. after a capture."""
        self._read(0, min(MAX_LIST_LIMIT, max(PAGE_SIZE, len(self._rows))), replace=True)

    def _read(self, offset: int, limit: int, *, replace: bool) -> None:
        if replace:
            self._generation += 1
        generation, wanted = self._generation, self._filter
        transcripts, agent_id = self._transcripts, self._agent_id
        self._fetching = True

        def read() -> _Page:
            listing = transcripts.sessions(
                agent_id,
                harness=wanted.harness,
                project=wanted.project,
                status=wanted.status,
                limit=limit,
                offset=offset,
            )
            projects = sorted({s.project for s in listing.rows if s.project})
            harnesses = sorted({s.harness for s in listing.rows if s.harness})
            return _Page(session_rows(listing.rows), projects, harnesses, listing.total)

        def done(page: _Page) -> None:
            if generation != self._generation:
                return  # the filter changed meanwhile
            self._fetching = False
            self._total = page.total
            if replace:
                self.beginResetModel()
                self._rows = page.rows
                self.endResetModel()
                self.loaded.emit()
            elif page.rows:
                start = len(self._rows)
                self.beginInsertRows(QModelIndex(), start, start + len(page.rows) - 1)
                self._rows.extend(page.rows)
                self.endInsertRows()
            self.seen.emit(page.projects, page.harnesses)

        def failed(exc: BaseException) -> None:
            if generation == self._generation:
                self._fetching = False
                self.failed.emit(f"The sessions could not be read: {exc}")

        self._tasks.call(read, done=done, failed=failed)

    # -- rows ------------------------------------------------------------------------------

    def row_at(self, row: int) -> SessionRow | None:
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def row_of(self, session_key: str) -> int | None:
        return next((i for i, r in enumerate(self._rows) if r.session_key == session_key), None)

    def keys(self) -> list[str]:
        return [row.session_key for row in self._rows]

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self._rows)

    def canFetchMore(self, parent: _Index) -> bool:
        return not parent.isValid() and not self._fetching and len(self._rows) < self._total

    def fetchMore(self, parent: _Index) -> None:
        if self.canFetchMore(parent):
            self._read(len(self._rows), PAGE_SIZE, replace=False)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        row = self.row_at(index.row()) if index.isValid() else None
        if row is None:
            return None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            return f"{row.title} · {row.meta} · {row.status} · {row.when}"
        if role == Qt.ItemDataRole.ToolTipRole:
            return row.tooltip
        if role == ROW_ROLE:
            return row
        return None


def two_lines(metrics: QFontMetrics, text: str, width: int) -> list[str]:
    """`text` broken at a space onto at most two lines of `width`, the second elided."""
    if metrics.horizontalAdvance(text) <= width:
        return [text]
    words = text.split(" ")
    first = words[0]
    for count in range(1, len(words)):
        candidate = " ".join(words[: count + 1])
        if metrics.horizontalAdvance(candidate) > width:
            break
        first = candidate
    if metrics.horizontalAdvance(first) > width:  # one long word: cut it
        first = metrics.elidedText(first, Qt.TextElideMode.ElideRight, width)
        return [first]
    rest = text[len(first) :].strip()
    return [first, metrics.elidedText(rest, Qt.TextElideMode.ElideRight, width)]


class SessionDelegate(QStyledItemDelegate):
    """Paints a session: first prompt and start on top, project · harness · turns and a
    status badge below."""

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:
        metrics = QFontMetrics(option.font)
        return QSize(240, PAD * 2 + metrics.height() * 3 + 6)  # two title lines, the meta

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        row = index.data(ROW_ROLE)
        if not isinstance(row, SessionRow):
            super().paint(painter, option, index)
            return
        widget = option.widget
        style = widget.style() if isinstance(widget, QWidget) else None
        if style is not None:
            style.drawPrimitive(
                QStyle.PrimitiveElement.PE_PanelItemViewItem, option, painter, widget
            )
        rect: QRect = option.rect.adjusted(PAD + 2, PAD, -PAD - 2, -PAD)
        palette: QPalette = option.palette
        text = palette.color(QPalette.ColorRole.Text)
        muted = QColor(text)
        muted.setAlphaF(0.65)
        font = QFont(option.font)
        metrics = QFontMetrics(font)
        height = metrics.height()
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        when_width = metrics.horizontalAdvance(row.when) + 4
        painter.setPen(muted)
        painter.drawText(
            QRect(rect.right() - when_width, rect.top(), when_width, height),
            int(Qt.AlignmentFlag.AlignRight),
            row.when,
        )
        bold = QFont(font)
        bold.setWeight(QFont.Weight.DemiBold)
        painter.setFont(bold)
        painter.setPen(text)
        title_width = rect.width() - when_width - 8
        for n, line in enumerate(two_lines(QFontMetrics(bold), row.title, title_width)):
            top = rect.top() + n * (height + 2)
            painter.drawText(QRect(rect.left(), top, title_width, height), 0, line)
        painter.setFont(font)
        y = rect.top() + 2 * (height + 2) + 2
        badge_width = self._paint_status(painter, rect.right(), y, row.status, metrics)
        painter.setPen(muted)
        meta_width = rect.width() - badge_width - 8
        meta = metrics.elidedText(row.meta, Qt.TextElideMode.ElideRight, meta_width)
        painter.drawText(QRect(rect.left(), y, meta_width, height), 0, meta)
        painter.restore()

    @staticmethod
    def _paint_status(
        painter: QPainter, right: int, y: int, status: str, metrics: QFontMetrics
    ) -> int:
        theme = current_theme()
        edge = QColor(
            {"open": theme.ok, "imported": theme.warn}.get(status, theme.muted)
        )  # open sessions are the live ones: they carry the colour
        width = metrics.horizontalAdvance(status) + 12
        box = QRectF(right - width + 0.5, y + 0.5, width - 1, metrics.height())
        fill = QColor(edge)
        fill.setAlphaF(0.16)
        painter.setPen(edge)
        painter.setBrush(fill)
        painter.drawRoundedRect(box, box.height() / 2, box.height() / 2)
        painter.setPen(QColor(theme.text))
        painter.drawText(box, int(Qt.AlignmentFlag.AlignCenter), status)
        return width
