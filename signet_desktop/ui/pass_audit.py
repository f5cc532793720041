"""One Dreaming pass audited: its heading, tool calls, operations, quotes and evidence.

The right side of the Dreaming pane (`ui/panes/dreaming.py`): the timeline of tool calls in
words on top, below it one set of tabs — the operations with the selected one's quotes
highlighted in their sources (`ui/quote_view.py`), the evidence window, the runbook, the
exclusions. An operation under its apply call in the timeline selects it in the operations
list. The raw side — tool names, payload JSON, ids, each evidence source — shows only with
the "Details" toggle. Its words come from `ui/dreaming_format.py`, `ui/dreaming_words.py` and
`ui/quote_format.py`; it reads nothing itself.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QBrush, QColor, QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QWidget,
)

from signet_desktop.domain.dreaming import PassDetail
from signet_desktop.domain.ontology import OperationRecord
from signet_desktop.ui import dreaming_format as fmt
from signet_desktop.ui import quote_format as quote_fmt
from signet_desktop.ui.dreaming_items import OperationItem, tone_colour
from signet_desktop.ui.hit_format import preview
from signet_desktop.ui.pane import PaneContext
from signet_desktop.ui.quote_view import QuoteView
from signet_desktop.ui.style import current_theme
from signet_desktop.ui.widgets import add_row, fit_rows, keep_rows_fitted, split, text_label, vbox

OPERATION_ROLE = Qt.ItemDataRole.UserRole + 1  # a timeline row that is one operation


def _labelled(label: QLabel, *widgets: QWidget) -> QWidget:
    """`label` over `widgets` (the first one stretches)."""
    box = QWidget()
    column = vbox(label, parent=box, margins=(0, 0, 0, 0), spacing=4)
    for index, widget in enumerate(widgets):
        column.addWidget(widget, 1 if index == 0 else 0)
    return box


class PassAudit(QWidget):
    """A pass's heading and facts, its timeline, operations and quotes, window and runbook."""

    def __init__(
        self, context: PaneContext, revert: Callable[[], None], agent: Callable[[], str]
    ) -> None:
        super().__init__()
        self.setObjectName("dreamDetail")
        self.context = context
        self._agent = agent
        self.detail: PassDetail | None = None
        self.operation: OperationRecord | None = None
        self._records: list[OperationRecord] = []
        self.names: dict[str, str] = {}  # entity id -> name, for the shown pass's operations
        box = self
        self.heading = text_label("Select a pass", role="heading", wrap=True)
        self.facts = text_label("", name="dreamFacts", role="muted", wrap=True)
        self.facts.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary = text_label("", name="dreamSummary", wrap=True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.revert_button = QPushButton("Revert this pass…")
        self.revert_button.setObjectName("dreamRevert")
        self.revert_button.clicked.connect(revert)
        self.details_button = QPushButton("Details")
        self.details_button.setObjectName("dreamDetails")
        self.details_button.setCheckable(True)
        self.details_button.setToolTip("Show tool names, raw JSON, ids and every evidence source")
        self.details_button.toggled.connect(self._details_toggled)
        top = QHBoxLayout()
        top.addWidget(self.heading, 1)
        top.addWidget(self.details_button, 0, Qt.AlignmentFlag.AlignTop)
        top.addWidget(self.revert_button, 0, Qt.AlignmentFlag.AlignTop)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.calls_label = QLabel("Timeline")
        self.calls_label.setProperty("role", "muted")
        self.calls = QTreeWidget()
        self.calls.setObjectName("dreamToolCalls")
        self.calls.setHeaderLabels(["What the pass did", "Took"])
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
        self.ops_label = QLabel("Operations")
        self.ops_label.setProperty("role", "muted")
        self.ops = QListWidget()
        self.ops.setObjectName("dreamOperations")
        self.ops.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.ops.currentRowChanged.connect(self._on_operation)
        keep_rows_fitted(self.ops)
        self.quotes = QuoteView(self.context)
        self.quotes.setObjectName("dreamQuotes")
        operations = split(_labelled(self.ops_label, self.ops), self.quotes, sizes=[300, 300])
        self.window_text = self._text("dreamWindow", mono)
        self.runbook_text = self._text("dreamRunbook", None)
        self.exclusions_text = self._text("dreamExclusions", None)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("dreamTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(operations, "Operations")
        self.tabs.addTab(self.window_text, "Evidence window")
        self.tabs.addTab(self.runbook_text, "Runbook")
        self.tabs.addTab(self.exclusions_text, "Exclusions")
        body = split(
            _labelled(self.calls_label, self.calls, self.call_json),
            self.tabs,
            sizes=[220, 260],
            vertical=True,
        )
        column = vbox(top, self.facts, self.summary, parent=box, margins=(12, 0, 0, 0), spacing=4)
        column.addSpacing(4)
        column.addWidget(body, 1)
        self.show_pass(None)

    @property
    def details(self) -> bool:
        """The raw side is shown (tool names, JSON, ids, every evidence source)."""
        return self.details_button.isChecked()

    def _details_toggled(self, _shown: bool) -> None:
        self.show_pass(self.detail)

    def _text(self, name: str, font: Any) -> QPlainTextEdit:
        edit = QPlainTextEdit()
        edit.setObjectName(name)
        edit.setReadOnly(True)
        if font is not None:
            edit.setFont(font)
        return edit

    # -- showing it --------------------------------------------------------------------------

    def show_pass(self, detail: PassDetail | None, names: dict[str, str] | None = None) -> None:
        """Show a pass (None: nothing selected); `names` name the entities it touched."""
        if names is not None:
            self.names = names
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
        self.setEnabled(detail is not None)
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
        subline = fmt.pass_subline(record)
        self.facts.setText(f"{subline} · pass {record.id}" if self.details else subline)
        self.call_json.setVisible(self.details)
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
        if not self.details and lines:
            lines = ["Every source by its reference: turn on Details."]
        self.window_text.setPlainText("\n".join([head, "", *lines]))
        self.tabs.setTabText(
            1, f"Evidence window ({len((record.evidence_window or {}).get('items', []))})"
        )
        self.runbook_text.setPlainText(fmt.runbook_text(record.runbook))
        exclusions = [fmt.exclusion_line(e) for e in detail.exclusions]
        self.exclusions_text.setPlainText("\n".join(exclusions) or "Nothing was excluded.")
        self.tabs.setTabText(3, f"Exclusions ({len(exclusions)})")

    def _fill_calls(self, detail: PassDetail, keep: object) -> None:
        theme = current_theme()
        calls = [fmt.tool_call_row(c, self.names) for c in detail.tool_calls]
        self.calls_label.setText(
            f"Timeline · {len(calls)} tool call{'s' if len(calls) != 1 else ''}"
            if calls
            else "Timeline · no tool calls (the provider was not asked)"
        )
        records = [op for op in detail.operations if isinstance(op, OperationRecord)]
        sent = fmt.operations_of_calls(detail.tool_calls, records)
        current = None
        for row in calls:
            line = f"{row.line}  ·  {row.raw}" if self.details else row.line
            item = QTreeWidgetItem([line, row.took])
            item.setData(0, Qt.ItemDataRole.UserRole, row.seq)
            item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight)
            item.setToolTip(0, line)
            if row.status != "ok":
                item.setForeground(0, QBrush(QColor(theme.error)))
            raw = (("arguments", row.arguments), ("result", row.result)) if self.details else ()
            for label, text in raw:
                child = QTreeWidgetItem(
                    [f"{label}: {preview(text, 120)}" if text else f"{label}: —", ""]
                )
                child.setData(0, Qt.ItemDataRole.UserRole, row.seq)
                child.setForeground(0, QBrush(QColor(theme.muted)))
                child.setToolTip(0, text[:2000])
                item.addChild(child)
            for record in sent.get(row.seq, []):  # what this apply call did, op by op
                op = fmt.operation_row(record, self.names)
                child = QTreeWidgetItem([op.title, ""])
                child.setData(0, Qt.ItemDataRole.UserRole, row.seq)
                child.setData(0, OPERATION_ROLE, record.id)
                child.setForeground(0, QBrush(QColor(tone_colour(op.tone, theme))))
                child.setToolTip(0, f"{op.title}\n{op.outcome}")
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
                row = fmt.tool_call_row(call, self.names)
                self.call_json.setPlainText(
                    f"{row.raw}  ·  {row.took}  ·  {row.status}\n\n"
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
            add_row(self.ops, OperationItem(row, self.details), record.id)
            if record.id == keep:
                select = n
        fit_rows(self.ops)
        self._records = records
        if records:
            self.ops.setCurrentRow(select)

    def _on_operation(self, row: int) -> None:
        if not 0 <= row < len(self._records):
            return
        record = self._records[row]
        self.operation = record
        self.quotes.show_quotes(
            self._operation_header(record), quote_fmt.quotes_of(record.evidence), self._agent()
        )

    def _operation_header(self, record: OperationRecord) -> str:
        """The operation's mark, name, subject and outcome above its quotes."""
        theme = current_theme()
        row = fmt.operation_row(record, self.names)
        colour = tone_colour(row.tone, theme)
        outcome = f"{row.outcome} · {row.operation} {row.subject}" if self.details else row.plain
        parts = [
            f"<p><b style='color:{colour}'>{html.escape(row.title)}</b><br>"
            f"<span style='color:{theme.muted}'>{html.escape(outcome.rstrip())}</span></p>"
        ]
        if row.provenance and self.details:
            parts.append(
                f"<p style='color:{theme.muted}'>provenance: {html.escape(row.provenance)}</p>"
            )
        return "".join(parts)

    def open_anchor(self, url: QUrl) -> None:
        """A quote's source link (tests call it as a click would)."""
        self.quotes.open_source(url)
