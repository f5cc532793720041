"""The Proposals pane: changes waiting for a person, what was decided, and contradictions.

Tabs: Pending / Applied / Rejected / Failed with their counts, and Contradictions. A proposal
shows its operation and subject, why it was proposed, its provenance (the Dreaming pass — a
link opens it), and every evidence quote highlighted in its source (`ui/quote_view.py`).
Apply (re-validated by the apply seam: a proposal that no longer holds is marked failed with
the reason) and Reject… (asks for a reason through the replaceable `ask_reject_reason`) act
on the selected proposal; tick several for the bulk actions. Contradictions show the two
claims side by side with the detector's reason and evidence; Review opens the entity.

Every service call runs off the GUI thread; the pane re-reads on `ontology.changed`,
`pass.reverted` and `dream.pass_finished` events of this agent, never on a timer.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QStackedWidget,
    QTabBar,
    QVBoxLayout,
    QWidget,
)

from signet_desktop.domain.ontology import Contradiction, Proposal
from signet_desktop.ui import proposal_format as fmt
from signet_desktop.ui.dreaming_format import entity_ids
from signet_desktop.ui.dreaming_items import tone_colour
from signet_desktop.ui.pane import PaneContext, PaneSpec
from signet_desktop.ui.pane_frame import Frame, FramedPane, error_text
from signet_desktop.ui.panes.dreaming import entity_names
from signet_desktop.ui.quote_view import QuoteView
from signet_desktop.ui.style import current_theme
from signet_desktop.ui.widgets import add_row, hbox, split, text_label, vbox

LIST_MIN_WIDTH = 380
READ_LIMIT = fmt.MAX_COUNTED
INSPECTOR = "inspector"  # the actor of decisions made here
EVENTS = ("ontology.changed", "pass.reverted", "dream.pass_finished")
TABS = (*fmt.STATUSES, "contradictions")
EMPTY_TITLE = "Nothing to review"
EMPTY_HINT = (
    "When a Dreaming pass wants a change that a person should decide — a rename, a merge, an "
    "archive — it proposes it here with the exact quotes it cites; apply it or reject it with "
    "a reason. Two claims that disagree show here side by side. Passes run from the Dreaming "
    "pane."
)
FRAME = Frame(
    title="Proposals",
    name="proposal",
    count_name="proposalCounts",
    empty_title=EMPTY_TITLE,
    empty_hint=EMPTY_HINT,
    refresh_on=EVENTS,
)
Snapshot = tuple[dict[str, int], list[Proposal], list[Contradiction], dict[str, str]]
AskReason = Callable[[int], str | None]


def _esc(text: str) -> str:
    return html.escape(text)


class ProposalItem(QWidget):
    """One proposal: a tick for bulk actions, the operation and subject, its facts."""

    def __init__(self, row: fmt.ProposalRow, checkable: bool) -> None:
        super().__init__()
        colour = tone_colour(row.tone, current_theme())
        self.check = QCheckBox()
        self.check.setVisible(checkable)
        self.check.setToolTip("Tick for Apply selected / Reject selected")
        self.title = QLabel(
            f"<b style='color:{colour}'>{_esc(row.title)}</b> &nbsp;{_esc(row.subject)}"
        )
        self.title.setWordWrap(True)
        self.meta = QLabel(row.meta)
        self.meta.setProperty("role", "muted")
        text = vbox(self.title, self.meta, spacing=1)
        line = QHBoxLayout(self)
        line.setContentsMargins(8, 6, 8, 6)
        line.addWidget(self.check, 0, Qt.AlignmentFlag.AlignTop)
        line.addLayout(text, 1)


class ContradictionCard(QFrame):
    """Two disagreeing claims side by side, the detector's reason, and Review."""

    def __init__(self, view: fmt.ContradictionView, review: Callable[[str], None]) -> None:
        super().__init__()
        theme = current_theme()
        self.setObjectName("contradictionCard")
        self.setStyleSheet(
            f"QFrame#contradictionCard {{ border-bottom: 1px solid {theme.border}; }}"
            f"QLabel#claimSide {{ background: {theme.window}; border: 1px solid {theme.border};"
            " border-radius: 6px; padding: 8px; }"
        )
        self.title = QLabel(f"<b>{_esc(view.title)}</b>")
        self.meta = QLabel(view.meta)
        self.meta.setProperty("role", "muted")
        self.left = self._side(view.left)
        self.right = self._side(view.right)
        versus = QLabel("vs")
        versus.setProperty("role", "muted")
        sides = hbox((self.left, 1), versus, (self.right, 1))
        self.reason = text_label(view.reason, role="muted", wrap=True)
        self.reason.setVisible(bool(view.reason))
        self.review = QPushButton("Review")
        self.review.setObjectName("contradictionReview")
        self.review.setEnabled(view.entity_id is not None)
        self.review.setToolTip("Open the entity in the Entities pane")
        if view.entity_id is not None:
            entity_id = view.entity_id
            self.review.clicked.connect(lambda: review(entity_id))
        head = hbox((self.title, 1), self.meta, self.review)
        vbox(head, sides, self.reason, parent=self, margins=(8, 8, 8, 10), spacing=6)

    def _side(self, text: str) -> QLabel:
        label = text_label(text, name="claimSide", wrap=True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        return label


class ProposalsPane(FramedPane):
    """Proposals by status, one proposal's evidence and decision, and contradictions."""

    def __init__(self, context: PaneContext) -> None:
        super().__init__(context, FRAME)
        self.setObjectName("proposalsPane")
        self.ontology = getattr(context.service, "ontology", None)
        self.ask_reject_reason: AskReason = self._ask_reason
        self.counts: dict[str, int] = {}
        self.listed: list[Proposal] = []
        self.contradictions: list[Contradiction] = []
        self.current: Proposal | None = None
        self.items: dict[str, ProposalItem] = {}
        self.names: dict[str, str] = {}  # entity id -> name, for the listed proposals
        self._busy = False
        self._build()

    # -- layout ----------------------------------------------------------------------------

    def _build(self) -> None:
        self.tabs = QTabBar()
        self.tabs.setObjectName("proposalTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.setExpanding(False)
        for key in TABS:
            self.tabs.addTab(key.capitalize())
        self.tabs.currentChanged.connect(self._tab_changed)
        self.proposals_view = self._proposals()
        self.contradictions_view = self._contradictions()
        self.views = QStackedWidget()
        self.views.addWidget(self.proposals_view)
        self.views.addWidget(self.contradictions_view)
        content = QWidget()
        vbox(self.tabs, (self.views, 1), parent=content, margins=(0, 0, 0, 0), spacing=6)
        self.frame_layout(content)
        self.notice.setWordWrap(True)

    def _proposals(self) -> QWidget:
        self.select_all = QCheckBox("Select all")
        self.select_all.setObjectName("proposalSelectAll")
        self.select_all.toggled.connect(self._select_all)
        self.bulk_apply = QPushButton("Apply selected")
        self.bulk_apply.setObjectName("proposalBulkApply")
        self.bulk_apply.clicked.connect(lambda: self.decide_selected("apply"))
        self.bulk_reject = QPushButton("Reject selected…")
        self.bulk_reject.setObjectName("proposalBulkReject")
        self.bulk_reject.clicked.connect(lambda: self.decide_selected("reject"))
        bulk = hbox(self.select_all, 1, self.bulk_apply, self.bulk_reject)
        self.bulk_bar = QWidget()
        self.bulk_bar.setLayout(bulk)
        bulk.setContentsMargins(0, 0, 0, 0)
        self.list = QListWidget()
        self.list.setObjectName("proposalList")
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.currentRowChanged.connect(self._on_row)
        self.list_empty = text_label("", name="proposalListEmpty", role="muted", wrap=True)
        left = QWidget()
        left.setMinimumWidth(LIST_MIN_WIDTH)
        vbox(self.bulk_bar, self.list_empty, (self.list, 1), parent=left, margins=(0, 0, 0, 0))
        splitter = split(left, self._detail(), stretch=(2, 3), sizes=[LIST_MIN_WIDTH + 40, 620])
        return splitter

    def _detail(self) -> QWidget:
        box = QWidget()
        box.setObjectName("proposalDetail")
        self.heading = text_label("Select a proposal", role="heading", wrap=True)
        self.form = QFormLayout()
        self.form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        self.evidence_label = QLabel("Evidence, highlighted in its source")
        self.evidence_label.setProperty("role", "muted")
        self.quotes = QuoteView(self.context)
        self.quotes.setObjectName("proposalQuotes")
        self.apply_button = QPushButton("Apply")
        self.apply_button.setObjectName("proposalApply")
        self.apply_button.setProperty("primary", True)
        self.apply_button.clicked.connect(lambda: self.decide("apply"))
        self.reject_button = QPushButton("Reject…")
        self.reject_button.setObjectName("proposalReject")
        self.reject_button.clicked.connect(lambda: self.decide("reject"))
        self.pass_button = QPushButton("Open its pass")
        self.pass_button.setObjectName("proposalPass")
        self.pass_button.clicked.connect(self._open_pass)
        buttons = hbox(self.apply_button, self.reject_button, 1, self.pass_button)
        vbox(
            self.heading,
            self.form,
            self.evidence_label,
            (self.quotes, 1),
            buttons,
            parent=box,
            margins=(12, 0, 0, 0),
            spacing=6,
        )
        self.detail_box = box
        self._show_proposal(None)
        return box

    def _contradictions(self) -> QWidget:
        self.contradiction_list = QListWidget()
        self.contradiction_list.setObjectName("contradictionList")
        self.contradiction_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.contradiction_list.currentRowChanged.connect(self._on_contradiction)
        self.contradiction_quotes = QuoteView(self.context)
        self.contradiction_quotes.setObjectName("contradictionQuotes")
        self.contradictions_empty = QLabel(
            "No contradictions: no two active claims of one entity disagree."
        )
        self.contradictions_empty.setProperty("role", "muted")
        box = QWidget()
        column = QVBoxLayout(box)
        column.setContentsMargins(0, 0, 0, 0)
        splitter = split(
            self.contradiction_list, self.contradiction_quotes, sizes=[380, 160], vertical=True
        )
        column.addWidget(self.contradictions_empty)
        column.addWidget(splitter, 1)
        return box

    # -- the PaneWidget hooks --------------------------------------------------------------

    def reveal(self, **reveal: Any) -> None:
        """`status=pending|applied|rejected|failed|contradictions`: show that tab."""
        status = reveal.get("status")
        if isinstance(status, str) and status in TABS:
            self.tabs.setCurrentIndex(TABS.index(status))

    # -- reading ---------------------------------------------------------------------------

    @property
    def tab(self) -> str:
        return TABS[max(0, self.tabs.currentIndex())]

    def unavailable(self) -> tuple[str, str] | None:
        if self.ontology is None:
            return "No proposals", "This build has no ontology service."
        return None

    def reader(self) -> Callable[[], Snapshot]:
        ontology, agent, tab = self.ontology, self.context.agent_id, self.tab
        service = self.context.service
        assert ontology is not None

        def read() -> Snapshot:
            counts: dict[str, int] = {}
            shown: list[Proposal] = []
            for status in fmt.STATUSES:
                rows = ontology.proposals(agent, status=status, limit=READ_LIMIT)
                counts[status] = len(rows)
                if status == tab:
                    shown = rows
            contradictions = ontology.contradictions(agent, status="active", limit=READ_LIMIT)
            ids = {i for p in shown for i in entity_ids(p.payload)}
            return counts, shown, contradictions, entity_names(service, agent, ids)

        return read

    def show_snapshot(self, snapshot: Snapshot) -> None:
        counts, shown, contradictions, self.names = snapshot
        self.counts, self.contradictions = counts, contradictions
        nothing = not any(counts.values()) and not contradictions
        self.show_listing(nothing, fmt.counts_text(counts))
        for index, key in enumerate(TABS):
            count = len(contradictions) if key == "contradictions" else counts.get(key, 0)
            self.tabs.setTabText(index, fmt.tab_label(key, count))
        self._fill_proposals(shown)
        self._fill_contradictions(contradictions)

    def _tab_changed(self, index: int) -> None:
        self.views.setCurrentWidget(
            self.contradictions_view if self.tab == "contradictions" else self.proposals_view
        )
        self.select_all.setChecked(False)
        self.refresh()

    # -- proposals -------------------------------------------------------------------------

    def _fill_proposals(self, rows: list[Proposal]) -> None:
        keep = self.current.id if self.current else None
        ticked = set(self.selected_ids())
        pending = self.tab == "pending"
        self.listed = rows
        self.items = {}
        self.list.blockSignals(True)
        self.list.clear()
        for proposal in rows:
            widget = ProposalItem(fmt.proposal_row(proposal, names=self.names), checkable=pending)
            widget.check.setChecked(proposal.id in ticked)
            widget.check.toggled.connect(lambda _on: self._update_bulk())
            width = max(self.list.viewport().width() - 4, LIST_MIN_WIDTH - 20)
            height = widget.heightForWidth(width)
            size = QSize(width, height) if height > 0 else widget.sizeHint()
            add_row(self.list, widget, proposal.id, size)
            self.items[proposal.id] = widget
        self.list.blockSignals(False)
        self.bulk_bar.setVisible(pending and bool(rows))
        self.list_empty.setVisible(not rows)
        hint = " Proposals a pass makes wait here for your decision." if pending else ""
        self.list_empty.setText(f"No {self.tab} proposals.{hint}")
        ids = [p.id for p in rows]
        if keep in ids:
            self.list.setCurrentRow(ids.index(str(keep)))
            self._show_proposal(rows[ids.index(str(keep))])
        elif rows:
            self.list.setCurrentRow(0)
        else:
            self._show_proposal(None)
        self._update_bulk()

    def _on_row(self, row: int) -> None:
        if 0 <= row < len(self.listed):
            self._show_proposal(self.listed[row])

    def _show_proposal(self, proposal: Proposal | None) -> None:
        self.current = proposal
        while self.form.rowCount():
            self.form.removeRow(0)
        can_apply, can_reject = fmt.actions_for(proposal)
        self.apply_button.setEnabled(can_apply and not self._busy)
        self.reject_button.setEnabled(can_reject and not self._busy)
        self.detail_box.setEnabled(proposal is not None)
        if proposal is None:
            self.heading.setText("Select a proposal")
            self.quotes.clear()
            self.pass_button.hide()
            return
        row = fmt.proposal_row(proposal, names=self.names)
        theme = current_theme()
        self.heading.setText(f"{row.title}  {row.subject}".strip())
        for label, value in fmt.detail_lines(proposal):
            field = QLabel(value)
            field.setWordWrap(True)
            field.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            if label == "Status":
                field.setStyleSheet(f"color: {tone_colour(row.tone, theme)};")
            self.form.addRow(label, field)
        self.pass_button.setVisible(proposal.pass_id is not None)
        quotes = fmt.quotes_of_proposal(proposal)
        self.evidence_label.setText(
            f"Evidence ×{len(quotes)}, highlighted in its source" if quotes else "Evidence"
        )
        self.quotes.show_quotes("", quotes, self.context.agent_id)

    def _open_pass(self) -> None:
        if self.current is not None and self.current.pass_id:
            self.context.navigator.show_pane("dreaming", pass_id=self.current.pass_id)

    def selected_ids(self) -> list[str]:
        """The ticked proposals, in list order."""
        return [pid for pid, item in self.items.items() if item.check.isChecked()]

    def _select_all(self, on: bool) -> None:
        for item in self.items.values():
            item.check.setChecked(on)
        self._update_bulk()

    def _update_bulk(self) -> None:
        count = len(self.selected_ids())
        self.bulk_apply.setText(f"Apply selected ({count})" if count else "Apply selected")
        self.bulk_reject.setText(f"Reject selected ({count})…" if count else "Reject selected…")
        self.bulk_apply.setEnabled(bool(count) and not self._busy)
        self.bulk_reject.setEnabled(bool(count) and not self._busy)

    # -- deciding --------------------------------------------------------------------------

    def decide(self, action: str) -> None:
        """Apply or reject the shown proposal."""
        if self.current is not None:
            self._decide(action, [self.current.id])

    def decide_selected(self, action: str) -> None:
        """Apply or reject every ticked proposal (each on its own; refusals are listed)."""
        ids = self.selected_ids()
        if ids:
            self._decide(action, ids)

    def _decide(self, action: str, ids: Sequence[str]) -> None:
        ontology, agent = self.ontology, self.context.agent_id
        if ontology is None or self._busy or action not in ("apply", "reject"):
            return
        reason: str | None = None
        if action == "reject":
            reason = self.ask_reject_reason(len(ids))
            if reason is None:
                return
        self._set_busy(True)
        self.banner.clear()
        wanted = list(ids)

        def run() -> list[Any]:
            if len(wanted) == 1 and action == "apply":
                return [ontology.apply_proposal(agent, wanted[0], actor=INSPECTOR)]
            if len(wanted) == 1:
                return [ontology.reject_proposal(agent, wanted[0], actor=INSPECTOR, reason=reason)]
            return list(ontology.bulk(agent, wanted, action=action, actor=INSPECTOR, reason=reason))

        self.context.tasks.call(
            run, done=lambda out: self._decided(action, out), failed=self._decide_failed
        )

    def _decided(self, action: str, outcomes: list[Any]) -> None:
        self._set_busy(False)
        head, refused = fmt.outcome_text(action, outcomes)
        if refused:
            self.banner.show_message(f"{head}: " + "; ".join(refused[:5]), "warn")
        else:
            self.say(head + ".")
        self.select_all.setChecked(False)
        self.refresh()

    def _decide_failed(self, exc: BaseException) -> None:
        self._set_busy(False)
        self.banner.show_message(f"Nothing was decided: {error_text(exc)}")

    def _set_busy(self, busy: bool) -> None:
        self._busy = busy
        self._show_proposal(self.current)
        self._update_bulk()

    def _ask_reason(self, count: int) -> str | None:
        """The default: a reason prompt (None when cancelled; a reason is required)."""
        what = "this proposal" if count == 1 else f"these {count} proposals"
        text, ok = QInputDialog.getText(
            self, "Reject", f"Why reject {what}?", QLineEdit.EchoMode.Normal, ""
        )
        return text.strip() or None if ok else None

    # -- contradictions --------------------------------------------------------------------

    def _fill_contradictions(self, items: list[Contradiction]) -> None:
        row = self.contradiction_list.currentRow()
        self.contradiction_list.blockSignals(True)
        self.contradiction_list.clear()
        for item in items:
            card = ContradictionCard(fmt.contradiction_view(item), self._review)
            add_row(self.contradiction_list, card, item.id, card.sizeHint())
        self.contradiction_list.blockSignals(False)
        self.contradictions_empty.setVisible(not items)
        if items:
            self.contradiction_list.setCurrentRow(min(max(row, 0), len(items) - 1))
        else:
            self.contradiction_quotes.clear()

    def _on_contradiction(self, row: int) -> None:
        if 0 <= row < len(self.contradictions):
            view = fmt.contradiction_view(self.contradictions[row])
            self.contradiction_quotes.show_quotes(
                f"<p><b>{_esc(view.title)}</b></p>", view.quotes, self.context.agent_id
            )

    def _review(self, entity_id: str) -> None:
        self.context.navigator.show_pane("entities", entity_id=entity_id)

    def proposal_ids(self) -> list[str]:
        """The listed proposals, top to bottom (tests)."""
        return [p.id for p in self.listed]


PANE = PaneSpec(
    key="proposals",
    title="Proposals",
    icon="proposals.svg",
    order=55,
    factory=ProposalsPane,
    shortcut="Ctrl+6",
)
