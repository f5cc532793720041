"""One memory in full: content, metadata, provenance, the history timeline, and its actions.

Every pane opens it (through the Memories pane). It reads through the facade off the GUI
thread, acts with the person as actor (`INSPECTOR_ACTOR`) under the same rules as HTTP (a
reason for every change, force for a pinned forget, the version it showed as `if_version`),
and redraws from the `memory.*` event a change publishes — its own or anyone else's.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QGridLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QStackedLayout,
    QTreeWidget,
    QTreeWidgetItem,
    QWidget,
)

from signet_desktop.domain.errors import Conflict, InvalidInput, NotFound, SignetError
from signet_desktop.domain.events import Event
from signet_desktop.domain.memory import HistoryEvent, Memory, MemoryPatch
from signet_desktop.ui import memory_actions as actions
from signet_desktop.ui.empty_state import Banner
from signet_desktop.ui.memory_format import (
    INSPECTOR_ACTOR,
    deleted_notice,
    history_rows,
    metadata_line,
    provenance_rows,
)
from signet_desktop.ui.pane import PaneContext
from signet_desktop.ui.widgets import text_label, vbox

AskDialog = Callable[[QWidget, Memory, Callable[..., None]], object]

log = logging.getLogger(__name__)

MEMORY_EVENTS = frozenset(
    {"memory.created", "memory.updated", "memory.deleted", "memory.recovered"}
)
CONTENT_LINES = (2, 14)  # the content box grows with the text between these
HISTORY_COLUMNS = ("When", "Event", "By", "Change", "Reason")
PLACEHOLDER_TEXT = "Select a memory to read it in full, see its history and act on it."


def refusal_text(exc: BaseException) -> str:
    """What an inline error says about a refused action."""
    if isinstance(exc, Conflict) and exc.code == "pinned_requires_force":
        return "This memory is pinned: forgetting it needs “forget it anyway” checked."
    if isinstance(exc, Conflict) and exc.code == "version_conflict":
        return "The memory changed meanwhile (shown again below); try once more."
    if isinstance(exc, SignetError):
        return exc.message
    return f"Something went wrong: {exc}"


class MemoryDetail(QWidget):
    """The detail of one memory of `context.agent_id`; `show_memory(id)` loads it."""

    memory_shown = Signal(object)  # the Memory now shown (after every load)
    memory_missing = Signal(str)  # the id asked for is not in this agent's store

    def __init__(self, context: PaneContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("memoryDetail")
        self._context = context
        self._memory: Memory | None = None
        self._memory_id: str | None = None
        self._loads = 0
        self._build()
        context.events.event_published.connect(self._on_event)

    @property
    def memory(self) -> Memory | None:
        return self._memory

    @property
    def memory_id(self) -> str | None:
        return self._memory_id

    # -- layout ----------------------------------------------------------------------------

    def _build(self) -> None:
        self.placeholder = text_label(PLACEHOLDER_TEXT, name="detailPlaceholder", role="muted")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.banner = Banner(dismissible=False)
        self.notice = Banner(dismissible=False)  # deleted / not in the current list
        self.content = QPlainTextEdit()
        self.content.setObjectName("memoryContent")
        self.content.setReadOnly(True)
        font = self.content.font()
        font.setPointSizeF(font.pointSizeF() * 1.15)  # the memory itself is the headline
        self.content.setFont(font)
        self.content.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.meta = text_label(name="memoryMeta", role="muted", wrap=True)
        self.meta.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.provenance = QFormLayout()
        self.provenance.setHorizontalSpacing(12)
        self.provenance.setVerticalSpacing(2)  # eight short rows: the detail fits 640 high
        history_title = QLabel("History")
        history_title.setProperty("role", "heading")
        self.history = QTreeWidget()
        self.history.setObjectName("memoryHistory")
        self.history.setRootIsDecorated(False)
        self.history.setHeaderLabels(list(HISTORY_COLUMNS))
        self.history.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.history.header().setStretchLastSection(True)
        self.history.setAlternatingRowColors(True)
        self.pin_button = self._button("Pin", "pinButton", self.toggle_pin)
        self.tags_button = self._button(
            "Edit tags…", "tagsButton", lambda: self._ask(actions.ask_tags, self.set_tags)
        )
        self.importance_button = self._button(
            "Importance…",
            "importanceButton",
            lambda: self._ask(actions.ask_importance, self.set_importance),
        )
        self.forget_button = self._button("Forget…", "forgetButton", self._ask_forget)
        self.recover_button = self._button(
            "Recover…", "recoverButton", lambda: self._ask(actions.ask_recover, self.recover)
        )
        self.session_button = self._button("Open session", "openSessionButton", self.open_session)
        # Two rows of three: one row of six set the detail's minimum width to ~600 px.
        buttons = QGridLayout()
        buttons.setHorizontalSpacing(6)
        for index, button in enumerate(
            (
                self.pin_button,
                self.tags_button,
                self.importance_button,
                self.forget_button,
                self.recover_button,
                self.session_button,
            )
        ):
            buttons.addWidget(button, index // 3, index % 3)
        buttons.setColumnStretch(3, 1)

        body = QWidget()
        vbox(
            self.notice,
            self.content,
            self.meta,
            self.provenance,
            buttons,
            self.banner,
            history_title,
            (self.history, 1),
            parent=body,
            margins=(12, 12, 12, 12),
            spacing=6,
        )
        self._stack = QStackedLayout(self)
        self._stack.addWidget(self.placeholder)
        self._stack.addWidget(body)

    def _button(self, text: str, name: str, slot: Callable[[], Any]) -> QPushButton:
        button = QPushButton(text)
        button.setObjectName(name)
        button.clicked.connect(slot)
        return button

    # -- loading ---------------------------------------------------------------------------

    def show_memory(self, memory_id: str) -> None:
        """Load and show `memory_id` (deleted ones too; a missing one says so inline)."""
        if memory_id != self._memory_id:
            self.banner.clear()
        self._memory_id = memory_id
        self._reload()

    def clear(self) -> None:
        self._memory_id = None
        self._memory = None
        self._loads += 1
        self._stack.setCurrentIndex(0)
        self.placeholder.setText(PLACEHOLDER_TEXT)

    def _reload(self) -> None:
        memory_id, agent_id = self._memory_id, self._context.agent_id
        if memory_id is None:
            return
        self._loads += 1
        load = self._loads
        memories = self._context.service.memories

        def read() -> tuple[Memory, list[HistoryEvent]]:
            return memories.inspect(agent_id, memory_id), memories.history(agent_id, memory_id)

        def shown(result: tuple[Memory, list[HistoryEvent]]) -> None:
            if load == self._loads:
                self._render(*result)

        def refused(exc: BaseException) -> None:
            if load != self._loads:
                return
            if isinstance(exc, (NotFound, InvalidInput)):
                self._missing(memory_id)
            else:
                self.banner.show_message(refusal_text(exc))

        self._context.tasks.call(read, done=shown, failed=refused)

    def _missing(self, memory_id: str) -> None:
        self._memory = None
        self._stack.setCurrentIndex(0)
        self.placeholder.setText(
            f"Memory {memory_id} was not found — it may have been removed, or it belongs "
            "to another agent."
        )
        self.memory_missing.emit(memory_id)

    def _render(self, memory: Memory, events: list[HistoryEvent]) -> None:
        self._memory = memory
        self._stack.setCurrentIndex(1)
        if memory.is_deleted:
            self.notice.show_message(deleted_notice(memory), "warn")
        else:
            self.notice.clear()
        if self.content.toPlainText() != memory.content:
            self.content.setPlainText(memory.content)
            self._fit_content(memory.content)
        self.meta.setText(metadata_line(memory))
        while self.provenance.rowCount():
            self.provenance.removeRow(0)
        for label, value in provenance_rows(memory):
            text = QLabel(value)
            text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            text.setWordWrap(True)
            name = QLabel(label)
            name.setProperty("role", "muted")
            self.provenance.addRow(name, text)
        self.history.clear()
        for row in history_rows(events, memory):
            item = QTreeWidgetItem([row.when, row.event, row.actor, row.change, row.reason])
            item.setToolTip(4, row.reason)
            self.history.addTopLevelItem(item)
        live = not memory.is_deleted
        self.pin_button.setText("Unpin" if memory.pinned else "Pin")
        for button in (self.pin_button, self.tags_button, self.importance_button):
            button.setVisible(live)
        self.forget_button.setVisible(live)
        self.recover_button.setVisible(not live)
        self.session_button.setVisible(bool(memory.session_id))
        self.session_button.setToolTip(f"Read the transcript of session {memory.session_id}")
        self.memory_shown.emit(memory)

    def _fit_content(self, text: str) -> None:
        """As tall as the text wants, between CONTENT_LINES (min, max); longer text scrolls."""
        metrics = self.content.fontMetrics()
        per_line = max(20, self.content.viewport().width() // max(1, metrics.averageCharWidth()))
        lines = sum(1 + len(line) // per_line for line in text.splitlines() or [""])
        low, high = CONTENT_LINES
        height = metrics.lineSpacing() * min(high, max(low, lines)) + 16
        self.content.setFixedHeight(height)

    def _on_event(self, event: Event) -> None:
        if event.kind not in MEMORY_EVENTS or event.agent_id != self._context.agent_id:
            return
        if getattr(event, "memory_id", None) == self._memory_id:
            self._reload()

    # -- actions (each a facade call off the GUI thread; the event redraws) ----------------

    def toggle_pin(self) -> None:
        memory = self._memory
        if memory is not None:
            pinned = not memory.pinned
            reason = "pinned in the inspector" if pinned else "unpinned in the inspector"
            self.modify(MemoryPatch(pinned=pinned), reason)

    def set_tags(self, tags: tuple[str, ...], reason: str) -> None:
        self.modify(MemoryPatch(tags=tags), reason)

    def set_importance(self, importance: float, reason: str) -> None:
        self.modify(MemoryPatch(importance=importance), reason)

    def modify(self, patch: MemoryPatch, reason: str) -> None:
        memory = self._memory
        if memory is None:
            return
        memories, agent_id = self._context.service.memories, self._context.agent_id
        self._act(
            lambda: memories.modify(
                agent_id,
                memory.id,
                patch,
                reason=reason,
                if_version=memory.version,
                actor=INSPECTOR_ACTOR,
            )
        )

    def forget(self, reason: str, force: bool = False) -> None:
        memory = self._memory
        if memory is None:
            return
        memories, agent_id = self._context.service.memories, self._context.agent_id
        self._act(
            lambda: memories.forget(
                agent_id,
                memory.id,
                reason=reason,
                force=force,
                if_version=memory.version,
                actor=INSPECTOR_ACTOR,
            )
        )

    def recover(self, reason: str) -> None:
        memory = self._memory
        if memory is None:
            return
        memories, agent_id = self._context.service.memories, self._context.agent_id
        self._act(
            lambda: memories.recover(
                agent_id, memory.id, reason=reason, if_version=memory.version, actor=INSPECTOR_ACTOR
            )
        )

    def _act(self, call: Callable[[], object]) -> None:
        self.banner.clear()

        def refused(exc: BaseException) -> None:
            self.banner.show_message(refusal_text(exc))
            if isinstance(exc, Conflict):
                self._reload()

        self._context.tasks.call(call, failed=refused)

    def open_session(self) -> None:
        """The Transcripts pane, showing the session this memory came from."""
        if self._memory is not None and self._memory.session_id:
            self._context.navigator.show_pane("transcripts", session_key=self._memory.session_id)

    def _ask(self, ask: AskDialog, then: Callable[..., None]) -> None:
        """Open one of the memory's dialogs (`memory_actions.ask_*`); `then` gets its answer."""
        if self._memory is not None:
            ask(self, self._memory, then)

    def _ask_forget(self) -> None:
        self._ask(actions.ask_forget, self.forget)

    def shutdown(self) -> None:
        with contextlib.suppress(RuntimeError, TypeError):  # already disconnected
            self._context.events.event_published.disconnect(self._on_event)
