"""The failed items of the verdict as notices, each with Retry (Overview, Queue and Health).

A row says what could not finish and why ("The document “design-doc.pdf” could not finish:
fetch failed: 404"), with Retry — `service/verdict.py: retry`, the queue's requeue of exactly
that job, run off the GUI thread — and Open (its document, else the Queue filtered to dead
jobs). Hidden while there is nothing to show.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QLabel, QPushButton, QVBoxLayout, QWidget

from signet_desktop.service.pipeline.queue_ops import RepairResult
from signet_desktop.service.verdict import FailedItem, Verdict, retry
from signet_desktop.ui.pane import PaneContext
from signet_desktop.ui.pane_frame import error_text
from signet_desktop.ui.style import current_theme
from signet_desktop.ui.widgets import hbox

SHOWN = 3  # rows; more are counted under them
ERROR_CHARS = 140


def verdict_colour(state: str) -> str:
    """The theme's colour for a verdict's state: ok, warn (paused, degraded) or error."""
    theme = current_theme()
    colours = {"healthy": theme.ok, "working": theme.ok, "paused": theme.warn}
    return colours.get(state, theme.warn if state == "degraded" else theme.error)


def link_html(href: str, text: str) -> str:
    """A link in the theme's accent (Qt's default link blue is unreadable on dark)."""
    return f'<a href="{href}" style="color: {current_theme().accent};">{text}</a>'


def item_text(item: FailedItem) -> str:
    """`The document “x” could not finish: 404 Not Found` on one line."""
    error = " ".join((item.error or "no reason recorded").split())
    if len(error) > ERROR_CHARS:
        error = error[: ERROR_CHARS - 1] + "…"
    label = item.label[:1].upper() + item.label[1:]
    return f"{label} could not finish: {error}"


class FailedItems(QFrame):
    """Rows of failed items with Retry and Open; `retried(message, ok)` after each retry."""

    retried = Signal(str, bool)

    def __init__(self, context: PaneContext) -> None:
        super().__init__()
        self.setObjectName("failedItems")
        self.setProperty("banner", "warn")
        self.context = context
        self.items: tuple[FailedItem, ...] = ()
        self.retry_buttons: list[QPushButton] = []
        self._rows = QVBoxLayout(self)
        self._rows.setContentsMargins(12, 6, 8, 6)
        self._rows.setSpacing(4)
        self.more = QLabel("")
        self.more.setProperty("role", "muted")
        self._rows.addWidget(self.more)
        self._shown: list[QWidget] = []
        self.hide()

    def show_verdict(self, verdict: Verdict) -> None:
        """Show the verdict's failed items (hidden without any)."""
        for row in self._shown:
            self._rows.removeWidget(row)
            row.deleteLater()
        self.items = verdict.notices
        self.retry_buttons = []
        self._shown = [self._row(item) for item in verdict.notices[:SHOWN]]
        for index, row in enumerate(self._shown):
            self._rows.insertWidget(index, row)
        hidden = verdict.failed - len(self._shown)
        self.more.setText(f"and {hidden:,} more in the Queue" if hidden > 0 else "")
        self.more.setVisible(hidden > 0)
        self.setVisible(bool(verdict.failed))

    def _row(self, item: FailedItem) -> QWidget:
        text = QLabel("⚠ " + item_text(item))
        text.setWordWrap(True)
        text.setToolTip(item.error or "")
        text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        retry_button = QPushButton("Retry")
        retry_button.setObjectName("failedRetry")
        retry_button.setToolTip("Run it again now (its attempts start over)")
        retry_button.clicked.connect(lambda _c=False, i=item, b=retry_button: self.retry(i, b))
        self.retry_buttons.append(retry_button)
        open_button = QPushButton("Open")
        open_button.setToolTip("Show it in the Documents pane" if item.document_id else "")
        open_button.clicked.connect(lambda _c=False, i=item: self.open(i))
        row = QWidget()
        hbox((text, 1), retry_button, open_button, parent=row, margins=(0, 0, 0, 0))
        return row

    def retry(self, item: FailedItem, button: QPushButton | None = None) -> None:
        """Requeue the item's job off the GUI thread; `retried` says how it went."""
        if button is not None:
            button.setEnabled(False)
        self.context.tasks.call(
            retry,
            self.context.service,
            self.context.agent_id,
            item,
            done=lambda result: self._retried(item, result),
            failed=lambda exc: self.retried.emit(f"The retry failed: {error_text(exc)}", False),
        )

    def _retried(self, item: FailedItem, result: RepairResult) -> None:
        if result.refused:
            self.retried.emit(f"Not retried yet: {result.message}", False)
        elif result.outcome.affected:
            self.retried.emit(f"Retrying {item.label}.", True)
        else:
            self.retried.emit(f"Nothing to retry: {item.label} is no longer failed.", False)

    def open(self, item: FailedItem) -> None:
        navigator = self.context.navigator
        if item.document_id is not None:
            navigator.show_pane("documents", document_id=item.document_id)
        else:
            navigator.show_pane("queue", state="dead")
