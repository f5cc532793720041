"""The window's status bar: daemon state, memories, vectors, workers and the last event.

It only renders: the shell hands it a `StatusView` (read off the GUI thread) and each bus event
it sees. A 1 s timer re-renders the "3 s ago" text from the stored time of the last event; it
reads nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

from signet_desktop.domain.events import Event
from signet_desktop.ui.status_view import (
    StatusView,
    ago,
    daemon_state,
    memories_text,
    tray_state,
    vectors_text,
    workers_text,
)

AGO_TICK_MS = 1000
QUIET_KINDS = ("status.changed",)  # bookkeeping, not something that happened to the user's data
DOT = "●"
_DOT_STATE = {"healthy": "ok", "working": "ok", "paused": "warn", "degraded": "warn"}


class StatusBar(QStatusBar):
    """`● ready · 12,431 memories · vectors complete · 2 workers idle · last: … 3 s ago`."""

    def __init__(
        self, parent: QWidget | None = None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__(parent)
        self.setSizeGripEnabled(False)
        self._clock = clock
        self._last_kind: str | None = None
        self._last_at = 0.0
        self.dot_label = QLabel(DOT)
        self.dot_label.setObjectName("statusDot")
        self.state_label = QLabel("starting…")
        self.memories_label = QLabel("")
        self.vectors_label = QLabel("")
        self.workers_label = QLabel("")
        self.last_label = QLabel("")
        self.note_label = QLabel("")
        self.url_label = QLabel("")
        for label in (
            self.dot_label,
            self.state_label,
            self.memories_label,
            self.vectors_label,
            self.workers_label,
            self.last_label,
        ):
            self.addWidget(label)
        self.addPermanentWidget(self.note_label)
        self.addPermanentWidget(self.url_label)
        self.note_label.hide()
        self._set_dot("ok")
        self._ticker = QTimer(self)
        self._ticker.setInterval(AGO_TICK_MS)
        self._ticker.timeout.connect(self._render_last)

    def show_view(self, view: StatusView) -> None:
        """Render fresh facts."""
        self.state_label.setText(daemon_state(view))
        self.memories_label.setText("· " + memories_text(view))
        self.vectors_label.setText("· " + vectors_text(view))
        self.workers_label.setText("· " + workers_text(view))
        state = tray_state(view)
        self._set_dot(_DOT_STATE.get(state.state, "error"))
        self.dot_label.setToolTip(state.reason)

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
        """Remember the last event (by kind) and when it arrived."""
        if event.kind in QUIET_KINDS:
            return
        self._last_kind = event.kind
        self._last_at = self._clock()
        self._render_last()
        if not self._ticker.isActive():
            self._ticker.start()

    def last_text(self) -> str:
        if self._last_kind is None:
            return ""
        return f"· last: {self._last_kind} {ago(self._clock() - self._last_at)}"

    def stop(self) -> None:
        self._ticker.stop()

    def _render_last(self) -> None:
        self.last_label.setText(self.last_text())

    def _set_dot(self, state: str) -> None:
        self.dot_label.setProperty("state", state)
        self.dot_label.style().unpolish(self.dot_label)
        self.dot_label.style().polish(self.dot_label)
