"""The Transcripts pane: the agent's captured sessions, one readable transcript, and search.

Left, the sessions (newest first, filtered by harness, project and status, paged off the GUI
thread by `SessionListModel`), or the hits of a search across every session; right, the
selected session in `TranscriptView` with find-in-session. `reveal(session_key=…)` opens a
session (the Memories pane's "Open session" jumps here). A `transcript.captured` event of
this agent refreshes the list and, when it is the session open, the transcript — coalesced,
so a busy agent costs a few reads, not one per turn; nothing polls.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QStackedWidget,
    QWidget,
)

from signet_desktop.domain.events import Event
from signet_desktop.domain.sessions import KNOWN_HARNESSES
from signet_desktop.service.transcripts.service import MAX_SEARCH_LIMIT
from signet_desktop.ui.empty_state import Banner, EmptyState
from signet_desktop.ui.hit_format import relative_date
from signet_desktop.ui.import_panel import ImportPanel
from signet_desktop.ui.pane import PaneContext, PaneSpec
from signet_desktop.ui.pane_frame import LivePane, pane_column
from signet_desktop.ui.style import current_theme
from signet_desktop.ui.transcript_format import count_text, excerpt_html, hits_text
from signet_desktop.ui.transcript_list import SessionDelegate, SessionFilter, SessionListModel
from signet_desktop.ui.transcript_view import TranscriptView
from signet_desktop.ui.widgets import (
    hbox,
    single_shot,
    split,
    stack_of,
    text_label,
    title_row,
    vbox,
)

CAPTURE_EVENT = "transcript.captured"
REFRESH_DELAY_MS = 250  # turns arriving together (a session end) become one refresh
TYPING_DELAY_MS = 300
ANY = "__any__"
STATUS_CHOICES = (
    ("Any status", None),
    ("Open", "open"),
    ("Completed", "completed"),
    ("Imported", "imported"),
)
EMPTY_TITLE = "No sessions yet"
EMPTY_HINT = (
    "Sessions arrive when an agent's hooks reach the daemon{url}. Connect one from a terminal "
    "with  signet install claude-code  (or codex, opencode); any other harness can POST to "
    "/api/hooks/session-start and /api/hooks/session-end, and Claude Code's HTTP hooks can "
    "call /api/hooks/claude-code/* directly. Each captured turn shows up here as it happens. "
    "Sessions your agents already had come in through Import above."
)


class TranscriptsPane(LivePane):
    """Browse the agent's sessions, read one, search inside it or across all of them."""

    def __init__(self, context: PaneContext) -> None:
        super().__init__(context, REFRESH_DELAY_MS, self._refresh, lambda: self.model.reload())
        self.setObjectName("transcriptsPane")
        self._selecting = False
        self._pending: set[str] = set()  # sessions captured since the last refresh
        self._searches = 0
        self._query = ""  # the global search shown (empty: the sessions list)
        self._offered_import = False
        self.model = SessionListModel(context.service.transcripts, context.tasks, context.agent_id)
        self.view = TranscriptView(context)
        self._typing_timer = single_shot(self, TYPING_DELAY_MS, self.search)
        self._build()
        self.model.loaded.connect(self._on_loaded)
        self.model.seen.connect(self._add_choices)
        self.model.failed.connect(lambda text: self.banner.show_message(text))
        self.view.session_shown.connect(lambda _s: self._select_key(self.view.session_key))

    # -- layout ----------------------------------------------------------------------------

    def _build(self) -> None:
        header, self.count_label = title_row("Transcripts", "sessionCount")
        self.sources_toggle = QPushButton("Sources && import")
        self.sources_toggle.setObjectName("sourcesToggle")
        self.sources_toggle.setCheckable(True)
        self.sources_toggle.toggled.connect(self.show_sources)
        header.addSpacing(12)
        header.addWidget(self.sources_toggle)
        self.import_panel = ImportPanel(self.context)
        self.import_panel.hide()
        self.import_panel.sources_changed.connect(self._on_sources_changed)

        self.harness_filter = self._combo("sessionFilterHarness", "Any harness")
        for harness in KNOWN_HARNESSES:
            self.harness_filter.addItem(harness, harness)
        self.project_filter = self._combo("sessionFilterProject", "Any project")
        self.status_filter = QComboBox()
        self.status_filter.setObjectName("sessionFilterStatus")
        for label, value in STATUS_CHOICES:
            self.status_filter.addItem(label, value)
        self.status_filter.currentIndexChanged.connect(lambda _i: self.apply_filters())
        self.search_box = QLineEdit()
        self.search_box.setObjectName("transcriptSearch")
        self.search_box.setPlaceholderText("Search all sessions…")
        self.search_box.setClearButtonEnabled(True)
        self.search_box.setMinimumWidth(260)
        self.search_box.textEdited.connect(lambda _t: self._typing_timer.start())
        self.search_box.textChanged.connect(self._maybe_back)
        self.search_box.returnPressed.connect(self.search)
        self.filter_bar = QWidget()
        hbox(
            self.harness_filter,
            self.project_filter,
            self.status_filter,
            1,
            self.search_box,
            parent=self.filter_bar,
            margins=(0, 0, 0, 0),
        )

        self.banner = Banner(dismissible=False)
        self.splitter = split(
            self._left_column(), self.view, stretch=(2, 3), name="transcriptsSplitter"
        )
        self.splitter.setSizes([400, 600])  # the titles (first prompts) get room to read
        url = f" at {self.context.url}" if self.context.url else ""
        self.empty = EmptyState("transcripts.svg", EMPTY_TITLE, EMPTY_HINT.format(url=url))
        self.empty.set_hint_width(600)
        empty_layout = self.empty.layout()
        if empty_layout is not None:
            empty_layout.setAlignment(self.empty.hint_label, Qt.AlignmentFlag.AlignHCenter)
        self.stack = stack_of(self.splitter, self.empty)
        pane_column(
            self, header, self.import_panel, self.filter_bar, self.banner, content=self.stack
        )
        QShortcut(QKeySequence.StandardKey.Find, self, self.view.focus_find)
        QShortcut(QKeySequence("Ctrl+Shift+F"), self, self.search_box.setFocus)

    def _combo(self, name: str, any_label: str) -> QComboBox:
        combo = QComboBox()
        combo.setObjectName(name)
        combo.addItem(any_label, ANY)
        combo.setMinimumWidth(140)
        combo.currentIndexChanged.connect(lambda _i: self.apply_filters())
        return combo

    def _left_column(self) -> QWidget:
        self.sessions = QListView()
        self.sessions.setObjectName("sessionList")
        self.sessions.setModel(self.model)
        self.sessions.setItemDelegate(SessionDelegate(self.sessions))
        self.sessions.setUniformItemSizes(True)
        self.sessions.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.sessions.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.sessions.selectionModel().currentRowChanged.connect(self._on_current_row)
        self.results = QListWidget()
        self.results.setObjectName("searchResults")
        self.results.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.results.currentRowChanged.connect(self._on_result_row)
        self.results_label = text_label(name="searchSummary", role="muted", wrap=True)
        back = QPushButton("Back to sessions")
        back.setObjectName("searchBack")
        back.clicked.connect(self.search_box.clear)
        summary = QHBoxLayout()
        summary.addWidget(self.results_label, 1)
        summary.addWidget(back)
        results_box = QWidget()
        vbox(summary, (self.results, 1), parent=results_box, margins=(0, 0, 0, 0))
        self.left = QStackedWidget()
        self.left.addWidget(self.sessions)
        self.left.addWidget(results_box)
        self.left.setMinimumWidth(260)
        return self.left

    # -- the PaneWidget hooks --------------------------------------------------------------

    def reveal(self, **reveal: Any) -> None:
        """`session_key=…`: open that session (a missing one says so in place), at `turn=…`
        (0-based) and with `find=…` highlighted when given; `sources=True`: open the sources
        and import panel."""
        self.start()
        if reveal.get("sources"):
            self.show_sources()
        key = reveal.get("session_key")
        if isinstance(key, str) and key:
            self.stack.setCurrentWidget(self.splitter)
            self.filter_bar.show()
            turn, find = reveal.get("turn"), reveal.get("find")
            self.view.show_session(
                key,
                find=find if isinstance(find, str) and find else None,
                turn=turn if isinstance(turn, int) and not isinstance(turn, bool) else None,
            )
            self._select_key(key)

    def show_sources(self, shown: bool = True) -> None:
        """Open (or close) the sources and import panel above the sessions."""
        if self.sources_toggle.isChecked() != shown:
            self.sources_toggle.setChecked(shown)  # re-enters through `toggled`
            return
        self.import_panel.setVisible(shown)
        if shown:
            self.import_panel.refresh()

    def _on_sources_changed(self) -> None:
        if self._started:
            self.model.refresh()  # an import or a removal changed the sessions

    def shutdown(self) -> None:
        self.import_panel.shutdown()
        super().shutdown()
        self._typing_timer.stop()

    # -- the sessions list -----------------------------------------------------------------

    def current_filter(self) -> SessionFilter:
        def value(combo: QComboBox) -> str | None:
            data = combo.currentData()
            return None if data in (None, ANY) else str(data)

        return SessionFilter(
            harness=value(self.harness_filter),
            project=value(self.project_filter),
            status=value(self.status_filter),
        )

    def apply_filters(self) -> None:
        self.banner.clear()
        self.model.set_filter(self.current_filter())

    def _add_choices(self, projects: list[str], harnesses: list[str]) -> None:
        """Filter choices grow with what the rows showed (no query for distinct values)."""
        for combo, values in ((self.project_filter, projects), (self.harness_filter, harnesses)):
            known = {combo.itemData(i) for i in range(combo.count())}
            fresh = sorted(v for v in values if v not in known)
            combo.blockSignals(True)
            for item in fresh:
                combo.addItem(item, item)
            combo.blockSignals(False)

    def _on_loaded(self) -> None:
        filtered = self.model.filter.active
        total = self.model.total
        nothing = total == 0 and not filtered and self.view.session_key is None
        self.stack.setCurrentWidget(self.empty if nothing else self.splitter)
        self.filter_bar.setHidden(nothing)  # nothing to filter or search yet
        if nothing and not self._offered_import:
            self._offered_import = True
            self.show_sources()  # no sessions yet: importing what exists is the next step
        self.count_label.setText("" if nothing else count_text(total, filtered))
        self._select_key(self.view.session_key)
        if self.view.session_key is None and total:
            self._select_row(0)  # the newest session opens at once

    def _select_key(self, key: str | None) -> None:
        row = None if key is None else self.model.row_of(key)
        current = self.sessions.selectionModel().currentIndex()
        if row is None:
            if current.isValid():
                self._selecting = True
                self.sessions.selectionModel().clear()
                self._selecting = False
        elif current.row() != row:
            self._select_row(row, open_it=False)

    def _select_row(self, row: int, open_it: bool = True) -> None:
        self._selecting = not open_it
        try:
            index = self.model.index(row, 0)
            flags = QItemSelectionModel.SelectionFlag.ClearAndSelect
            self.sessions.selectionModel().setCurrentIndex(index, flags)
            self.sessions.scrollTo(index)
        finally:
            self._selecting = False

    def _on_current_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        row = self.model.row_at(current.row()) if current.isValid() else None
        if not self._selecting and row is not None and row.session_key != self.view.session_key:
            self.view.show_session(row.session_key)

    # -- search across sessions ------------------------------------------------------------

    def search(self, text: str | None = None) -> None:
        """Search every session of the agent for `text` (default: the search box)."""
        self._typing_timer.stop()
        query = (self.search_box.text() if text is None else text).strip()
        if text is not None and self.search_box.text() != text:
            self.search_box.setText(text)
        if not query:
            self._back_to_sessions()
            return
        self.start()
        self._query = query
        self._searches += 1
        number, agent_id = self._searches, self.context.agent_id
        transcripts = self.context.service.transcripts

        def found(answer: tuple[list[Any], int]) -> None:
            if number == self._searches:
                self._show_hits(query, *answer)

        def refused(exc: BaseException) -> None:
            if number == self._searches:
                self.banner.show_message(f"The search failed: {exc}")

        self.context.tasks.call(
            lambda: (
                transcripts.search(agent_id, query, limit=MAX_SEARCH_LIMIT),
                transcripts.count_matches(agent_id, query),
            ),
            done=found,
            failed=refused,
        )

    def _show_hits(self, query: str, hits: list[Any], total: int) -> None:
        theme = current_theme()
        self.stack.setCurrentWidget(self.splitter)
        self.left.setCurrentIndex(1)
        self.results.blockSignals(True)
        self.results.clear()
        for hit in hits:
            item = QListWidgetItem()
            item.setData(Qt.ItemDataRole.UserRole, hit.session_key)
            item.setToolTip(f"session {hit.session_key}")
            label = QLabel(
                f"<b>{html.escape(hit.project or 'no project')}</b>"
                f"<span style='color:{theme.muted}'> · {relative_date(hit.updated_at)}</span>"
                f"<br>{excerpt_html(hit.excerpt, theme)}"
            )
            label.setObjectName("searchHit")
            label.setWordWrap(True)
            label.setContentsMargins(8, 6, 8, 6)
            label.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
            self.results.addItem(item)
            self.results.setItemWidget(item, label)
            item.setSizeHint(label.sizeHint())
        self.results.blockSignals(False)
        self.results_label.setText(hits_text(len(hits), query, max(total, len(hits))))

    def _on_result_row(self, row: int) -> None:
        item = self.results.item(row)
        if item is not None:
            key = str(item.data(Qt.ItemDataRole.UserRole))
            self.view.show_session(key, find=self._query)

    def _maybe_back(self, text: str) -> None:
        if not text.strip():
            self._back_to_sessions()

    def _back_to_sessions(self) -> None:
        self._searches += 1  # a search still on its way is not shown
        self._query = ""
        self.left.setCurrentIndex(0)
        self._select_key(self.view.session_key)

    # -- events ----------------------------------------------------------------------------

    def on_event(self, event: Event) -> None:
        if event.kind == CAPTURE_EVENT:
            self._pending.add(str(getattr(event, "session_key", "")))
            self.schedule_refresh()  # a throttle: a long session still shows as it grows

    def _refresh(self) -> None:
        captured, self._pending = self._pending, set()
        self.model.refresh()
        if self.view.session_key in captured:
            self.view.reload()
        if self._query:
            self.search(self._query)


PANE = PaneSpec(
    key="transcripts",
    title="Transcripts",
    icon="transcripts.svg",
    order=30,
    factory=TranscriptsPane,
    shortcut="Ctrl+3",
)
