"""The minimal main window: daemon status labels and a recall search box.

Every facade call runs in a worker thread (`asyncio.to_thread` on the qasync loop): the UI thread
only formats results. The status labels refresh when the event bus says something changed
(through the Qt `EventBridge`), never on a timer. The full inspector replaces this window later.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from signet_desktop.domain.errors import SignetError
from signet_desktop.domain.events import Event
from signet_desktop.domain.recall import RecallQuery, RecallResult
from signet_desktop.service.facade import SignetService
from signet_desktop.ui.event_bridge import EventBridge
from signet_desktop.ui.hit_format import explain_hit, format_hit
from signet_desktop.ui.status_view import StatusView, read_status

log = logging.getLogger(__name__)

STATUS_DEBOUNCE_MS = 200  # a burst of events (an import, a backfill) costs one refresh
REFRESH_ON = ("memory.", "status.changed", "worker.state", "embedding.progress")
RECALL_LIMIT = 20


class MainWindow(QMainWindow):
    """Status of the running daemon and a search box over recall."""

    quit_requested = Signal()
    status_refreshed = Signal()
    recall_finished = Signal()

    def __init__(
        self,
        service: SignetService,
        url: str,
        workspace: str,
        *,
        hide_on_close: bool,
        events: EventBridge | None = None,
    ) -> None:
        super().__init__()
        self._service = service
        self._events = events or EventBridge(service.events, self)
        self._listening = False
        self._hide_on_close = hide_on_close
        self._pending: set[asyncio.Task[None]] = set()
        self.setWindowTitle("Signet Desktop")
        self.resize(720, 480)

        self.url_label = QLabel(url)
        self.workspace_label = QLabel(workspace)
        self.count_label = QLabel("…")
        self.vector_label = QLabel("…")
        self.state_label = QLabel("starting")
        for label in (self.url_label, self.workspace_label):
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.search_box = QLineEdit()
        self.search_box.setPlaceholderText("Recall: what do you want to remember?")
        self.search_button = QPushButton("Recall")
        self.results = QListWidget()
        self.results.setWordWrap(True)
        self.message_label = QLabel("")
        self.setCentralWidget(self._layout())

        self.search_box.returnPressed.connect(self._search_clicked)
        self.search_button.clicked.connect(self._search_clicked)
        self._timer = QTimer(self)  # debounces event-driven refreshes
        self._timer.setSingleShot(True)
        self._timer.setInterval(STATUS_DEBOUNCE_MS)
        self._timer.timeout.connect(self._refresh_clicked)

    def _layout(self) -> QWidget:
        facts = QFormLayout()
        facts.addRow("Daemon:", self.url_label)
        facts.addRow("Workspace:", self.workspace_label)
        facts.addRow("Memories:", self.count_label)
        facts.addRow("Vectors:", self.vector_label)
        facts.addRow("State:", self.state_label)
        search = QHBoxLayout()
        search.addWidget(self.search_box, 1)
        search.addWidget(self.search_button)
        column = QVBoxLayout()
        column.addLayout(facts)
        column.addLayout(search)
        column.addWidget(self.results, 1)
        column.addWidget(self.message_label)
        body = QWidget()
        body.setLayout(column)
        return body

    def start_refreshing(self) -> None:
        """Refresh the status now and whenever an event says it changed (once the loop runs)."""
        self._refresh_clicked()
        if not self._listening:
            self._events.event_published.connect(self._event_published)
            self._listening = True

    def stop_refreshing(self) -> None:
        if self._listening:
            self._events.event_published.disconnect(self._event_published)
            self._listening = False
        self._timer.stop()
        for task in list(self._pending):
            task.cancel()

    async def refresh_status(self) -> None:
        """Re-read the status labels' facts in a worker thread and show them."""
        try:
            view = await asyncio.to_thread(read_status, self._service)
        except (SignetError, RuntimeError) as exc:  # a closed database during shutdown
            self.state_label.setText(f"status unavailable: {exc}")
        else:
            self._show_status(view)
        self.status_refreshed.emit()

    def _show_status(self, view: StatusView) -> None:
        self.count_label.setText(str(view.memory_count))
        self.vector_label.setText(view.vector)
        if view.warming_up:
            self.state_label.setText("ready (warming up: " + ", ".join(view.warming_up) + ")")
        else:
            self.state_label.setText("ready")

    async def run_recall(self, text: str) -> None:
        """Recall `text` in a worker thread and list the hits."""
        query = text.strip()
        if not query:
            self.message_label.setText("Type something to recall.")
            self.recall_finished.emit()
            return
        self.search_button.setEnabled(False)
        self.message_label.setText("Searching…")
        try:
            result = await asyncio.to_thread(
                self._service.recall.search, RecallQuery(query=query, limit=RECALL_LIMIT)
            )
        except SignetError as exc:
            self.message_label.setText(f"Recall failed: {exc.message}")
        else:
            self._show_result(result)
        finally:
            self.search_button.setEnabled(True)
        self.recall_finished.emit()

    def _show_result(self, result: RecallResult) -> None:
        self.results.clear()
        for hit in result.hits:
            item = QListWidgetItem(format_hit(hit))
            item.setToolTip(explain_hit(hit))  # why it ranked: channels and context
            self.results.addItem(item)
        count = len(result.hits)
        if not count:
            self.message_label.setText(f"No memory matched ({result.total_ms:.0f} ms).")
            return
        noun = "memory" if count == 1 else "memories"
        self.message_label.setText(f"{count} {noun} in {result.total_ms:.0f} ms ({result.method})")

    def _event_published(self, event: Event) -> None:
        if event.kind.startswith(REFRESH_ON) and not self._timer.isActive():
            self._timer.start()

    def _search_clicked(self) -> None:
        self._spawn(self.run_recall(self.search_box.text()))

    def _refresh_clicked(self) -> None:
        self._spawn(self.refresh_status())

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coro)
        self._pending.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._pending.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("window task failed", exc_info=task.exception())

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._hide_on_close:
            event.ignore()
            self.hide()
            return
        event.accept()
        self.quit_requested.emit()
