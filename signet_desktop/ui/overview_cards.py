"""The Overview's widgets: a card that links to its pane, and the live activity feed."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QMouseEvent
from PySide6.QtWidgets import QFrame, QLabel, QListWidget, QListWidgetItem

from signet_desktop.ui.activity_words import Line
from signet_desktop.ui.failed_items import link_html
from signet_desktop.ui.overview_format import CardText, parse
from signet_desktop.ui.style import current_theme
from signet_desktop.ui.widgets import text_label, vbox

FEED_LIMIT = 200
_LINE = Qt.ItemDataRole.UserRole


class Card(QFrame):
    """A titled fact (value, detail) and a link to the pane that shows more; a click anywhere
    on it follows the link."""

    chosen = Signal(str)  # the pane key

    def __init__(self, title: str, pane: str, link: str) -> None:
        super().__init__()
        self.setObjectName("overviewCard")
        self.pane = pane
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setToolTip(link)
        heading = QLabel(title)
        heading.setProperty("role", "muted")
        self.value = QLabel("…")
        self.value.setObjectName("overviewValue")
        self.value.setWordWrap(True)  # "Last pass just now" in large type: wraps on a laptop
        self.detail = text_label("", role="muted", wrap=True)
        self.detail.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.link = QLabel(link_html(pane, f"{link} →"))
        self.link.setObjectName("overviewLink")
        self.link.linkActivated.connect(self.chosen.emit)
        vbox(
            heading,
            self.value,
            (self.detail, 1),
            self.link,
            parent=self,
            margins=(14, 10, 14, 10),
            spacing=4,
        )

    def show_text(self, text: CardText) -> None:
        self.value.setText(text.value)
        self.detail.setText(text.detail)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.chosen.emit(self.pane)
        super().mouseReleaseEvent(event)


class ActivityFeed(QListWidget):
    """What happened, newest first, in words; activating a line opens its pane."""

    line_chosen = Signal(object)  # the Line

    def __init__(self, clock: Callable[[], datetime] = datetime.now) -> None:
        super().__init__()
        self.setObjectName("overviewFeed")
        self.setWordWrap(True)
        self.setUniformItemSizes(False)
        self._clock = clock
        self.itemActivated.connect(self._activated)
        self.itemClicked.connect(self._activated)

    def add(self, line: Line, at: str | None = None, *, newest: bool = True) -> None:
        """Add one line (at the top unless `newest` is False: older lines go below)."""
        moment = parse(at)
        when = (moment.astimezone() if moment else self._clock()).strftime("%H:%M")
        item = QListWidgetItem(f"{when}   {line.text}")
        item.setData(_LINE, line)
        item.setToolTip(f"Open in {line.pane.capitalize()}")
        if line.level == "warn":
            item.setForeground(QBrush(QColor(current_theme().warn)))
        if newest:
            self.insertItem(0, item)
        else:
            self.addItem(item)
        while self.count() > FEED_LIMIT:
            self.takeItem(self.count() - 1)

    def texts(self) -> list[str]:
        """The lines' words, newest first, without their times (tests)."""
        return [self.item(row).text().split("   ", 1)[-1] for row in range(self.count())]

    def _activated(self, item: QListWidgetItem) -> None:
        line = item.data(_LINE)
        if isinstance(line, Line):
            self.line_chosen.emit(line)
