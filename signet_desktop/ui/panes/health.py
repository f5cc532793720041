"""The Health pane: what `signet doctor` checks, live, plus the workers and the recent log.

A reading (`ui/health_report.py: read_health`) runs on a worker thread through the task runner;
bus events schedule the next one (debounced, one in flight at a time), so the pane never polls
and never blocks. `embedding.progress`, `memory.created` and `memory.embedded` move the coverage
bar straight from the event (`health_report.py: CoverageCount`, since `service.status()` caches
coverage for a few seconds), and new log lines arrive through `ui/log_bridge.py` from the
daemon's in-memory ring.
"""

from __future__ import annotations

import html
import logging
import time
from typing import Any

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontDatabase, QTextOption
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from signet_desktop.daemon.logring import LogLine, log_ring
from signet_desktop.domain.events import Event, WorkerStateChanged
from signet_desktop.service.diagnostics import Check, Level
from signet_desktop.service.pipeline.service import PipelineStatus
from signet_desktop.ui.empty_state import Banner
from signet_desktop.ui.health_report import (
    LOG_LEVELS,
    CoverageCount,
    EmbeddingFacts,
    HealthReport,
    LastRun,
    coverage_text,
    last_run_of,
    read_health,
)
from signet_desktop.ui.log_bridge import LogBridge
from signet_desktop.ui.pane import PaneContext, PaneSpec, PaneWidget
from signet_desktop.ui.style import current_theme
from signet_desktop.ui.widgets import single_shot

REFRESH_DEBOUNCE_MS = 250  # a burst of events (a backfill) costs one reading
REFRESH_ON = frozenset(
    {
        "status.changed",
        "worker.state",
        "memory.created",
        "memory.embedded",
        "memory.deleted",
        "memory.recovered",
        "job.completed",
        "job.failed",
        "job.dead",
    }
)
DEFAULT_LOG_LEVEL = logging.INFO
FOLLOW_UP_MARGIN_MS = 500
MAX_CHECK_ROWS = 14
MAX_WORKER_ROWS = 6
_WORKER_COLUMNS = ("Worker", "State", "Last job", "Error")


class Section(QFrame):
    """A titled card: `header` holds the title (add controls beside it), `body` the content."""

    def __init__(self, title: str) -> None:
        super().__init__()
        self.setObjectName("healthSection")
        heading = QLabel(title)
        heading.setProperty("role", "heading")
        self.header = QHBoxLayout()
        self.header.addWidget(heading)
        self.header.addStretch(1)
        self.body = QVBoxLayout(self)
        self.body.setContentsMargins(12, 10, 12, 10)
        self.body.setSpacing(6)
        self.body.addLayout(self.header)


def level_colour(level: Level) -> QColor:
    theme = current_theme()
    return QColor({Level.OK: theme.ok, Level.WARN: theme.warn, Level.FAIL: theme.error}[level])


def monospace() -> QFont:
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


class ChecksView(QTreeWidget):
    """The doctor's checklist: a coloured ✓ ! ✗ per line, details as muted children."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("healthChecks")
        self.setColumnCount(2)
        self.setHeaderHidden(True)
        self.setRootIsDecorated(False)
        self.setIndentation(0)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setWordWrap(True)
        self.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.header().setStretchLastSection(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def sizeHint(self) -> QSize:
        """Tall enough for every line (up to MAX_CHECK_ROWS; it scrolls beyond)."""
        rows = min(max(self.topLevelItemCount(), 4), MAX_CHECK_ROWS)
        row_height = self.sizeHintForRow(0) if self.topLevelItemCount() else 20
        return QSize(super().sizeHint().width(), rows * max(row_height, 18) + 8)

    def show_checks(self, checks: tuple[Check, ...]) -> None:
        self.clear()
        muted = QBrush(QColor(current_theme().muted))
        for check in checks:
            item = QTreeWidgetItem(self, [check.level.value, check.text])
            item.setForeground(0, QBrush(level_colour(check.level)))
            item.setToolTip(1, check.text)
            font = item.font(0)
            font.setBold(True)
            item.setFont(0, font)
            for detail in check.details:
                child = QTreeWidgetItem(self, ["", detail])
                child.setForeground(1, muted)
                child.setToolTip(1, detail)
        self.updateGeometry()

    def texts(self) -> list[str]:
        """`✓ text` / `    detail` lines, as `signet doctor` prints them (tests, copy)."""
        lines = []
        for row in range(self.topLevelItemCount()):
            item = self.topLevelItem(row)
            if item is None:
                continue
            glyph, text = item.text(0), item.text(1)
            lines.append(f"{glyph} {text}" if glyph else f"    {text}")
        return lines


class EmbeddingCard(Section):
    """Model, generation, vector search mode and the coverage bar."""

    def __init__(self) -> None:
        super().__init__("Embeddings")
        column = self.body
        self.model = QLabel("—")
        self.model.setObjectName("healthModel")
        self.model.setWordWrap(True)
        self.generation = QLabel("")
        self.generation.setProperty("role", "muted")
        self.generation.setWordWrap(True)
        self.search = QLabel("")
        self.search.setProperty("role", "muted")
        self.search.setWordWrap(True)
        self.bar = QProgressBar()
        self.bar.setObjectName("healthCoverage")
        self.bar.setTextVisible(False)
        self.coverage = QLabel("")
        self.coverage.setObjectName("healthCoverageText")
        row = QHBoxLayout()
        row.addWidget(self.bar, 1)
        row.addWidget(self.coverage)
        column.addWidget(self.model)
        column.addWidget(self.generation)
        column.addLayout(row)
        column.addWidget(self.search)

    def show_facts(self, facts: EmbeddingFacts) -> None:
        if not facts.configured:
            self.model.setText("No embedder configured (embedding.provider: none)")
            self.generation.setText("Recall is keyword-only; memories are stored without vectors.")
            self.search.setText("")
            self.set_coverage(0, 0)
            self.bar.setEnabled(False)
            return
        self.bar.setEnabled(True)
        dims = f" · {facts.dimensions} dimensions" if facts.dimensions else ""
        self.model.setText(f"{facts.provider} · {facts.model or 'model'}{dims}")
        generation = (
            f"generation {facts.generation} ({facts.generation_status})"
            if facts.generation is not None
            else "no generation yet"
        )
        self.generation.setText(generation)
        self.search.setText(f"vectorCompleteness: {facts.vector_search}")
        self.set_coverage(facts.embedded, facts.total)

    def set_coverage(self, embedded: int, total: int) -> None:
        self.bar.setRange(0, max(total, 1))
        self.bar.setValue(min(embedded, total) if total else (1 if embedded == total else 0))
        self.coverage.setText(coverage_text(embedded, total))


class WorkersCard(Section):
    """The hosted workers, the queue and Pause / Resume."""

    def __init__(self) -> None:
        super().__init__("Workers")
        column = self.body
        self.mode = QLabel("")
        self.mode.setObjectName("healthPipelineMode")
        self.pause_button = QPushButton("Pause")
        self.pause_button.setObjectName("healthPause")
        self.resume_button = QPushButton("Resume")
        self.resume_button.setObjectName("healthResume")
        self.header.addWidget(self.pause_button)
        self.header.addWidget(self.resume_button)
        self.table = QTableWidget(0, len(_WORKER_COLUMNS))
        self.table.setObjectName("healthWorkers")
        self.table.setHorizontalHeaderLabels(list(_WORKER_COLUMNS))
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setShowGrid(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        # The error takes what is left, elided (the whole text is its tooltip): the table never
        # scrolls sideways, which hid the error behind a long "Last job".
        header.setSectionResizeMode(len(_WORKER_COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Maximum)
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.queue = QLabel("")
        self.queue.setWordWrap(True)
        self.queue.setProperty("role", "muted")
        column.addWidget(self.mode)
        column.addWidget(self.table)
        column.addWidget(self.queue)

    def set_paused(self, paused: bool, hosted: bool) -> None:
        if paused:
            text = "Paused: no new jobs are taken" + ("" if hosted else " (applies at start)")
        else:
            text = "Running" if hosted else "Not hosted in this process"
        self.mode.setText(text)
        self.pause_button.setEnabled(not paused)
        self.resume_button.setEnabled(paused)

    def worker_state(self, name: str) -> str:
        row = self._row_of(name)
        item = None if row is None else self.table.item(row, 1)
        return "" if item is None else item.text()

    def set_worker(self, name: str, state: str, error: str | None) -> None:
        row = self._row_of(name)
        if row is None:
            row = self.table.rowCount()
            self.table.insertRow(row)
            self.table.setItem(row, 0, QTableWidgetItem(name))
            self.table.setItem(row, 2, QTableWidgetItem("—"))
        state_item = QTableWidgetItem(state)
        level = {"running": Level.OK, "crashed": Level.FAIL}.get(state, Level.WARN)
        state_item.setForeground(QBrush(level_colour(level)))
        self.table.setItem(row, 1, state_item)
        self.table.setItem(row, 3, _error_item(error or ""))
        self._fit_rows()

    def _fit_rows(self) -> None:
        rows = min(max(self.table.rowCount(), 1), MAX_WORKER_ROWS)
        height = (
            self.table.horizontalHeader().height()
            + rows * self.table.verticalHeader().defaultSectionSize()
        )
        self.table.setFixedHeight(height + 2 * self.table.frameWidth())

    def set_last_run(self, name: str, run: LastRun) -> None:
        row = self._row_of(name)
        if row is None:
            return
        moment = time.strftime("%H:%M:%S", time.localtime(run.at))
        item = QTableWidgetItem(f"{moment} {run.outcome}")  # short: the error needs the room
        item.setToolTip(f"{run.job_type} job {run.outcome} at {moment}")
        self.table.setItem(row, 2, item)
        if run.error:
            self.table.setItem(row, 3, _error_item(run.error))

    def set_no_jobs(self, name: str) -> None:
        """A worker that takes no queued jobs (a timer, a watcher) has no last job to show."""
        row = self._row_of(name)
        if row is not None:
            item = QTableWidgetItem("no queued jobs")
            item.setForeground(QBrush(QColor(current_theme().muted)))
            self.table.setItem(row, 2, item)

    def _row_of(self, name: str) -> int | None:
        for row in range(self.table.rowCount()):
            item = self.table.item(row, 0)
            if item is not None and item.text() == name:
                return row
        return None


def _error_item(text: str) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    item.setToolTip(text)
    return item


class LogView(Section):
    """The ring's recent lines at or above the chosen level, newest at the bottom."""

    def __init__(self, bridge: LogBridge) -> None:
        super().__init__("Recent log")
        self.bridge = bridge
        column = self.body
        self.level = QComboBox()
        self.level.setObjectName("healthLogLevel")
        for label, value in LOG_LEVELS:
            self.level.addItem(label, value)
        self.level.setCurrentIndex(self.level.findData(DEFAULT_LOG_LEVEL))
        self.text = QPlainTextEdit()
        self.text.setObjectName("healthLog")
        self.text.setReadOnly(True)
        self.text.setFont(monospace())
        self.text.setMaximumBlockCount(bridge.ring.capacity)
        # Wrapped, never scrolled sideways: a short line must not show as a fragment.
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.text.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.text.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # The newest line stays in sight while lines arrive and re-wrap (a resize), unless
        # the reader scrolled up.
        self.following = True
        self.text.verticalScrollBar().valueChanged.connect(self._scrolled)
        self.text.verticalScrollBar().rangeChanged.connect(self._range_changed)
        self.empty = QLabel("No log lines at this level yet.")
        self.empty.setProperty("role", "muted")
        level_label = QLabel("Level")
        level_label.setProperty("role", "muted")
        self.header.addWidget(level_label)
        self.header.addWidget(self.level)
        column.addWidget(self.empty)
        column.addWidget(self.text, 1)
        self.level.currentIndexChanged.connect(self.reload)
        bridge.line_logged.connect(self.append)
        self.reload()

    @property
    def min_level(self) -> int:
        return int(self.level.currentData())

    def reload(self) -> None:
        self.text.clear()
        for line in self.bridge.ring.lines(self.min_level):
            self._write(line)
        self._update_empty()

    def append(self, line: LogLine) -> None:
        if line.level >= self.min_level:
            self._write(line)
            self._update_empty()

    def shown(self) -> list[str]:
        return [text for text in self.text.toPlainText().splitlines() if text]

    def _write(self, line: LogLine) -> None:
        theme = current_theme()
        colour = theme.muted
        if line.level >= logging.ERROR:
            colour = theme.error
        elif line.level >= logging.WARNING:
            colour = theme.warn
        moment = time.strftime("%H:%M:%S", time.localtime(line.created))
        message = line.message + (f" · {line.exception}" if line.exception else "")
        self.text.appendHtml(
            f'<span style="color:{theme.muted}">{moment}</span> '
            f'<span style="color:{colour}">{line.level_name}</span> '
            f'<span style="color:{theme.muted}">{html.escape(line.logger)}</span> '
            f"{html.escape(message)}"
        )

    def _scrolled(self, value: int) -> None:
        self.following = value >= self.text.verticalScrollBar().maximum()

    def _range_changed(self, _low: int, high: int) -> None:
        if self.following:
            self.text.verticalScrollBar().setValue(high)

    def _update_empty(self) -> None:
        self.empty.setVisible(self.text.document().isEmpty())


class HealthPane(PaneWidget):
    """Live doctor checks, embedder coverage, workers with pause/resume, recent log lines."""

    def __init__(self, context: PaneContext) -> None:
        super().__init__(context)
        self.setObjectName("healthPane")
        self.report: HealthReport | None = None
        self._visible = False
        self._stale = True
        self._in_flight = False
        self._again = False
        self._last_runs: dict[str, LastRun] = {}
        self._debounce = single_shot(self, REFRESH_DEBOUNCE_MS, self.refresh)
        # One more reading once the status's coverage cache has caught up with the events.
        self.coverage = CoverageCount()
        follow_up_ms = int(self.coverage.window_s * 1000) + FOLLOW_UP_MARGIN_MS
        self._follow_up = single_shot(self, follow_up_ms, self._schedule)
        self.log_bridge = LogBridge(log_ring(), self)
        self._build()
        context.events.event_published.connect(self._on_event)
        self._connected = True

    def _build(self) -> None:
        title = QLabel("Health")
        title.setProperty("role", "title")
        self.summary = QLabel("Checking…")
        self.summary.setObjectName("healthSummary")
        self.recheck = QPushButton("Re-check")
        self.recheck.setObjectName("healthRecheck")
        self.recheck.clicked.connect(self.refresh)
        header = QHBoxLayout()
        header.addWidget(title)
        header.addSpacing(12)
        header.addWidget(self.summary, 1)
        header.addWidget(self.recheck)
        self.banner = Banner()
        self.checks = ChecksView()
        checks_frame = Section("Checks")
        checks_frame.body.addWidget(self.checks, 1)
        self.embedding = EmbeddingCard()
        self.workers = WorkersCard()
        self.workers.pause_button.clicked.connect(self.pause)
        self.workers.resume_button.clicked.connect(self.resume)
        right = QWidget()
        right_column = QVBoxLayout(right)
        right_column.setContentsMargins(0, 0, 0, 0)
        right_column.setSpacing(12)
        right_column.addWidget(self.embedding)
        right_column.addWidget(self.workers)
        right_column.addStretch(1)
        top = QHBoxLayout()
        top.setSpacing(12)
        top.addWidget(checks_frame, 5)
        top.addWidget(right, 4)
        self.log = LogView(self.log_bridge)
        self.setStyleSheet(card_style())
        column = QVBoxLayout(self)
        column.setContentsMargins(4, 4, 4, 4)
        column.setSpacing(10)
        column.addLayout(header)
        column.addWidget(self.banner)
        column.addLayout(top)
        column.addWidget(self.log, 1)

    # -- the shell's hooks ----------------------------------------------------------------

    def activated(self) -> None:
        self._visible = True
        if self._stale:
            self.refresh()

    def deactivated(self) -> None:
        self._visible = False

    def reveal(self, **reveal: Any) -> None:
        self.refresh()

    def shutdown(self) -> None:
        self._debounce.stop()
        self._follow_up.stop()
        self.log_bridge.close()
        if self._connected:
            self._connected = False
            self.context.events.event_published.disconnect(self._on_event)

    # -- readings ---------------------------------------------------------------------------

    def refresh(self) -> None:
        """Read everything again off the GUI thread (one reading in flight at a time)."""
        if self._in_flight:
            self._again = True
            return
        self._in_flight = True
        self._stale = False
        self.context.tasks.call(
            read_health,
            self.context.service,
            self.context.workspace,
            self.context.agent_id,
            done=self._show,
            failed=self._failed,
        )

    def _show(self, report: HealthReport) -> None:
        self._in_flight = False
        self.report = report
        self.banner.clear()
        self.checks.show_checks(report.checks)
        self.summary.setText(summary_text(report))
        self.embedding.show_facts(report.embedding)
        if not self.coverage.reading(report.embedding, time.monotonic()):
            self.embedding.set_coverage(self.coverage.embedded, self.coverage.total)
        self.workers.set_paused(report.paused, report.hosted)
        for name, run in report.last_runs.items():
            heard = self._last_runs.get(name)
            if heard is None or heard.at < run.at:
                self._last_runs[name] = run
        for worker in report.workers:
            self.workers.set_worker(worker.name, worker.state, worker.error)
            if worker.name in self._last_runs:
                self.workers.set_last_run(worker.name, self._last_runs[worker.name])
            elif not worker.job_types:
                self.workers.set_no_jobs(worker.name)
        queue = report.queue
        self.workers.queue.setText(
            "Queue: " + " · ".join(f"{queue[state]:,} {state}" for state in queue)
        )
        if not report.workers:
            self.workers.queue.setText(self.workers.queue.text() + " · no workers declared")
        if self._again:
            self._again = False
            self.refresh()

    def _failed(self, exc: BaseException) -> None:
        self._in_flight = False
        self.banner.show_message(f"Could not read the service's health: {exc}")
        if self._again:
            self._again = False
            self.refresh()

    def _schedule(self) -> None:
        if self._visible:
            self._debounce.start()
        else:
            self._stale = True

    def _on_event(self, event: Event) -> None:
        if self.coverage.event(event, time.monotonic()):
            self.embedding.set_coverage(self.coverage.embedded, self.coverage.total)
            self._follow_up.start()
        if isinstance(event, WorkerStateChanged):
            self.workers.set_worker(event.worker, event.state, event.error)
        finished = last_run_of(event)
        if finished is not None:
            worker, run = finished
            self._last_runs[worker] = run
            self.workers.set_last_run(worker, run)
        if event.kind in REFRESH_ON:
            self._schedule()

    # -- actions ----------------------------------------------------------------------------

    def pause(self) -> None:
        self._pipeline_call(self.context.service.pipeline.pause)

    def resume(self) -> None:
        self._pipeline_call(self.context.service.pipeline.resume)

    def _pipeline_call(self, action: Any) -> None:
        self.workers.pause_button.setEnabled(False)
        self.workers.resume_button.setEnabled(False)
        self.context.tasks.call(action, done=self._pipeline_done, failed=self._failed)

    def _pipeline_done(self, status: PipelineStatus) -> None:
        self.workers.set_paused(status.mode == "paused", status.hosted)
        self._schedule()


def card_style() -> str:
    """The pane's cards on the theme's surface; lists inside them drop their own frame."""
    t = current_theme()
    return f"""
QFrame#healthSection {{ background: {t.surface}; border: 1px solid {t.border};
    border-radius: 8px; }}
QFrame#healthSection QTreeWidget, QFrame#healthSection QTableWidget {{ border: none;
    background: {t.surface}; }}
QFrame#healthSection QPlainTextEdit {{ background: {t.window}; }}
QFrame#healthSection QHeaderView::section {{ background: {t.surface}; }}
"""


def summary_text(report: HealthReport) -> str:
    """`All 9 checks pass`, or how many need attention."""
    if report.failures:
        return f"{report.failures} failing, {report.problems - report.failures} to look at"
    if report.problems:
        noun = "check needs" if report.problems == 1 else "checks need"
        return f"{report.problems} {noun} a look"
    return f"All {len(report.checks)} checks pass"


PANE = PaneSpec(
    key="health",
    title="Health",
    icon="health.svg",
    order=90,
    factory=HealthPane,
    shortcut="Ctrl+0",
)
