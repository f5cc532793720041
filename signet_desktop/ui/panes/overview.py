"""The Overview, the home pane: how the app is, what is connected, and what just happened.

Cards for the daemon, the agents (each harness the installers know, connected or not, and its
last session), memories and sessions today, Dreaming's last pass and the queue, each a link to
its pane; the failed items with Retry (`ui/failed_items.py`); and a live activity feed that says
in words what each bus event means ("Claude Code remembered “billing runs on…”"). Everything is
read off the GUI thread (`ui/overview_report.py`): the cards once shown and again, throttled,
when events say something changed; the feed's lines in batches that read the memory or
document each event names. While the pane is hidden events are only kept (bounded), and
described when it is shown again.
"""

from __future__ import annotations

import contextlib
import os
from collections import deque
from collections.abc import Callable, Mapping
from datetime import UTC, datetime

from PySide6.QtWidgets import QGridLayout, QLabel, QWidget

from signet_desktop.domain.events import Event
from signet_desktop.ui import overview_format as fmt
from signet_desktop.ui.activity_words import Line, describe
from signet_desktop.ui.failed_items import FailedItems, verdict_colour
from signet_desktop.ui.overview_cards import FEED_LIMIT, ActivityFeed, Card
from signet_desktop.ui.overview_report import (
    OverviewReport,
    lines_for,
    read_overview,
    recent_lines,
)
from signet_desktop.ui.pane import PaneContext, PaneSpec
from signet_desktop.ui.pane_frame import Frame, FramedPane, names_event
from signet_desktop.ui.style import current_theme
from signet_desktop.ui.widgets import single_shot, vbox

FEED_FLUSH_MS = 300  # events arriving together are described in one read
REREAD_ON = (
    "memory.created",
    "memory.deleted",
    "memory.recovered",
    "job.completed",
    "job.dead",
    "document.finished",
    "transcript.captured",
    "import.finished",
    "dream.",
    "queue.repaired",
    "status.changed",
    "worker.state",
)
FRAME = Frame(
    title="Overview",
    name="overview",
    count_name="overviewState",
    empty_title="Reading the overview",
    empty_hint="The daemon, agents, memories, Dreaming and the queue show here once read.",
    refresh_on=REREAD_ON,
    refresh_ms=2000,  # an import's thousands of events cost one reading every 2 s
)
CARDS = (
    ("daemon", "Daemon", "health", "Health"),
    ("agents", "Agents", "transcripts", "Sessions"),
    ("memories", "Memories", "memories", "Memories"),
    ("sessions", "Transcripts", "transcripts", "Transcripts"),
    ("dreaming", "Dreaming", "dreaming", "Dreaming"),
    ("queue", "Queue", "queue", "Queue"),
)
FEED_EMPTY = "Nothing has happened yet: what your agents remember and do appears here live."


class OverviewPane(FramedPane):
    """The home pane: cards that link to their panes, failed items, the activity feed."""

    def __init__(self, context: PaneContext) -> None:
        super().__init__(context, FRAME)
        self.setObjectName("overviewPane")
        self.env: Mapping[str, str] = os.environ  # where the harnesses' files are (tests: tmp)
        self.clock: Callable[[], datetime] = lambda: datetime.now(UTC)
        self.report: OverviewReport | None = None
        self._seeded = False
        self._waiting: deque[Event] = deque(maxlen=FEED_LIMIT)
        self._describing = False
        self._flush_timer = single_shot(self, FEED_FLUSH_MS, self._flush)
        self._build()
        context.events.event_published.connect(self._heard)

    def _build(self) -> None:
        self.failed = FailedItems(self.context)
        self.failed.retried.connect(self.show_outcome)
        self.cards: dict[str, Card] = {}
        grid = QGridLayout()
        grid.setSpacing(12)
        for index, (key, title, pane, link) in enumerate(CARDS):
            card = Card(title, pane, f"Open {link}")
            card.chosen.connect(lambda key: self.context.navigator.show_pane(key))
            self.cards[key] = card
            grid.addWidget(card, index // 3, index % 3)
        for index in range(3):
            grid.setColumnStretch(index, 1)
        heading = QLabel("Activity")
        heading.setProperty("role", "heading")
        self.feed = ActivityFeed()
        self.feed.line_chosen.connect(self._open_line)
        self.feed_empty = QLabel(FEED_EMPTY)
        self.feed_empty.setProperty("role", "muted")
        content = QWidget()
        vbox(
            self.failed,
            grid,
            heading,
            self.feed_empty,
            (self.feed, 1),
            parent=content,
            margins=(0, 0, 0, 0),
            spacing=10,
        )
        self.frame_layout(content)
        self.state_label = self.count_label  # the verdict every surface shows
        self.setStyleSheet(card_style())

    # -- reading ---------------------------------------------------------------------------

    def reader(self) -> Callable[[], OverviewReport]:
        service, agent, env, now = self.context.service, self.agent_id, self.env, self.clock()
        return lambda: read_overview(service, agent, env, now)

    def show_snapshot(self, snapshot: OverviewReport) -> None:
        self.report = report = snapshot
        now = self.clock()
        verdict = report.verdict
        self.state_label.setText(
            " · ".join(part for part in (verdict.headline, verdict.failed_text) if part)
        )
        self.state_label.setStyleSheet(f"color: {verdict_colour(verdict.state)};")
        self.failed.show_verdict(verdict)
        url = self.context.url
        self.cards["daemon"].show_text(fmt.daemon_card(report.runtime, url, now, verdict))
        self.cards["agents"].show_text(fmt.agents_card(report.agents, now))
        self.cards["memories"].show_text(fmt.counted_card(report.memories, "memory", "memories"))
        self.cards["sessions"].show_text(fmt.counted_card(report.sessions, "session", "sessions"))
        self.cards["dreaming"].show_text(fmt.dreaming_card(report, now))
        self.cards["queue"].show_text(fmt.queue_card(report))
        if not self._seeded:
            self._seeded = True
            for at, line in recent_lines(report.recent):
                self.feed.add(line, at, newest=False)
        self._show_feed()
        self.show_listing(False)
        self.activated_feed()

    # -- the feed --------------------------------------------------------------------------

    def _heard(self, event: Event) -> None:
        """Every event of this agent (or the process) that means something joins the feed."""
        if event.agent_id not in (None, self.agent_id):
            return
        if self._started and event.agent_id is None and names_event(REREAD_ON, event.kind):
            self.schedule_refresh()  # process facts (workers, status) re-read the cards too
        if describe(event) is None:
            return
        self._waiting.append(event)
        if self._started and self.isVisible() and not self._flush_timer.isActive():
            self._flush_timer.start()

    def activated_feed(self) -> None:
        """Describe what was heard while the pane was hidden."""
        if self._waiting and not self._flush_timer.isActive():
            self._flush_timer.start()

    def _flush(self) -> None:
        if self._describing or not self._waiting:
            return
        events = list(self._waiting)
        self._waiting.clear()
        self._describing = True
        self.context.tasks.call(
            lines_for,
            self.context.service,
            self.agent_id,
            events,
            done=self._described,
            failed=self._describe_failed,
        )

    def _described(self, lines: list[Line]) -> None:
        self._describing = False
        for line in lines:
            self.feed.add(line)
        self._show_feed()
        self.activated_feed()

    def _describe_failed(self, exc: BaseException) -> None:
        self._describing = False
        self.banner.show_message(f"The activity feed could not read what happened: {exc}")

    def _show_feed(self) -> None:
        self.feed_empty.setVisible(self.feed.count() == 0)

    def _open_line(self, line: Line) -> None:
        self.context.navigator.show_pane(line.pane, **line.reveal)

    def shutdown(self) -> None:
        self._flush_timer.stop()
        with contextlib.suppress(RuntimeError, TypeError):
            self.context.events.event_published.disconnect(self._heard)
        super().shutdown()


def card_style() -> str:
    """Cards on the theme's surface; the value in a larger type."""
    t = current_theme()
    return f"""
QFrame#overviewCard {{ background: {t.surface}; border: 1px solid {t.border};
    border-radius: 8px; }}
QFrame#overviewCard:hover {{ border-color: {t.accent}; }}
QLabel#overviewValue {{ font-size: 15pt; font-weight: 600; }}
QListWidget#overviewFeed {{ background: {t.surface}; border: 1px solid {t.border};
    border-radius: 8px; padding: 4px; }}
QListWidget#overviewFeed::item {{ padding: 4px 6px; }}
"""


PANE = PaneSpec(
    key="overview",
    title="Overview",
    icon="overview.svg",
    order=5,
    factory=OverviewPane,
    shortcut="Ctrl+Shift+O",
)
