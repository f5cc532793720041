"""The Recall pane: the search box people keep open, its results and why each one ranked.

A query runs through `service.recall.search` on a worker thread (`TaskRunner.call`); every run
gets a sequence number and only the newest run's answer is shown, so a slow earlier query never
overwrites a later one. The pane re-runs the shown query when the bus says a shown memory was
updated or deleted (no polling). What the rows and the explanation say comes from
`ui/hit_format.py`; the rows are painted by `ui/recall_delegate.py`.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from functools import partial
from typing import Any

from PySide6.QtCore import QEvent, QItemSelection, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QPushButton,
    QWidget,
)

from signet_desktop.domain.errors import SignetError
from signet_desktop.domain.events import Event
from signet_desktop.domain.memory import Actor
from signet_desktop.domain.recall import RecallHit, RecallQuery, RecallResult, TurnHit
from signet_desktop.ui.empty_state import Banner, EmptyState
from signet_desktop.ui.entity_format import path_text, traversal_focal
from signet_desktop.ui.hit_format import (
    EMPTY_PROMPT,
    ExplanationRow,
    explanation_rows,
    no_match_text,
    summary_line,
    turn_explanation_rows,
)
from signet_desktop.ui.pane import PaneContext, PaneSpec, PaneWidget
from signet_desktop.ui.pane_frame import PANE_MARGINS
from signet_desktop.ui.recall_delegate import HitDelegate, HitListModel, HitRow, hit_rows
from signet_desktop.ui.recall_filters import RecallFiltersBar
from signet_desktop.ui.recall_history import (
    DISABLED_TIP,
    HISTORY_LIMIT,
    HistoryRow,
    RecallHistoryDialog,
    history_rows,
)
from signet_desktop.ui.widgets import hbox, single_shot, split, stack_of, text_label, vbox

RECALL_LIMIT = 30
REFRESH_DEBOUNCE_MS = 150  # a burst of edits to shown memories costs one re-run
REFRESH_ON = ("memory.updated", "memory.deleted")
_EMPTY, _NO_MATCH, _RESULTS = 0, 1, 2
_ENTER_KEYS = (Qt.Key.Key_Return, Qt.Key.Key_Enter)
Answer = tuple[RecallResult, tuple[HitRow, ...]]


class Explanation(QFrame):
    """ "Why this ranked" for the selected hit, and what to do with it."""

    entity_requested = Signal(str)  # the traversal path's focal entity was clicked

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("recallExplanation")
        title = QLabel("Why this ranked")
        title.setProperty("role", "heading")
        self.rows = QGridLayout()
        self.rows.setHorizontalSpacing(14)
        self.rows.setVerticalSpacing(4)
        self._cells: list[list[QLabel]] = []
        self._lines: list[str] = []
        self.open_button = QPushButton("Open memory")
        self.open_button.setObjectName("recallOpenMemory")
        self.open_button.setProperty("primary", True)
        self.map_button = QPushButton("Show on map")
        self.map_button.setObjectName("recallShowOnMap")
        self.hint = text_label(
            "Select a result to see its channels and boosts.", role="muted", wrap=True
        )
        self.path_label = text_label("", name="recallTraversalPath", wrap=True)
        self.path_label.setTextFormat(Qt.TextFormat.RichText)
        self.path_label.linkActivated.connect(self.entity_requested.emit)
        self.path_label.hide()
        self.focal_entity: str | None = None
        rule = QFrame()
        rule.setFrameShape(QFrame.Shape.HLine)
        actions = hbox(self.open_button, self.map_button, 1)
        vbox(title, self.hint, self.rows, self.path_label, rule, actions, 1, parent=self)
        self.show_hit(None)

    def show_hit(self, hit: RecallHit | None) -> None:
        """Fill the grid for `hit` (None: the hint and disabled actions).

        Labels are made once and reused: this runs on the GUI thread at every answer.
        """
        self._fill(explanation_rows(hit) if hit is not None else ())
        self.hint.setVisible(hit is None)
        self._show_path(hit)
        self.open_button.setText("Open memory")
        self.open_button.setEnabled(hit is not None)
        self.map_button.setEnabled(hit is not None)

    def show_turn(self, turn: TurnHit) -> None:
        """A session turn the transcript channel found: its rank, session, turn and time;
        the action opens the Transcripts pane at that turn."""
        self._fill(turn_explanation_rows(turn))
        self.hint.setVisible(False)
        self._show_path(None)
        self.open_button.setText("Open session")
        self.open_button.setEnabled(True)
        self.map_button.setEnabled(False)

    def _fill(self, rows: Sequence[ExplanationRow]) -> None:
        self._lines = [" ".join(c for c in (r.label, r.rank, r.value, r.note) if c) for r in rows]
        while len(self._cells) < len(rows):
            self._cells.append(self._grid_row(len(self._cells)))
        for line, cells in enumerate(self._cells):
            row = rows[line] if line < len(rows) else None
            texts = (row.label, row.rank, row.value, row.note) if row else ("", "", "", "")
            for label, text in zip(cells, texts, strict=True):
                label.setText(text)
                label.setVisible(row is not None)

    def _show_path(self, hit: RecallHit | None) -> None:
        """A hit the traversal channel found: the graph path, its focal entity a link to the
        Entities pane."""
        evidence = hit.channels.get("traversal") if hit is not None else None
        self.focal_entity, words = traversal_focal(evidence)
        if self.focal_entity is None or not words:
            self.path_label.hide()
            return
        path = html.escape(path_text(words))
        target = html.escape(self.focal_entity)
        self.path_label.setText(f"Found through the graph: <a href='{target}'>{path}</a>")
        self.path_label.setToolTip("Open the entity where the path starts")
        self.path_label.show()

    def _grid_row(self, line: int) -> list[QLabel]:
        cells = []
        for column in range(4):
            label = QLabel()
            if column in (1, 2):
                label.setAlignment(Qt.AlignmentFlag.AlignRight)
            if column in (0, 3):
                label.setProperty("role", "muted")
            self.rows.addWidget(label, line, column)
            cells.append(label)
        return cells

    def text(self) -> str:
        """What the grid says, one line per row (tests, accessibility)."""
        return "\n".join(self._lines)


class RecallPane(PaneWidget):
    """Query box, filters, ranked results and the explanation of the selected one."""

    recall_finished = Signal()  # a result (or an error) of the newest query is on screen

    def __init__(self, context: PaneContext) -> None:
        super().__init__(context)
        self.setObjectName("recallPane")
        self._seq = 0  # the newest run; an answer for an older one is dropped
        self._shown: RecallQuery | None = None
        self._shown_seq = 0  # the run whose answer is on screen
        self._build()
        self._refresh = single_shot(self, REFRESH_DEBOUNCE_MS, self._rerun)
        self.query_box.returnPressed.connect(self.run_query)
        self.query_box.installEventFilter(self)
        self.results.installEventFilter(self)
        self.results.doubleClicked.connect(lambda _index: self.open_selected())
        self.filters.changed.connect(self._filters_changed)
        self.filters_button.toggled.connect(self.filters.setVisible)
        self.explanation.open_button.clicked.connect(self.open_selected)
        self.explanation.map_button.clicked.connect(self.show_selected_on_map)
        self.explanation.entity_requested.connect(self.open_entity)
        self.map_all_button.clicked.connect(self.show_all_on_map)
        self.history_button.clicked.connect(self.show_history)
        self.history_dialog: RecallHistoryDialog | None = None
        self.context.events.event_published.connect(self._event)
        self._listening = True

    def _build(self) -> None:
        self.query_box = QLineEdit()
        self.query_box.setObjectName("recallQuery")
        self.query_box.setPlaceholderText("Search memory…  (Enter to search, ↓ to the results)")
        self.query_box.setClearButtonEnabled(True)
        self.filters_button = QPushButton("Filters")
        self.filters_button.setObjectName("recallFiltersButton")
        self.filters_button.setToolTip("Narrow by type, tags, who, project, time or pinned")
        self.filters_button.setCheckable(True)
        self.filters = RecallFiltersBar()
        self.filters.hide()
        self.summary = text_label("", name="recallSummary", role="muted")
        self.map_all_button = QPushButton("Show all on map")
        self.map_all_button.setObjectName("recallShowAllOnMap")
        self.map_all_button.setEnabled(False)
        self.history_button = QPushButton("Past results")
        self.history_button.setObjectName("recallHistoryButton")
        self.history_button.setEnabled(False)
        self.banner = Banner()
        self.model = HitListModel(self)
        self.results = QListView()
        self.results.setObjectName("recallResults")
        self.results.setModel(self.model)
        self.results.setItemDelegate(HitDelegate(self.results))
        self.results.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.results.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.results.setUniformItemSizes(True)  # one sizeHint per answer, not one per row
        self.results.selectionModel().selectionChanged.connect(self._selection_changed)
        self.explanation = Explanation()
        self.empty = EmptyState("recall.svg", "Search your memories", EMPTY_PROMPT)
        self.no_match = EmptyState("search.svg", "")
        hits = split(self.results, self.explanation, stretch=(3, 1))
        hits.setChildrenCollapsible(False)
        self.stack = stack_of(self.empty, self.no_match, hits)
        top = QHBoxLayout()
        top.addWidget(self.query_box, 1)
        top.addWidget(self.filters_button)
        info = hbox((self.summary, 1), self.history_button, self.map_all_button)
        vbox(
            top, self.filters, info, self.banner, (self.stack, 1), parent=self, margins=PANE_MARGINS
        )

    @property
    def refresh_scheduled(self) -> bool:
        """A shown memory changed and the re-run is waiting for the burst to end."""
        return self._refresh.isActive()

    # -- the shell's hooks ------------------------------------------------------------------

    def activated(self) -> None:
        self.query_box.setFocus()
        self.query_box.selectAll()

    def reveal(self, **reveal: Any) -> None:
        """`query=text` fills the box and runs it (the command palette, the tray)."""
        query = reveal.get("query")
        if isinstance(query, str):
            self.query_box.setText(query)
            self.run_query()
        self.query_box.setFocus()

    def shutdown(self) -> None:
        self._refresh.stop()
        self._seq += 1  # whatever is still in flight is now stale
        if self._listening:
            self.context.events.event_published.disconnect(self._event)
            self._listening = False

    # -- running a query --------------------------------------------------------------------

    def run_query(self) -> None:
        """Recall what the box and the filters say (an empty box shows the prompt)."""
        text = self.query_box.text().strip()
        if not text:
            self._seq += 1
            self._shown = None
            self._show_results(())
            self.stack.setCurrentIndex(_EMPTY)
            self.summary.setText("")
            self.recall_finished.emit()
            return
        query = RecallQuery(
            query=text,
            agent_id=self.context.agent_id,
            limit=RECALL_LIMIT,
            filters=self.filters.filters(),
        )
        self._start(query)

    def _start(self, query: RecallQuery, keep: str | None = None) -> None:
        self._seq += 1
        seq = self._seq
        self.summary.setText("Searching…")
        self.context.tasks.call(
            self._search,
            query,
            done=partial(self._finished, seq, query, keep),
            failed=partial(self._failed, seq),
        )

    def _search(self, query: RecallQuery) -> Answer:
        """On the worker thread: the recall and every row's strings (the GUI only lays out)."""
        result = self.context.service.recall.search(query)
        return result, hit_rows(result.hits, turns=result.turns)

    def _finished(self, seq: int, query: RecallQuery, keep: str | None, answer: Answer) -> None:
        result, rows = answer
        if seq != self._seq:
            return  # a newer query was asked meanwhile
        self.banner.clear()
        self._shown, self._shown_seq = query, seq
        self.summary.setText(summary_line(result))
        self.summary.setToolTip("\n".join(result.notes))
        if not rows:
            self._show_results(())
            self.no_match.set_text(no_match_text(query.query), self._no_match_hint())
            self.stack.setCurrentIndex(_NO_MATCH)
        else:
            self._show_results(rows, keep)
            self.stack.setCurrentIndex(_RESULTS)
        self.recall_finished.emit()

    def _failed(self, seq: int, exc: BaseException) -> None:
        if seq != self._seq:
            return
        self.summary.setText("")
        self.banner.show_message(f"Recall failed: {exc}")
        self.recall_finished.emit()

    def _show_results(self, rows: Sequence[HitRow], keep: str | None = None) -> None:
        self.model.set_rows(rows)
        self.map_all_button.setEnabled(self.model.rowCount() > 0)
        recording = self._telemetry_enabled()
        self.history_button.setEnabled(recording and self._shown is not None)
        self.history_button.setToolTip(
            "Earlier runs of this query and how their results differ" if recording else DISABLED_TIP
        )
        row = self.model.row_of(keep) if keep else -1
        if self.model.rowCount():
            self.results.setCurrentIndex(self.model.index(max(row, 0)))
        else:
            self.explanation.show_hit(None)

    # -- past results (search telemetry) ---------------------------------------------------

    def _telemetry_enabled(self) -> bool:
        telemetry = self.context.service.recall.telemetry
        return telemetry is not None and telemetry.enabled

    def show_history(self) -> None:
        """Earlier runs of the shown query from the telemetry ledger, in a dialog."""
        if self._shown is None or not self._telemetry_enabled():
            return
        query = self._shown
        shown = self.model.ids()
        self.context.tasks.call(
            self._history,
            query,
            shown,
            done=partial(self._history_ready, query.query),
            failed=lambda exc: self.banner.show_message(f"Past results failed: {exc}"),
        )

    def _history(self, query: RecallQuery, shown: list[str]) -> list[HistoryRow]:
        """On the worker thread: the records (as a person) and a preview of each hit."""
        telemetry = self.context.service.recall.telemetry
        assert telemetry is not None
        records = telemetry.history(
            Actor("inspector", "user"),
            query.agent_id,
            query=query.query,
            limit=HISTORY_LIMIT + 1,
        )
        records = records[1:]  # the newest record is the run on screen now
        previews: dict[str, str] = {}
        for memory_id in {e.memory_id for r in records for e in r.results[:5]}:
            try:
                memory = self.context.service.memories.get(query.agent_id, memory_id)
            except SignetError:
                previews[memory_id] = f"{memory_id} (no longer in memory)"
            else:
                previews[memory_id] = " ".join(memory.content.split())[:90]
        return history_rows(records, shown, previews)

    def _history_ready(self, query: str, rows: list[HistoryRow]) -> None:
        self.history_dialog = RecallHistoryDialog(query, rows, self)
        self.history_dialog.open()

    def _no_match_hint(self) -> str:
        count = self.filters.active_count()
        if not count:
            return "Nothing scored above the noise floor."
        noun = "filter is" if count == 1 else "filters are"
        return f"{count} {noun} narrowing the search — clear them to search everything."

    def _filters_changed(self) -> None:
        count = self.filters.active_count()
        self.filters_button.setText(f"Filters ({count})" if count else "Filters")
        if self.query_box.text().strip():
            self.run_query()

    # -- events -----------------------------------------------------------------------------

    def _event(self, event: Event) -> None:
        if event.kind not in REFRESH_ON or event.agent_id != self.context.agent_id:
            return
        if self._shown is not None and getattr(event, "memory_id", None) in self.model.ids():
            self._refresh.start()

    def _rerun(self) -> None:
        # A newer query in flight will show fresh rows anyway; re-running the old one would
        # make that newer answer stale.
        if self._shown is not None and self._shown_seq == self._seq:
            row = self.results.currentIndex().row()
            selected = self.model.hit(row)
            turn = self.model.turn(row)
            keep = selected.memory.id if selected else (turn.hit_id if turn else None)
            self._start(self._shown, keep=keep)

    # -- selection and actions --------------------------------------------------------------

    def selected_hit(self) -> RecallHit | None:
        return self.model.hit(self.results.currentIndex().row())

    def selected_turn(self) -> TurnHit | None:
        return self.model.turn(self.results.currentIndex().row())

    def _selection_changed(self, selected: QItemSelection, _deselected: QItemSelection) -> None:
        turn = self.selected_turn()
        if turn is not None:
            self.explanation.show_turn(turn)
        else:
            self.explanation.show_hit(self.selected_hit())

    def open_selected(self) -> None:
        """A memory opens in the Memories pane; a session turn in the Transcripts pane, at it."""
        turn = self.selected_turn()
        if turn is not None:
            self.context.navigator.show_pane(
                "transcripts", session_key=turn.session_key, turn=turn.turn_index
            )
            return
        hit = self.selected_hit()
        if hit is not None:
            self.context.navigator.open_memory(hit.memory.id)

    def open_entity(self, entity_id: str) -> None:
        """The Entities pane at `entity_id` (a traversal hit's focal entity)."""
        self.context.navigator.show_pane("entities", entity_id=entity_id)

    def show_selected_on_map(self) -> None:
        hit = self.selected_hit()
        if hit is not None:
            self.context.navigator.show_pane("map", highlight=[hit.memory.id])

    def show_all_on_map(self) -> None:
        ids = self.model.ids()
        if ids:
            self.context.navigator.show_pane("map", highlight=ids)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """↓ from the box into the results; Enter on a result opens it; ↑ from the top back."""
        if event.type() != QEvent.Type.KeyPress or not isinstance(event, QKeyEvent):
            return super().eventFilter(watched, event)
        key = event.key()
        if watched is self.query_box and key == Qt.Key.Key_Down and self.model.rowCount():
            self.results.setFocus()
            if not self.results.currentIndex().isValid():
                self.results.setCurrentIndex(self.model.index(0))
            return True
        if watched is self.results and key in _ENTER_KEYS:
            self.open_selected()
            return True
        at_top = self.results.currentIndex().row() <= 0
        if watched is self.results and key == Qt.Key.Key_Up and at_top:
            self.query_box.setFocus()
            return True
        return super().eventFilter(watched, event)


PANE = PaneSpec(
    key="recall",
    title="Recall",
    icon="recall.svg",
    order=10,
    factory=RecallPane,
    shortcut="Ctrl+1",
)
