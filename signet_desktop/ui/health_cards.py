"""The Health pane's cards: the doctor's checklist, the embedder's coverage, the workers with
their last job, and the recent log (which wraps its lines and follows its newest one).
"""

from __future__ import annotations

import html
import logging
import time

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
)

from signet_desktop.daemon.logring import LogLine
from signet_desktop.service.diagnostics import Check, Level
from signet_desktop.ui.health_report import (
    LOG_LEVELS,
    EmbeddingFacts,
    LastRun,
    coverage_text,
)
from signet_desktop.ui.log_bridge import LogBridge
from signet_desktop.ui.style import current_theme
from signet_desktop.ui.widgets import text_label, vbox

DEFAULT_LOG_LEVEL = logging.INFO
MAX_CHECK_ROWS = 14
MAX_WORKER_ROWS = 4  # more scroll: the pane fits a 640-high window
LOG_MIN_LINES = 3
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
        self.body = vbox(self.header, parent=self, margins=(12, 10, 12, 10), spacing=6)


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
        self.model = text_label("—", name="healthModel", wrap=True)
        self.generation = text_label("", role="muted", wrap=True)
        self.search = text_label("", role="muted", wrap=True)
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
        self.queue = text_label("", wrap=True, role="muted")
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
        lines = self.text.fontMetrics().lineSpacing() * LOG_MIN_LINES
        self.text.setMinimumHeight(lines + 2 * self.text.frameWidth() + 8)
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
