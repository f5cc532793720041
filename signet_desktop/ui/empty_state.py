"""Designed empty states and inline failure banners that any pane can use.

An empty state is an icon, a title and one line saying what to do next ("No memories yet —
connect an agent with `signet connect`"); a banner shows a failure inline above the content
instead of a dialog or a frozen window.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from signet_desktop.ui.icon import icon as load_icon
from signet_desktop.ui.style import current_theme
from signet_desktop.ui.widgets import hbox, text_label

EMPTY_ICON_SIZE = 48


class EmptyState(QFrame):
    """A centred icon, title and hint; `set_text` changes the words in place."""

    def __init__(
        self, icon: str, title: str, hint: str = "", parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("emptyState")
        self.icon_label = QLabel()
        self.icon_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.icon_label.setPixmap(
            load_icon(icon, current_theme().muted).pixmap(EMPTY_ICON_SIZE, EMPTY_ICON_SIZE)
        )
        self.title_label = QLabel(title)
        self.title_label.setObjectName("emptyTitle")
        self.hint_label = text_label(hint, name="emptyHint", wrap=True)
        for label in (self.title_label, self.hint_label):
            label.setAlignment(Qt.AlignmentFlag.AlignCenter)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        column = QVBoxLayout(self)
        column.addStretch(1)
        column.addWidget(self.icon_label)
        column.addSpacing(8)
        column.addWidget(self.title_label)
        column.addWidget(self.hint_label)
        column.addStretch(2)

    def set_text(self, title: str, hint: str = "") -> None:
        self.title_label.setText(title)
        self.hint_label.setText(hint)

    def set_hint_width(self, width: int) -> None:
        """Wrap the hint at `width`: a readable measure, not the pane's width (centred, the
        label is not asked its height again)."""
        self.hint_label.setFixedWidth(width)
        self.hint_label.setMinimumHeight(self.hint_label.heightForWidth(width))


class Banner(QFrame):
    """A one-line inline message (`error` or `warn`), with a dismiss button unless it is a
    standing note (`dismissible=False`); hidden when empty."""

    dismissed = Signal()

    def __init__(self, parent: QWidget | None = None, *, dismissible: bool = True) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        self.setProperty("banner", "error")
        self.text_label = QLabel()
        self.text_label.setWordWrap(True)
        self.text_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.close_button = QPushButton("Dismiss")
        self.close_button.clicked.connect(self.clear)
        hbox((self.text_label, 1), self.close_button, parent=self, margins=(12, 6, 8, 6))
        self.close_button.setVisible(dismissible)
        self.hide()

    def show_message(self, text: str, level: str = "error") -> None:
        self.setProperty("banner", level)
        self.style().unpolish(self)
        self.style().polish(self)
        self.text_label.setText(text)
        self.show()

    def clear(self) -> None:
        self.text_label.clear()
        self.hide()
        self.dismissed.emit()

    @property
    def text(self) -> str:
        """What the banner says now ("" while hidden)."""
        return "" if self.isHidden() else self.text_label.text()
