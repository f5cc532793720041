"""Small Qt helpers every pane uses: a debounce timer, labels and the title row, boxes filled
in one call, a quiet selection, list rows of widgets kept as wide as their list
(`keep_rows_fitted`: never cut at the side)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypedDict, TypeVar, Unpack

from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QBoxLayout,
    QHBoxLayout,
    QLabel,
    QLayout,
    QListWidget,
    QListWidgetItem,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

# What a box holds: a widget or a layout, either with a stretch factor, or an int (a stretch).
BoxItem = QWidget | QLayout | tuple[QWidget | QLayout, int] | int
Margins = tuple[int, int, int, int]
B = TypeVar("B", bound=QBoxLayout)


def single_shot(parent: QObject, interval_ms: int, slot: Callable[[], object]) -> QTimer:
    """A single-shot timer calling `slot`; `start()` (re)arms it, so bursts collapse to one."""
    timer = QTimer(parent)
    timer.setSingleShot(True)
    timer.setInterval(interval_ms)
    timer.timeout.connect(slot)
    return timer


class BoxOptions(TypedDict, total=False):
    parent: QWidget | None  # the widget the box lays out
    margins: Margins | None
    spacing: int | None


def vbox(*items: BoxItem, **options: Unpack[BoxOptions]) -> QVBoxLayout:
    """A column of `items`, top to bottom."""
    return _fill(QVBoxLayout(), items, **options)


def hbox(*items: BoxItem, **options: Unpack[BoxOptions]) -> QHBoxLayout:
    """A row of `items`, left to right."""
    return _fill(QHBoxLayout(), items, **options)


def _fill(
    box: B,
    items: tuple[BoxItem, ...],
    parent: QWidget | None = None,
    margins: Margins | None = None,
    spacing: int | None = None,
) -> B:
    if margins is not None:
        box.setContentsMargins(*margins)
    if spacing is not None:
        box.setSpacing(spacing)
    for item in items:
        if isinstance(item, int):
            box.addStretch(item)
            continue
        thing, stretch = item if isinstance(item, tuple) else (item, 0)
        if isinstance(thing, QLayout):
            box.addLayout(thing, stretch)
        else:
            box.addWidget(thing, stretch)
    if parent is not None:
        parent.setLayout(box)
    return box


def split(
    first: QWidget,
    second: QWidget,
    *,
    stretch: tuple[int, int] | None = None,
    sizes: list[int] | None = None,
    vertical: bool = False,
    name: str | None = None,
) -> QSplitter:
    """`first` beside (or above) `second`, with their stretch factors and first sizes."""
    splitter = QSplitter(Qt.Orientation.Vertical if vertical else Qt.Orientation.Horizontal)
    if name is not None:
        splitter.setObjectName(name)
    splitter.addWidget(first)
    splitter.addWidget(second)
    if stretch is not None:
        splitter.setStretchFactor(0, stretch[0])
        splitter.setStretchFactor(1, stretch[1])
    if sizes is not None:
        splitter.setSizes(sizes)
    return splitter


def stack_of(*pages: QWidget) -> QStackedWidget:
    """A stack of `pages`, the first one shown."""
    stack = QStackedWidget()
    for page in pages:
        stack.addWidget(page)
    return stack


def vertical_scroll(content: QWidget, name: str) -> QScrollArea:
    """`content` in a frameless area that scrolls up and down, never sideways: a column of
    cards or fields that a laptop screen cannot show whole scrolls instead of being cut."""
    scroll = QScrollArea()
    scroll.setObjectName(name)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QScrollArea.Shape.NoFrame)
    scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    scroll.setWidget(content)
    return scroll


def text_label(
    text: str = "", *, name: str | None = None, role: str | None = None, wrap: bool = False
) -> QLabel:
    """A label with its object name, its style `role` ("muted", "heading"…) and word wrap."""
    made = QLabel(text)
    if name is not None:
        made.setObjectName(name)
    if role is not None:
        made.setProperty("role", role)
    if wrap:
        made.setWordWrap(True)
    return made


def title_row(title: str, count_name: str) -> tuple[QHBoxLayout, QLabel]:
    """A pane's heading on the left and its muted count label ("Loading…" at first) right."""
    heading = QLabel(title)
    heading.setProperty("role", "title")
    count = QLabel("Loading…")
    count.setObjectName(count_name)
    count.setProperty("role", "muted")
    row = QHBoxLayout()
    row.addWidget(heading)
    row.addStretch(1)
    row.addWidget(count)
    return row, count


def add_row(
    view: QListWidget, widget: QWidget, key: object, size: QSize | None = None
) -> QListWidgetItem:
    """Append `widget` as a row of `view`, its item carrying `key` (the UserRole data) and,
    when given, the size hint `size`."""
    item = QListWidgetItem()
    item.setData(Qt.ItemDataRole.UserRole, key)
    if size is not None:
        item.setSizeHint(size)
    view.addItem(item)
    view.setItemWidget(item, widget)
    return item


def select_quietly(view: QListWidget, row: int) -> None:
    """Make `row` current without emitting the selection signals (a re-read keeps its place)."""
    view.blockSignals(True)
    view.setCurrentRow(row)
    view.blockSignals(False)


def fit_rows(view: QListWidget) -> None:
    """Each row widget of `view` as wide as its viewport, as high as it then needs."""
    width = max(view.viewport().width(), 1)
    for row in range(view.count()):
        item = view.item(row)
        widget = view.itemWidget(item)
        if widget is None:
            continue
        height = widget.heightForWidth(width) if widget.hasHeightForWidth() else -1
        item.setSizeHint(QSize(width, height if height > 0 else widget.sizeHint().height()))


class _RowFitter(QObject):
    def __init__(self, view: QListWidget) -> None:
        super().__init__(view)
        self.view = view

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:
            fit_rows(self.view)
        return False


def keep_rows_fitted(view: QListWidget) -> None:
    """Re-fit `view`'s rows whenever its viewport changes size (and never scroll sideways)."""
    view.viewport().installEventFilter(_RowFitter(view))


class ElidingLabel(QLabel):
    """A one-line label that shortens its text with "…" to the room it is given (the whole
    text in its tooltip), so a row of labels never widens the window. It asks for its whole
    text's width and accepts as little as `MIN_WIDTH`; ids read best cut in the middle."""

    MIN_WIDTH = 48

    def __init__(
        self,
        text: str = "",
        parent: QWidget | None = None,
        *,
        mode: Qt.TextElideMode = Qt.TextElideMode.ElideRight,
        modest: bool = False,
    ) -> None:
        super().__init__(parent)
        self._full = ""
        self._mode = mode
        self._modest = modest  # asks only for MIN_WIDTH: the room others leave, by stretch
        self.setText(text)

    def setText(self, text: str) -> None:
        if text == self._full:
            return
        self._full = text
        self.setToolTip(text)
        self._elide()
        self.updateGeometry()  # the shown text may not change (too narrow): the hint did

    def full_text(self) -> str:
        return self._full

    def sizeHint(self) -> QSize:
        full = self._chrome() + self._text_width(self._full)
        return QSize(
            min(full, self.MIN_WIDTH) if self._modest else full, super().sizeHint().height()
        )

    def minimumSizeHint(self) -> QSize:
        height = super().minimumSizeHint().height()
        return QSize(min(self.MIN_WIDTH, self.sizeHint().width()), height)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def _chrome(self) -> int:
        """What the label adds around its text (margins, indent, style sheet padding)."""
        return super().sizeHint().width() - self._text_width(super().text())

    def _text_width(self, text: str) -> int:
        """The width QLabel itself gives `text` (its bounding box, not its advance)."""
        return self.fontMetrics().boundingRect(text).width() if text else 0

    def _elide(self) -> None:
        room = max(0, self.width() - self._chrome())
        if self._text_width(self._full) <= room + 2:  # a "…" measures apart from the text
            shown = self._full
        else:
            shown = self.fontMetrics().elidedText(self._full, self._mode, room)
        if shown != super().text():
            super().setText(shown)
