"""The Dreaming pane: every pass as a timeline, and one pass audited down to each quote.

Over 600 lines: the pass audit's three views (tool calls, operations, quotes) select each
other, so they stay in one class until they become one `PassAudit` widget (its words and
quotes already live in `ui/dreaming_format.py` and `ui/quote_format.py`).

Left, the agent's passes newest first (mode, status, duration, tokens, cost, what changed),
filtered by agent and status. Right, the selected pass: its heading and facts; its ordered
tool calls (expand one for its arguments and result; the selected call's JSON in full below);
every operation the apply seam saw — applied ✔, proposed ‖, skipped, failed ✘ with the reason
— and, for the selected operation, each cited quote highlighted in its source's canonical text
(a transcript quote links to the Transcripts pane at that session); the evidence window, the
runbook and the exclusions with their reasons. "Run a pass" triggers one (disabled, with the
reason, when no inference provider is configured); "Revert this pass…" runs the revert as a
dry run, shows its changes or what blocks it, and reverts only when confirmed.

Every service call runs off the GUI thread; the pane re-reads on `dream.*`, `ontology.changed`
and `pass.reverted` events of the shown agent, never on a timer.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QSize, Qt, QUrl
from PySide6.QtGui import QBrush, QColor, QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from signet_desktop.domain.dreaming import DreamingPass, DreamingStatus, PassDetail
from signet_desktop.domain.ontology import OperationRecord
from signet_desktop.ui import dreaming_format as fmt
from signet_desktop.ui import quote_format as quote_fmt
from signet_desktop.ui.dreaming_items import OperationItem, PassItem, tone_colour
from signet_desktop.ui.hit_format import preview
from signet_desktop.ui.pane import PaneContext, PaneSpec
from signet_desktop.ui.pane_frame import Frame, FramedPane, error_text
from signet_desktop.ui.quote_view import QuoteView
from signet_desktop.ui.style import current_theme
from signet_desktop.ui.widgets import select_quietly

LIST_LIMIT = 100
LIST_MIN_WIDTH = 300
EMPTY_TITLE = "No Dreaming passes yet"
EMPTY_HINT = (
    "A Dreaming pass reads your agent's completed transcripts and memories and consolidates "
    "them into entities, claims and links, citing the exact words behind every change. "
    "Passes run on their own once enough new evidence arrives (memory.dreaming.enabled), or "
    "start one now with Run a pass. Each one is audited here, tool call by tool call."
)
FRAME = Frame(
    title="Dreaming",
    count_name="dreamCount",
    icon="dreaming.svg",
    empty_title=EMPTY_TITLE,
    empty_hint=EMPTY_HINT,
    read_error="The Dreaming passes could not be read",
    notice_name="dreamNotice",
    refresh_on=("dream.pass_started", "dream.pass_finished", "ontology.changed", "pass.reverted"),
)
NO_INFERENCE = (
    "Dreaming needs a model: run `signet dream setup` to use your Claude Code, Codex or "
    "OpenCode, or set inference.workloads.memoryExtraction in agent.yaml (an OpenAI-compatible "
    "server such as Ollama or llama.cpp, or Anthropic)."
)
HARNESS_LABELS = {"claude": "Claude Code", "codex": "Codex", "opencode": "OpenCode"}  # acpx:<kind>
OPERATION_ROLE = Qt.ItemDataRole.UserRole + 1  # a timeline row that is one operation
INSPECTOR = "inspector"  # the actor of a revert started here
Snapshot = tuple[list[DreamingPass], DreamingStatus | None, list[str]]
Confirm = Callable[[str, list[str], bool], bool]


class DreamingPane(FramedPane):
    """The pass timeline and one pass's audit."""

    def __init__(self, context: PaneContext) -> None:
        super().__init__(context, FRAME)
        self.setObjectName("dreamingPane")
        self.dreaming = getattr(context.service, "dreaming", None)
        self.confirm_revert: Confirm = self._ask_to_revert
        self.passes: list[DreamingPass] = []
        self.status: DreamingStatus | None = None
        self.detail: PassDetail | None = None
        self.operation: OperationRecord | None = None
        self._records: list[OperationRecord] = []
        self.names: dict[str, str] = {}  # entity id -> name, for the shown pass's operations
        self._wanted: str | None = None
        self._reverting = False
        self._build()

    # -- layout ----------------------------------------------------------------------------

    def _build(self) -> None:
        self.mode = QComboBox()
        self.mode.setObjectName("dreamMode")
        for mode in fmt.MODE_CHOICES:
            self.mode.addItem(mode, mode)
        self.run_button = QPushButton("Run a pass")
        self.run_button.setObjectName("dreamRun")
        self.run_button.setProperty("primary", True)
        self.run_button.setEnabled(self.dreaming is not None)
        self.run_button.clicked.connect(self.run_pass)
        self.cancel_button = QPushButton("Cancel pass")
        self.cancel_button.setObjectName("dreamCancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.setVisible(False)  # shown while a pass runs
        self.cancel_button.clicked.connect(self.cancel_running)
        self._running_pass: str | None = None
        self.state_label = QLabel("")
        self.state_label.setObjectName("dreamState")
        self.state_label.setProperty("role", "muted")
        self.state_label.setWordWrap(True)
        self.agent_filter = QComboBox()
        self.agent_filter.setObjectName("dreamAgent")
        self.agent_filter.addItem(f"agent {self.agent_id}", self.agent_id)
        self.agent_filter.currentIndexChanged.connect(self._agent_changed)
        self.status_filter = QComboBox()
        self.status_filter.setObjectName("dreamStatusFilter")
        for label, value in fmt.STATUS_CHOICES:
            self.status_filter.addItem(label, value)
        self.status_filter.currentIndexChanged.connect(lambda _i: self.refresh())
        filters = QHBoxLayout()
        filters.addWidget(self.agent_filter)
        filters.addWidget(self.status_filter)
        filters.addSpacing(12)
        filters.addWidget(self.state_label, 1)
        self.list = QListWidget()
        self.list.setObjectName("dreamPasses")
        self.list.setMinimumWidth(LIST_MIN_WIDTH)
        self.list.setMaximumWidth(LIST_MIN_WIDTH + 80)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.currentRowChanged.connect(self._on_row)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.list)
        self.splitter.addWidget(self._detail())
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([LIST_MIN_WIDTH, 760])
        content = QWidget()
        column = QVBoxLayout(content)
        column.setContentsMargins(0, 0, 0, 0)
        column.addLayout(filters)
        column.addWidget(self.splitter, 1)
        self.frame_layout(content, header=[self.mode, self.run_button, self.cancel_button])
        self.notice.setWordWrap(True)

    def _detail(self) -> QWidget:
        box = QWidget()
        box.setObjectName("dreamDetail")
        self.heading = QLabel("Select a pass")
        self.heading.setProperty("role", "heading")
        self.heading.setWordWrap(True)
        self.facts = QLabel("")
        self.facts.setObjectName("dreamFacts")
        self.facts.setProperty("role", "muted")
        self.facts.setWordWrap(True)
        self.facts.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary = QLabel("")
        self.summary.setObjectName("dreamSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.revert_button = QPushButton("Revert this pass…")
        self.revert_button.setObjectName("dreamRevert")
        self.revert_button.clicked.connect(self.revert_current)
        top = QHBoxLayout()
        top.addWidget(self.heading, 1)
        top.addWidget(self.revert_button, 0, Qt.AlignmentFlag.AlignTop)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.calls_label = QLabel("Timeline")
        self.calls_label.setProperty("role", "muted")
        self.calls = QTreeWidget()
        self.calls.setObjectName("dreamToolCalls")
        self.calls.setHeaderLabels(["Tool call", "Took"])
        self.calls.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.calls.header().setStretchLastSection(False)
        self.calls.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.calls.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.calls.currentItemChanged.connect(lambda item, _old: self._show_call(item))
        self.call_json = QPlainTextEdit()
        self.call_json.setObjectName("dreamCallJson")
        self.call_json.setReadOnly(True)
        self.call_json.setFont(mono)
        self.call_json.setPlaceholderText("Select a tool call to see its arguments and result.")
        calls_split = QSplitter(Qt.Orientation.Vertical)
        calls_split.addWidget(self.calls)
        calls_split.addWidget(self.call_json)
        calls_split.setSizes([260, 140])
        calls_box = QWidget()
        calls_column = QVBoxLayout(calls_box)
        calls_column.setContentsMargins(0, 0, 0, 0)
        calls_column.setSpacing(4)
        calls_column.addWidget(self.calls_label)
        calls_column.addWidget(calls_split, 1)
        self.ops_label = QLabel("Operations")
        self.ops_label.setProperty("role", "muted")
        self.ops = QListWidget()
        self.ops.setObjectName("dreamOperations")
        self.ops.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.ops.currentRowChanged.connect(self._on_operation)
        self.quotes = QuoteView(self.context)
        self.quotes.setObjectName("dreamQuotes")
        ops_split = QSplitter(Qt.Orientation.Vertical)
        ops_split.addWidget(self.ops)
        ops_split.addWidget(self.quotes)
        ops_split.setSizes([220, 180])
        ops_box = QWidget()
        ops_column = QVBoxLayout(ops_box)
        ops_column.setContentsMargins(0, 0, 0, 0)
        ops_column.setSpacing(4)
        ops_column.addWidget(self.ops_label)
        ops_column.addWidget(ops_split, 1)
        middle = QSplitter(Qt.Orientation.Horizontal)
        middle.addWidget(calls_box)
        middle.addWidget(ops_box)
        middle.setSizes([330, 430])
        self.window_text = self._text("dreamWindow", mono)
        self.runbook_text = self._text("dreamRunbook", None)
        self.exclusions_text = self._text("dreamExclusions", None)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("dreamTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.window_text, "Evidence window")
        self.tabs.addTab(self.runbook_text, "Runbook")
        self.tabs.addTab(self.exclusions_text, "Exclusions")
        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(middle)
        body.addWidget(self.tabs)
        body.setSizes([420, 150])
        column = QVBoxLayout(box)
        column.setContentsMargins(12, 0, 0, 0)
        column.setSpacing(4)
        column.addLayout(top)
        column.addWidget(self.facts)
        column.addWidget(self.summary)
        column.addSpacing(4)
        column.addWidget(body, 1)
        self.detail_box = box
        self._show_detail(None)
        return box

    def _text(self, name: str, font: Any) -> QPlainTextEdit:
        edit = QPlainTextEdit()
        edit.setObjectName(name)
        edit.setReadOnly(True)
        if font is not None:
            edit.setFont(font)
        return edit

    # -- the PaneWidget hooks --------------------------------------------------------------

    def reveal(self, **reveal: Any) -> None:
        """`pass_id=…`: open that pass of the shown agent."""
        self.open_revealed(reveal.get("pass_id"), self._load_detail)

    # -- reading ---------------------------------------------------------------------------

    def unavailable(self) -> tuple[str, str] | None:
        if self.dreaming is None:
            return "Dreaming is not available", "This build has no Dreaming service."
        return None

    def reader(self) -> Callable[[], Snapshot]:
        dreaming, agent = self.dreaming, self.agent_id
        assert dreaming is not None
        status = self.status_filter.currentData()
        memory_md = getattr(self.context.service, "memory_md", None)

        def read() -> Snapshot:
            listed = dreaming.list_passes(agent, status=status, limit=LIST_LIMIT)
            agents = memory_md.agents() if memory_md is not None else []
            return listed, dreaming.status(agent), agents

        return read

    def show_snapshot(self, snapshot: Snapshot) -> None:
        listed, status, agents = snapshot
        self.passes, self.status = listed, status
        self._set_agents(agents)
        self._set_status(status)
        filtered = self.status_filter.currentIndex() > 0
        self.show_listing(not listed and not filtered, fmt.timeline_counts(listed))
        selected = self._wanted or (self.detail.record.id if self.detail else None)
        ids = [p.id for p in listed]
        self.list.blockSignals(True)
        self.list.clear()
        for item in listed:
            row = fmt.pass_row(item)
            widget = PassItem(row)
            entry = QListWidgetItem()
            entry.setData(Qt.ItemDataRole.UserRole, item.id)
            entry.setSizeHint(widget.sizeHint())
            entry.setToolTip(row.note or row.title)
            self.list.addItem(entry)
            self.list.setItemWidget(entry, widget)
        self.list.blockSignals(False)
        if selected in ids:
            select_quietly(self.list, ids.index(selected))
            self._load_detail(str(selected))
        elif ids and selected is None:
            self.list.setCurrentRow(0)
        elif not ids:
            self._show_detail(None)

    def _set_agents(self, agents: Sequence[str]) -> None:
        known = [self.agent_filter.itemData(i) for i in range(self.agent_filter.count())]
        wanted = [self.context.agent_id, *sorted(set(agents) - {self.context.agent_id})]
        if self.agent_id not in wanted:
            wanted.append(self.agent_id)
        if wanted == known:
            return
        self.agent_filter.blockSignals(True)
        self.agent_filter.clear()
        for agent in wanted:
            self.agent_filter.addItem(f"agent {agent}", agent)
        self.agent_filter.setCurrentIndex(max(0, self.agent_filter.findData(self.agent_id)))
        self.agent_filter.blockSignals(False)

    def _set_status(self, status: DreamingStatus | None) -> None:
        if status is None:
            return
        running = status.running_pass_id is not None
        self._running_pass = status.running_pass_id
        self.cancel_button.setEnabled(running)
        self.cancel_button.setVisible(running)
        self.cancel_button.setToolTip(
            "Stop the running pass; what it applied so far stays (revert it if you wish)."
        )
        runner = _runner_text(status)
        can_run = status.inference_configured and not running
        self.run_button.setEnabled(can_run)
        self.run_button.setProperty("primary", can_run)  # a disabled button is not the accent
        self.run_button.style().unpolish(self.run_button)
        self.run_button.style().polish(self.run_button)
        if not status.inference_configured:
            reason = status.inference_reason or "no provider"
            self.run_button.setToolTip(f"{NO_INFERENCE} ({reason})")
            self.state_label.setText(NO_INFERENCE)
        elif running:
            self.run_button.setToolTip("A pass is running for this agent; Cancel pass stops it.")
            self.state_label.setText(f"A pass is running through {runner}…")
        else:
            self.run_button.setToolTip(f"Start a pass of the chosen mode now ({runner}).")
            pending = (
                f"{status.pending_sources} new source{'s' if status.pending_sources != 1 else ''}"
            )
            self.state_label.setText(
                f"{status.detail} · {pending} · {fmt.compact(status.pending_tokens)} tokens waiting"
                f" · runs through {runner}"
            )

    def _agent_changed(self, _index: int) -> None:
        agent = self.agent_filter.currentData()
        if isinstance(agent, str) and agent != self.agent_id:
            self.agent_id = agent
            self._wanted = None
            self.quotes.forget_sources()
            self._show_detail(None)
            self.refresh()

    def _on_row(self, row: int) -> None:
        if 0 <= row < len(self.passes):
            self._load_detail(self.passes[row].id)

    def _load_detail(self, pass_id: str) -> None:
        dreaming, agent = self.dreaming, self.agent_id
        if dreaming is None:
            return
        self._wanted = pass_id

        service = self.context.service

        def read() -> tuple[PassDetail, dict[str, str]]:
            detail = dreaming.get_pass(agent, pass_id)
            ids: set[str] = set()
            for op in detail.operations:
                if isinstance(op, OperationRecord):
                    ids |= fmt.entity_ids(op.payload)
            return detail, entity_names(service, agent, ids)

        def shown(answer: tuple[PassDetail, dict[str, str]]) -> None:
            detail, names = answer
            if detail.record.id == self._wanted and agent == self.agent_id:
                self.names = names
                self._show_detail(detail)

        def failed(exc: BaseException) -> None:
            if self._wanted == pass_id:
                self._wanted = None
                self._show_detail(None)
                self.banner.show_message(f"The pass could not be read: {error_text(exc)}")

        self.context.tasks.call(read, done=shown, failed=failed)

    # -- one pass --------------------------------------------------------------------------

    def _show_detail(self, detail: PassDetail | None) -> None:
        keep_call = self.calls.currentItem()
        call_seq = keep_call.data(0, Qt.ItemDataRole.UserRole) if keep_call else None
        keep_op = self.operation.id if self.operation is not None else None
        same = (
            detail is not None
            and self.detail is not None
            and (detail.record.id == self.detail.record.id)
        )
        self.detail = detail
        self.calls.clear()
        self.ops.clear()
        self.call_json.clear()
        self.quotes.clear()
        self.operation = None
        self.detail_box.setEnabled(detail is not None)
        if detail is None:
            self.heading.setText("Select a pass")
            self.facts.setText("")
            self.summary.setText("")
            for edit in (self.window_text, self.runbook_text, self.exclusions_text):
                edit.clear()
            self.revert_button.setEnabled(False)
            return
        record = detail.record
        theme = current_theme()
        self.heading.setText(fmt.pass_heading(record))
        self.heading.setToolTip(f"pass id {record.id}")
        self.facts.setText(fmt.pass_subline(record))
        failed = record.status in ("failed", "cancelled") and bool(record.error)
        self.summary.setText(f"Error: {record.error}" if failed else (record.summary or ""))
        self.summary.setStyleSheet(f"color: {theme.error if failed else theme.text};")
        self.summary.setVisible(bool(self.summary.text()))
        self.revert_button.setEnabled(
            record.status != "running"
            and any(getattr(op, "status", "") == "applied" for op in detail.operations)
        )
        self._fill_calls(detail, call_seq if same else None)
        self._fill_operations(detail, keep_op if same else None)
        head, lines = fmt.window_lines(record.evidence_window)
        self.window_text.setPlainText("\n".join([head, "", *lines]))
        self.tabs.setTabText(
            0, f"Evidence window ({len((record.evidence_window or {}).get('items', []))})"
        )
        self.runbook_text.setPlainText(fmt.runbook_text(record.runbook))
        exclusions = [fmt.exclusion_line(e) for e in detail.exclusions]
        self.exclusions_text.setPlainText("\n".join(exclusions) or "Nothing was excluded.")
        self.tabs.setTabText(2, f"Exclusions ({len(exclusions)})")

    def _fill_calls(self, detail: PassDetail, keep: object) -> None:
        theme = current_theme()
        calls = [fmt.tool_call_row(c) for c in detail.tool_calls]
        self.calls_label.setText(
            f"Timeline · {len(calls)} tool call{'s' if len(calls) != 1 else ''}"
            if calls
            else "Timeline · no tool calls (the provider was not asked)"
        )
        records = [op for op in detail.operations if isinstance(op, OperationRecord)]
        sent = fmt.operations_of_calls(detail.tool_calls, records)
        current = None
        for row in calls:
            item = QTreeWidgetItem([row.line, row.took])
            item.setData(0, Qt.ItemDataRole.UserRole, row.seq)
            item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight)
            item.setToolTip(0, row.line)
            if row.status != "ok":
                item.setForeground(0, QBrush(QColor(theme.error)))
            for label, text in (("arguments", row.arguments), ("result", row.result)):
                child = QTreeWidgetItem(
                    [f"{label}: {preview(text, 120)}" if text else f"{label}: —", ""]
                )
                child.setData(0, Qt.ItemDataRole.UserRole, row.seq)
                child.setForeground(0, QBrush(QColor(theme.muted)))
                child.setToolTip(0, text[:2000])
                item.addChild(child)
            for record in sent.get(row.seq, []):  # what this apply call did, op by op
                op = fmt.operation_row(record, self.names)
                child = QTreeWidgetItem([f"{op.title}  {op.subject}".rstrip(), ""])
                child.setData(0, Qt.ItemDataRole.UserRole, row.seq)
                child.setData(0, OPERATION_ROLE, record.id)
                child.setForeground(0, QBrush(QColor(tone_colour(op.tone, theme))))
                child.setToolTip(0, op.outcome)
                item.addChild(child)
            self.calls.addTopLevelItem(item)
            item.setExpanded(row.seq in sent)
            if row.seq == keep:
                current = item
        if current is not None:
            self.calls.setCurrentItem(current)

    def _show_call(self, item: QTreeWidgetItem | None) -> None:
        if item is None or self.detail is None:
            self.call_json.clear()
            return
        record_id = item.data(0, OPERATION_ROLE)
        if isinstance(record_id, str):  # an operation under its apply call: show it
            ids = [r.id for r in self._records]
            if record_id in ids:
                self.ops.setCurrentRow(ids.index(record_id))
        seq = item.data(0, Qt.ItemDataRole.UserRole)
        for call in self.detail.tool_calls:
            if call.seq == seq:
                row = fmt.tool_call_row(call)
                self.call_json.setPlainText(
                    f"{row.line}  ·  {row.took}  ·  {row.status}\n\n"
                    f"Arguments\n{row.arguments or '—'}\n\nResult\n{row.result or '—'}"
                )
                return

    def _fill_operations(self, detail: PassDetail, keep: str | None) -> None:
        records = [op for op in detail.operations if isinstance(op, OperationRecord)]
        self.ops_label.setText(
            f"Operations · {fmt.operation_counts(records)}"
            if records
            else "Operations · none (nothing was asked of the apply seam)"
        )
        select = 0
        for n, record in enumerate(records):
            row = fmt.operation_row(record, self.names)
            widget = OperationItem(row)
            entry = QListWidgetItem()
            entry.setData(Qt.ItemDataRole.UserRole, record.id)
            width = max(self.ops.viewport().width() - 4, 320)
            height = widget.heightForWidth(width)
            entry.setSizeHint(QSize(width, height if height > 0 else widget.sizeHint().height()))
            self.ops.addItem(entry)
            self.ops.setItemWidget(entry, widget)
            if record.id == keep:
                select = n
        self._records = records
        if records:
            self.ops.setCurrentRow(select)

    def _on_operation(self, row: int) -> None:
        if not 0 <= row < len(self._records):
            return
        record = self._records[row]
        self.operation = record
        self.quotes.show_quotes(
            self._operation_header(record), quote_fmt.quotes_of(record.evidence), self.agent_id
        )

    def _operation_header(self, record: OperationRecord) -> str:
        """The operation's mark, name, subject and outcome above its quotes."""
        theme = current_theme()
        row = fmt.operation_row(record, self.names)
        colour = tone_colour(row.tone, theme)
        parts = [
            f"<p><b style='color:{colour}'>{html.escape(row.title)}</b> "
            f"{html.escape(row.subject)}<br>"
            f"<span style='color:{theme.muted}'>{html.escape(row.outcome)}</span></p>"
        ]
        if row.provenance:
            parts.append(
                f"<p style='color:{theme.muted}'>provenance: {html.escape(row.provenance)}</p>"
            )
        return "".join(parts)

    def _open_anchor(self, url: QUrl) -> None:
        """A quote's source link (tests call it as a click would)."""
        self.quotes.open_source(url)

    # -- run and revert --------------------------------------------------------------------

    def run_pass(self) -> None:
        """Trigger a pass of the chosen mode for the shown agent (in the background)."""
        dreaming, agent, mode = self.dreaming, self.agent_id, self.mode.currentData()
        if dreaming is None:
            return
        self.run_button.setEnabled(False)
        self.banner.clear()

        def started(pass_id: str) -> None:
            self.say(
                f"Pass {quote_fmt.short_ref(pass_id)} started ({mode}); it shows here as it runs."
            )
            self._wanted = pass_id
            self.refresh()

        def refused(exc: BaseException) -> None:
            self.banner.show_message(f"The pass did not start: {error_text(exc)}")
            self.refresh()

        self.context.tasks.call(dreaming.trigger, agent, mode, done=started, failed=refused)

    def cancel_running(self) -> None:
        """Cancel the shown agent's running pass (in the background)."""
        dreaming, agent, pass_id = self.dreaming, self.agent_id, self._running_pass
        if dreaming is None or pass_id is None:
            return
        self.cancel_button.setEnabled(False)

        def cancelled(_answer: object) -> None:
            self.say(f"Pass {quote_fmt.short_ref(pass_id)} is being cancelled.")
            self.refresh()

        def refused(exc: BaseException) -> None:
            self.banner.show_message(f"The pass was not cancelled: {error_text(exc)}")
            self.refresh()

        self.context.tasks.call(
            dreaming.cancel_pass, agent, pass_id, done=cancelled, failed=refused
        )

    def revert_current(self) -> None:
        """Dry-run the revert of the shown pass, show it, revert only when confirmed."""
        revert = _reverter(self.context.service)
        detail = self.detail
        if detail is None or self._reverting:
            return
        if revert is None:
            self.banner.show_message("This build cannot revert passes.", "warn")
            return
        agent, pass_id = self.agent_id, detail.record.id
        self._reverting = True
        self.banner.clear()

        def previewed(plan: Any) -> None:
            changes = list(getattr(plan, "changes", ()) or ())
            blockers = list(getattr(plan, "blockers", ()) or ())
            head, lines = fmt.revert_preview(changes, blockers)
            can_apply = bool(changes) and not blockers
            if not self.confirm_revert(head, lines, can_apply) or not can_apply:
                self._reverting = False
                if blockers:
                    self.banner.show_message(head + " " + "; ".join(lines[:3]), "warn")
                else:
                    self.say("Nothing changed.")
                return
            self.context.tasks.call(revert, agent, pass_id, False, done=reverted, failed=failed)

        def reverted(plan: Any) -> None:
            self._reverting = False
            count = len(list(getattr(plan, "changes", ()) or ()))
            self.say(
                f"Pass {quote_fmt.short_ref(pass_id)} reverted: {count} change"
                f"{'' if count == 1 else 's'} undone."
            )
            self.refresh()

        def failed(exc: BaseException) -> None:
            self._reverting = False
            self.banner.show_message(f"The revert failed: {error_text(exc)}")

        self.context.tasks.call(revert, agent, pass_id, True, done=previewed, failed=failed)

    def _ask_to_revert(self, head: str, lines: list[str], can_apply: bool) -> bool:
        box = QMessageBox(self)
        box.setObjectName("dreamRevertConfirm")
        box.setIcon(QMessageBox.Icon.Question if can_apply else QMessageBox.Icon.Warning)
        box.setWindowTitle("Revert Dreaming pass")
        box.setText(head)
        shown = lines[:30] + ([f"… and {len(lines) - 30} more"] if len(lines) > 30 else [])
        box.setInformativeText(
            "\n".join(shown) + ("\n\nThe dry run changed nothing. Revert?" if can_apply else "")
        )
        if not can_apply:
            box.addButton(QMessageBox.StandardButton.Close)
            box.exec()
            return False
        apply = box.addButton("Revert", QMessageBox.ButtonRole.DestructiveRole)
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel)
        box.exec()
        return box.clickedButton() is apply

    def pass_ids(self) -> list[str]:
        """The passes in the timeline, top to bottom (tests)."""
        return [p.id for p in self.passes]


def _runner_text(status: DreamingStatus) -> str:
    """Who runs the passes, as a person reads it: "Claude Code (/path/claude)", "anthropic"."""
    if status.executor == "acpx":
        kind = (status.runner or "").rpartition(":")[2]
        label = HARNESS_LABELS.get(kind, status.runner)
        return f"{label} ({status.harness})"
    if status.runner:
        model = f" {status.runner_model}" if status.runner_model else ""
        return f"{status.runner}{model}"
    return "no model"


def entity_names(service: object, agent_id: str, ids: set[str], most: int = 50) -> dict[str, str]:
    """The names of the agent's entities among `ids` (on a worker thread; another agent's or
    a missing id is left out). At most `most` lookups."""
    knowledge = getattr(service, "knowledge", None)
    if knowledge is None:
        return {}
    names: dict[str, str] = {}
    for entity_id in sorted(ids)[:most]:
        try:
            names[entity_id] = knowledge.get_entity(
                agent_id, entity_id, mention_limit=1
            ).entity.name
        except Exception:  # not this agent's, or gone: the id is shown cut short
            continue
    return names


def _reverter(service: object) -> Callable[[str, str, bool], Any] | None:
    """`revert(agent_id, pass_id, dry_run)` over `service.ontology.revert_pass`."""
    found = getattr(getattr(service, "ontology", None), "revert_pass", None)
    if not callable(found):
        return None

    def revert(agent_id: str, pass_id: str, dry_run: bool) -> Any:
        return found(agent_id, pass_id, actor=INSPECTOR, dry_run=dry_run)

    return revert


PANE = PaneSpec(
    key="dreaming",
    title="Dreaming",
    icon="dreaming.svg",
    order=50,
    factory=DreamingPane,
    shortcut="Ctrl+5",
)
