"""The Health pane: what `signet doctor` checks, live, plus the workers and the recent log.

A reading (`ui/health_report.py: read_health`) runs on a worker thread through the task runner;
bus events schedule the next one (debounced, one in flight at a time), so the pane never polls
and never blocks. `embedding.progress`, `memory.created` and `memory.embedded` move the coverage
bar straight from the event (`health_report.py: CoverageCount`, since `service.status()` caches
coverage for a few seconds), and new log lines arrive through `ui/log_bridge.py` from the
daemon's in-memory ring.
"""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QWidget,
)

from signet_desktop.daemon.logring import log_ring
from signet_desktop.domain.events import Event, WorkerStateChanged
from signet_desktop.service.pipeline.service import PipelineStatus
from signet_desktop.ui.empty_state import Banner
from signet_desktop.ui.failed_items import FailedItems, verdict_colour
from signet_desktop.ui.health_cards import (
    ChecksView,
    EmbeddingCard,
    LogView,
    Section,
    WorkersCard,
)
from signet_desktop.ui.health_report import (
    CoverageCount,
    HealthReport,
    LastRun,
    last_run_of,
    read_health,
)
from signet_desktop.ui.log_bridge import LogBridge
from signet_desktop.ui.pane import PaneContext, PaneSpec, PaneWidget
from signet_desktop.ui.style import current_theme
from signet_desktop.ui.tasks import SingleFlight
from signet_desktop.ui.widgets import hbox, single_shot, vbox, vertical_scroll

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
        "queue.repaired",
    }
)
FOLLOW_UP_MARGIN_MS = 500


class HealthPane(PaneWidget):
    """Live doctor checks, embedder coverage, workers with pause/resume, recent log lines."""

    def __init__(self, context: PaneContext) -> None:
        super().__init__(context)
        self.setObjectName("healthPane")
        self.report: HealthReport | None = None
        self._visible = False
        self._stale = True
        self._flight = SingleFlight(self._read)  # one reading in flight at a time
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
        self.failed = FailedItems(self.context)
        self.failed.retried.connect(self._retried)
        self.checks = ChecksView()
        checks_frame = Section("Checks")
        checks_frame.body.addWidget(self.checks, 1)
        self.embedding = EmbeddingCard()
        self.workers = WorkersCard()
        self.workers.pause_button.clicked.connect(self.pause)
        self.workers.resume_button.clicked.connect(self.resume)
        right = QWidget()
        vbox(self.embedding, self.workers, 1, parent=right, margins=(0, 0, 0, 0), spacing=12)
        top = hbox((checks_frame, 5), (vertical_scroll(right, "healthCards"), 4), spacing=12)
        self.log = LogView(self.log_bridge)
        self.setStyleSheet(card_style())
        vbox(
            header,
            self.banner,
            self.failed,
            top,
            (self.log, 1),
            parent=self,
            margins=(4, 4, 4, 4),
            spacing=10,
        )

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
        self._flight.ask()

    def _read(self) -> None:
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
        try:
            self._show_report(report)
        finally:
            self._flight.done()

    def _show_report(self, report: HealthReport) -> None:
        self.report = report
        self.banner.clear()
        self.checks.show_checks(report.checks)
        self.summary.setText(summary_text(report))
        self.summary.setStyleSheet(f"color: {verdict_colour(report.verdict.state)};")
        self.failed.show_verdict(report.verdict)
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

    def _failed(self, exc: BaseException) -> None:
        self.banner.show_message(f"Could not read the service's health: {exc}")
        self._flight.done()

    def _retried(self, text: str, ok: bool) -> None:
        if not ok:
            self.banner.show_message(text, "warn")
        self._schedule()

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
    """The verdict the tray and the status bar show, then the checks and the failed items:
    `Ready · all 9 checks pass · 1 failed item`."""
    parts = [report.verdict.headline, checks_text(report)]
    if report.verdict.failed:
        parts.append(report.verdict.failed_text)
    return " · ".join(parts)


def checks_text(report: HealthReport) -> str:
    """`all 9 checks pass`, or how many need attention."""
    if report.failures:
        return f"{report.failures} failing, {report.problems - report.failures} to look at"
    if report.problems:
        noun = "check needs" if report.problems == 1 else "checks need"
        return f"{report.problems} {noun} a look"
    return f"all {len(report.checks)} checks pass"


PANE = PaneSpec(
    key="health",
    title="Health",
    icon="health.svg",
    order=90,
    factory=HealthPane,
    shortcut="Ctrl+0",
)
