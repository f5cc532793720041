"""The window's status bar, in words: the verdict, memories, vectors, workers, failed items
and the last thing that happened.

It only renders: the shell hands it a `StatusView` (read off the GUI thread; its verdict is the
one the tray, Health and Queue show) and each bus event it sees, said in words
(`activity_words.describe`). A 1 s timer re-renders the "3 s ago" text from the stored time of
the last event; it reads nothing. Clicking the failed items asks for the Queue
(`failures_chosen`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

from signet_desktop.domain.events import Event
from signet_desktop.service.verdict import vectors_text
from signet_desktop.ui.activity_words import describe
from signet_desktop.ui.failed_items import link_html
from signet_desktop.ui.status_view import StatusView, ago, memories_text, workers_text
from signet_desktop.ui.widgets import ElidingLabel

AGO_TICK_MS = 1000
DOT = "●"
_DOT_STATE = {"healthy": "ok", "working": "ok", "paused": "warn", "degraded": "warn"}


class StatusBar(QStatusBar):
    """`● Ready · 12,431 memories · vectors complete · 2 workers idle · 1 failed item ·
    last: A memory was stored 3 s ago`."""

    failures_chosen = Signal()

    def __init__(
        self, parent: QWidget | None = None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__(parent)
        self.setSizeGripEnabled(False)
        self._clock = clock
        self._last_words: str | None = None
        self._last_at = 0.0
        self.dot_label = QLabel(DOT)
        self.dot_label.setObjectName("statusDot")
        self.state_label = QLabel("starting…")
        self.memories_label = QLabel("")
        self.vectors_label = ElidingLabel("")
        self.workers_label = ElidingLabel("")
        self.failed_label = QLabel("")
        self.failed_label.setObjectName("statusFailed")
        self.failed_label.setToolTip("Show the failed items in the Queue, each with Retry")
        self.failed_label.linkActivated.connect(lambda _link: self.failures_chosen.emit())
        self.failed_label.hide()
        self.last_label = ElidingLabel("", modest=True)  # the least needed: gets what is left
        self.note_label = QLabel("")
        self.url_label = QLabel("")
        for label in (
            self.dot_label,
            self.state_label,
            self.memories_label,
            self.vectors_label,
            self.workers_label,
            self.failed_label,
        ):
            self.addWidget(label)
        self.addWidget(self.last_label, 1)  # takes what room is left, and gives it up first
        self.addPermanentWidget(self.note_label)
        self.addPermanentWidget(self.url_label)
        self.note_label.hide()
        self._set_dot("ok")
        self._ticker = QTimer(self)
        self._ticker.setInterval(AGO_TICK_MS)
        self._ticker.timeout.connect(self._render_last)

    def show_view(self, view: StatusView) -> None:
        """Render fresh facts."""
        verdict = view.verdict
        self.state_label.setText(verdict.headline)
        self.memories_label.setText("· " + memories_text(view))
        self.vectors_label.setText("· " + vectors_text(view.facts))
        self.workers_label.setText("· " + workers_text(view))
        self.failed_label.setText("· " + link_html("queue", verdict.failed_text))
        self.failed_label.setVisible(bool(verdict.failed))
        self._set_dot(_DOT_STATE.get(verdict.state, "error"))
        self.dot_label.setToolTip(verdict.reason)

    def show_failure(self, text: str) -> None:
        """The facts could not be read (shown in place, the bar keeps working)."""
        self.state_label.setText(text)
        self._set_dot("error")

    def set_state_text(self, text: str) -> None:
        self.state_label.setText(text)

    def set_url(self, url: str) -> None:
        self.url_label.setText(url)

    def set_note(self, text: str) -> None:
        """A standing one-line note (e.g. "no system tray: closing the window quits")."""
        self.note_label.setText(text)
        self.note_label.setVisible(bool(text))

    def note_event(self, event: Event) -> None:
        """Remember the last event (in words) and when it arrived; bookkeeping is skipped."""
        line = describe(event)
        if line is None:
            return
        self._last_words = line.text
        self._last_at = self._clock()
        self._render_last()
        if not self._ticker.isActive():
            self._ticker.start()

    def last_text(self) -> str:
        if self._last_words is None:
            return ""
        return f"· {self._last_words} {ago(self._clock() - self._last_at)}"

    def stop(self) -> None:
        self._ticker.stop()

    def _render_last(self) -> None:
        self.last_label.setText(self.last_text())

    def _set_dot(self, state: str) -> None:
        self.dot_label.setProperty("state", state)
        self.dot_label.style().unpolish(self.dot_label)
        self.dot_label.style().polish(self.dot_label)
