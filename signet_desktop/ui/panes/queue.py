"""The Queue pane: live counts per state and type, a small chart, the jobs, and safe repair.

Counts and the jobs table are read off the GUI thread (`service.pipeline.queue`), again when
a `job.*`, `queue.repaired` or `document.*` event of this agent arrives (coalesced, never two
reads at once); a slow timer adds a sample to the chart while the pane is shown, which also
catches jobs queued without an event. The chart starts with the last ten minutes rebuilt from
the jobs' timestamps (`QueueOps.history`). Every repair first runs as a dry run and shows the
jobs it would change; only after `confirm_repair(outcome)` says yes is it applied, limited to
exactly the listed jobs (tests replace `confirm_repair`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFontDatabase, QHideEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from signet_desktop.queue.jobs import Job
from signet_desktop.queue.repair import ACTIONS, RepairOutcome, RepairRequest
from signet_desktop.service.pipeline.queue_ops import QueueDiagnostics, RepairResult
from signet_desktop.service.verdict import Verdict, judge, read_facts
from signet_desktop.ui import queue_format as fmt
from signet_desktop.ui.failed_items import FailedItems, verdict_colour
from signet_desktop.ui.pane import PaneContext, PaneSpec
from signet_desktop.ui.pane_frame import Frame, FramedPane
from signet_desktop.ui.queue_chart import CountPills, state_colour
from signet_desktop.ui.style import current_theme
from signet_desktop.ui.widgets import ElidingLabel, single_shot, split, vbox, vertical_scroll

CHART_SAMPLE_MS = 10_000
TABLE_LIMIT = 200
COLUMNS = ("Job", "Type", "Attempts", "State", "Changed", "Error")
STATE_CHOICES = (
    ("All states", None),
    ("Pending", "pending"),
    ("Leased", "leased"),
    ("Dead", "dead"),
    ("Completed", "completed"),
    ("Cancelled", "cancelled"),
)
ANY_TYPE = "All types"
EVENT_PREFIXES = ("job.", "document.")
EMPTY_TITLE = "No jobs yet"
EMPTY_HINT = (
    "Background work queues here as durable jobs: documents being ingested, vectors being "
    "backfilled. Each one shows its attempts, payload and error as it runs; dead jobs can be "
    "requeued and finished ones pruned, always with a dry run first."
)
FRAME = Frame(
    title="Queue",
    name="queue",
    count_name="queueHealth",
    empty_title=EMPTY_TITLE,
    empty_hint=EMPTY_HINT,
    refresh_on=("queue.repaired", *EVENT_PREFIXES),
    hint_width=560,
)
Snapshot = tuple[QueueDiagnostics, list[Job], list[tuple[float, dict[str, int]]], Verdict]
Confirm = Callable[[RepairOutcome], bool]


def fit_lines(edit: QPlainTextEdit, text: str, most: int = 10) -> None:
    """Size a read-only box to its text (wrapped at ~52 columns), at most `most` lines."""
    lines = sum(max(1, -(-len(line) // 52)) for line in text.splitlines() or [""])
    height = edit.fontMetrics().lineSpacing() * min(max(lines, 1), most)
    edit.setFixedHeight(height + 2 * edit.frameWidth() + 12)


class JobDetail(QWidget):
    """The selected job: its facts, payload, error and result, and the actions that apply."""

    def __init__(
        self, act: Callable[[str, Sequence[str]], None], open_document: Callable[[str], None]
    ) -> None:
        super().__init__()
        self.setObjectName("queueJobDetail")
        self._act = act
        self.job: Job | None = None
        self.heading = QLabel("Select a job")
        self.heading.setProperty("role", "heading")
        self.form = QFormLayout()
        self.form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.error = self._text("queueJobError", mono)
        self.payload = self._text("queueJobPayload", mono)
        self.result = self._text("queueJobResult", mono)
        self.buttons: dict[str, QPushButton] = {}
        actions = QHBoxLayout()
        for action in ACTIONS:
            button = QPushButton(action.capitalize() + "…")
            button.setObjectName(f"queueJob_{action}")
            button.clicked.connect(lambda _c=False, a=action: self._run(a))
            button.hide()
            actions.addWidget(button)
            self.buttons[action] = button
        actions.addStretch(1)
        self.document_button = QPushButton("Open document")
        self.document_button.setObjectName("queueJobDocument")
        self.document_button.clicked.connect(
            lambda: self.job and self.job.document_id and open_document(self.job.document_id)
        )
        actions.addWidget(self.document_button)
        column = vbox(self.heading, self.form, parent=self, margins=(12, 0, 0, 0))
        self.labels = {
            "error": QLabel("Error"),
            "payload": QLabel("Payload"),
            "result": QLabel("Result"),
        }
        for key, edit in (
            ("error", self.error),
            ("payload", self.payload),
            ("result", self.result),
        ):
            self.labels[key].setProperty("role", "muted")
            column.addWidget(self.labels[key])
            column.addWidget(edit)
        column.addLayout(actions)
        column.addStretch(1)
        self.show_job(None)

    def _text(self, name: str, font: Any) -> QPlainTextEdit:
        edit = QPlainTextEdit()
        edit.setObjectName(name)
        edit.setReadOnly(True)
        edit.setFont(font)
        return edit

    def show_job(self, job: Job | None) -> None:
        self.job = job
        while self.form.rowCount():
            self.form.removeRow(0)
        self.heading.setText("Select a job" if job is None else fmt.short_id(job.id))
        texts = {
            "error": job.error or "" if job else "",
            "payload": fmt.payload_text(job) if job else "",
            "result": fmt.result_text(job) if job else "",
        }
        for key, edit in (
            ("error", self.error),
            ("payload", self.payload),
            ("result", self.result),
        ):
            edit.setPlainText(texts[key])
            fit_lines(edit, texts[key])
            shown = bool(texts[key])
            edit.setVisible(shown)
            self.labels[key].setVisible(shown)
        allowed = fmt.job_actions(job) if job else []
        for action, button in self.buttons.items():
            button.setVisible(action in allowed)
        self.document_button.setVisible(job is not None and job.document_id is not None)
        if job is None:
            return
        for label, value in fmt.job_detail(job):
            field = ElidingLabel(value, mode=Qt.TextElideMode.ElideMiddle)  # ids fit a laptop
            if label == "State":
                field.setStyleSheet(f"color: {state_colour(value, current_theme())};")
            self.form.addRow(label, field)

    def _run(self, action: str) -> None:
        if self.job is not None:
            self._act(action, (self.job.id,))


class QueuePane(FramedPane):
    """Counts, chart, jobs and repair for the window's agent."""

    def __init__(self, context: PaneContext) -> None:
        super().__init__(context, FRAME)
        self.setObjectName("queuePane")
        self.ops = context.service.pipeline.queue
        self.confirm_repair: Confirm = self._ask_to_apply
        self.history = fmt.CountHistory()
        self.report: QueueDiagnostics | None = None
        self.rows: list[Job] = []
        self._repairing = False
        self._seeded = False
        self._sample_timer = single_shot(self, CHART_SAMPLE_MS, self.refresh)
        self._build()

    # -- layout ----------------------------------------------------------------------------

    def _build(self) -> None:
        self.repair_button = QPushButton("Repair… (dry run first)")
        self.repair_button.setObjectName("queueRepair")
        menu = QMenu(self.repair_button)
        for action in ACTIONS:
            entry = menu.addAction(fmt.REPAIR_LABELS[action][0])
            entry.triggered.connect(lambda _c=False, a=action: self.start_repair(a))
        self.repair_button.setMenu(menu)
        self.pills = CountPills()
        # Here, not at the top: pyqtgraph (~0.4 s) loads when the pane is first built.
        from signet_desktop.ui.queue_plot import CountsChart

        self.chart = CountsChart()
        self.state_filter = QComboBox()
        self.state_filter.setObjectName("queueStateFilter")
        for label, value in STATE_CHOICES:
            self.state_filter.addItem(label, value)
        self.type_filter = QComboBox()
        self.type_filter.setObjectName("queueTypeFilter")
        self.type_filter.addItem(ANY_TYPE, None)
        self.type_filter.setMinimumWidth(180)
        for combo in (self.state_filter, self.type_filter):
            combo.currentIndexChanged.connect(lambda _i: self.refresh())
        self.types_label = ElidingLabel("")
        self.types_label.setObjectName("queueTypes")
        self.types_label.setProperty("role", "muted")
        filters = QHBoxLayout()
        filters.addWidget(self.state_filter)
        filters.addWidget(self.type_filter)
        filters.addSpacing(12)
        filters.addWidget(self.types_label, 1)
        self.table = self._table()
        self.detail = JobDetail(self.start_repair, self._open_document)
        self.splitter = split(
            self.table,
            vertical_scroll(self.detail, "queueJobScroll"),
            stretch=(3, 2),
            sizes=[700, 420],
        )
        content = QWidget()
        column = QVBoxLayout(content)
        column.setContentsMargins(0, 0, 0, 0)
        self.failed = FailedItems(self.context)
        self.failed.retried.connect(self.show_outcome)
        column.addWidget(self.failed)
        column.addWidget(self.pills)
        column.addWidget(self.chart)
        column.addLayout(filters)
        column.addWidget(self.splitter, 1)
        self.frame_layout(content, header=[self.repair_button])
        self.health_label = self.count_label  # the verdict every surface shows

    def _table(self) -> QTableWidget:
        table = QTableWidget(0, len(COLUMNS))
        table.setObjectName("queueJobs")
        table.setHorizontalHeaderLabels(list(COLUMNS))
        table.verticalHeader().hide()
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        table.setShowGrid(False)
        table.setWordWrap(False)
        header = table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        table.currentCellChanged.connect(lambda row, *_: self._on_row(row))
        return table

    # -- the PaneWidget hooks --------------------------------------------------------------

    def deactivated(self) -> None:
        self._sample_timer.stop()

    def reveal(self, **reveal: Any) -> None:
        """`state=…` filters the table (the tray's dead jobs jump here with `state="dead"`)."""
        state = reveal.get("state")
        if isinstance(state, str):
            index = self.state_filter.findData(state)
            if index >= 0:
                self.state_filter.setCurrentIndex(index)

    def hideEvent(self, event: QHideEvent) -> None:
        self._sample_timer.stop()
        super().hideEvent(event)

    def shutdown(self) -> None:
        self._sample_timer.stop()
        super().shutdown()

    # -- reading ---------------------------------------------------------------------------

    def reader(self) -> Callable[[], Snapshot]:
        agent, ops = self.context.agent_id, self.ops
        state, kind = self.state_filter.currentData(), self.type_filter.currentData()

        seed = not self._seeded

        service = self.context.service

        def read() -> Snapshot:
            report = ops.diagnostics(agent)
            rows = ops.jobs(agent, status=state, job_type=kind, limit=TABLE_LIMIT)
            verdict = judge(read_facts(service, agent))
            return report, rows, ops.history(agent) if seed else [], verdict

        return read

    def show_snapshot(self, snapshot: Snapshot) -> None:
        report, rows, past, verdict = snapshot
        self.report, self.rows = report, rows
        now = time.monotonic()
        if past and not self._seeded:  # the last minutes, rebuilt from the jobs' timestamps
            self._seeded = True
            for ago, counts in past[:-1]:
                self.history.add(now - ago, counts)
        self.history.add(now, report.counts)
        self.pills.set_pills(fmt.pills(report))
        self.chart.set_history(self.history, time.monotonic())
        self._set_health(verdict)
        self.failed.show_verdict(verdict)
        self._set_types(report)
        self._fill_table(rows)
        filtered = self.state_filter.currentIndex() > 0 or self.type_filter.currentIndex() > 0
        nothing = not rows and not filtered and not any(report.counts.values())
        self.show_listing(nothing)
        if self.isVisible():
            self._sample_timer.start()

    def _set_health(self, verdict: Verdict) -> None:
        """The verdict the tray and the status bar show (a failed item is counted, no more)."""
        text = " · ".join(part for part in (verdict.headline, verdict.failed_text) if part)
        self.health_label.setText(text)
        self.health_label.setStyleSheet(f"color: {verdict_colour(verdict.state)};")

    def _set_types(self, report: QueueDiagnostics) -> None:
        known = [self.type_filter.itemData(i) for i in range(1, self.type_filter.count())]
        choices = fmt.job_types(report.job_types, known)
        if choices != known:
            current = self.type_filter.currentData()
            self.type_filter.blockSignals(True)
            self.type_filter.clear()
            self.type_filter.addItem(ANY_TYPE, None)
            for kind in choices:
                self.type_filter.addItem(kind, kind)
            self.type_filter.setCurrentIndex(max(0, self.type_filter.findData(current)))
            self.type_filter.blockSignals(False)
        parts = [
            f"{kind}: " + ", ".join(f"{n} {s}" for s, n in counts.items() if n)
            for kind, counts in sorted(report.job_types.items())
            if any(counts.values())
        ]
        if len(self.rows) >= TABLE_LIMIT:
            parts.append(f"table: the {TABLE_LIMIT} most recently changed")
        self.types_label.setText("  ·  ".join(parts))

    def _fill_table(self, rows: list[Job]) -> None:
        selected = self.detail.job.id if self.detail.job else None
        theme = current_theme()
        self.table.blockSignals(True)
        self.table.setRowCount(len(rows))
        keep = -1
        for r, job in enumerate(rows):
            for c, text in enumerate(fmt.job_row(job)):
                item = QTableWidgetItem(text)
                if c == 0:
                    item.setData(Qt.ItemDataRole.UserRole, job.id)
                    item.setToolTip(job.id)
                if c == 3:
                    item.setForeground(QBrush(QColor(state_colour(text, theme))))
                if c == 5 and job.error:
                    item.setToolTip(job.error)
                self.table.setItem(r, c, item)
            if job.id == selected:
                keep = r
        self.table.blockSignals(False)
        if keep >= 0:
            self.table.selectRow(keep)
            self.detail.show_job(rows[keep])
        elif rows:
            self.table.selectRow(0)
            self.detail.show_job(rows[0])
        else:
            self.detail.show_job(None)

    def _on_row(self, row: int) -> None:
        if 0 <= row < len(self.rows):
            self.detail.show_job(self.rows[row])

    def _open_document(self, document_id: str) -> None:
        self.context.navigator.show_pane("documents", document_id=document_id)

    def job_ids(self) -> list[str]:
        """The ids in the table, top to bottom (tests)."""
        return [job.id for job in self.rows]

    # -- repair ----------------------------------------------------------------------------

    def start_repair(self, action: str, ids: Sequence[str] = ()) -> None:
        """Dry-run `action` (on `ids`, else on every matching job), then ask, then apply."""
        if self._repairing or action not in ACTIONS:
            return
        kind = self.type_filter.currentData()
        request = RepairRequest(action, dry_run=True, ids=tuple(ids), job_type=kind)
        self._repairing = True
        self.banner.clear()
        agent = self.context.agent_id
        self.context.tasks.call(
            self.ops.repair,
            agent,
            request,
            done=lambda result: self._previewed(request, result),
            failed=self._repair_failed,
        )

    def _previewed(self, request: RepairRequest, result: RepairResult) -> None:
        outcome = result.outcome
        if not outcome.affected:
            self._repairing = False
            self.say(fmt.preview_text(outcome))
            return
        if not self.confirm_repair(outcome):
            self._repairing = False
            self.say("Nothing changed.")
            return
        planned = outcome.ids
        apply = dataclasses.replace(request, dry_run=False, ids=planned, max_batch=len(planned))
        self.context.tasks.call(
            self.ops.repair,
            self.context.agent_id,
            apply,
            done=lambda done: self._applied(planned, done),
            failed=self._repair_failed,
        )

    def _applied(self, planned: Sequence[str], result: RepairResult) -> None:
        self._repairing = False
        if result.refused:
            self.banner.show_message(result.message, "warn")
            return
        text, level = fmt.applied_text(planned, result.outcome)
        if level == "warn":
            self.banner.show_message(text, "warn")
        else:
            self.say(text)
        self.refresh()

    def _repair_failed(self, exc: BaseException) -> None:
        self._repairing = False
        self.banner.show_message(f"The repair failed: {exc}")

    def _ask_to_apply(self, outcome: RepairOutcome) -> bool:
        """The default confirmation: the dry run's jobs, Apply or Cancel (Cancel default)."""
        box = QMessageBox(self)
        box.setObjectName("queueConfirm")
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle("Apply queue repair")
        box.setText(fmt.preview_text(outcome))
        box.setInformativeText("The dry run changed nothing. Apply it to exactly these jobs?")
        apply = box.addButton("Apply", QMessageBox.ButtonRole.AcceptRole)
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel)
        box.exec()
        return box.clickedButton() is apply


PANE = PaneSpec(
    key="queue",
    title="Queue",
    icon="queue.svg",
    order=60,
    factory=QueuePane,
    shortcut="Ctrl+7",
)
