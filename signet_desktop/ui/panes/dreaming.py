"""The Dreaming pane: every pass as a timeline, and one pass audited down to each quote.

Left, the agent's passes newest first (mode, status, duration, tokens, cost, what changed),
filtered by agent and status. Right, the selected pass: its heading and facts; its ordered
tool calls (expand one for its arguments and result; the selected call's JSON in full below);
every operation the apply seam saw — applied ✔, proposed ‖, skipped, failed ✘ with the reason
— and, for the selected operation, each cited quote highlighted in its source's canonical text
(a transcript quote links to the Transcripts pane at that session); the evidence window, the
runbook and the exclusions with their reasons. "Run a pass" triggers one (disabled, with the
reason, when no inference provider is configured); "Revert this pass…" runs the revert as a
dry run, shows its changes or what blocks it, and reverts only when confirmed. The right side
is one widget, `ui/pass_audit.py: PassAudit`.

Every service call runs off the GUI thread; the pane re-reads on `dream.*`, `ontology.changed`
and `pass.reverted` events of the shown agent, never on a timer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QListWidget,
    QMessageBox,
    QPushButton,
    QWidget,
)

from signet_desktop.domain.dreaming import DreamingPass, DreamingStatus, PassDetail
from signet_desktop.domain.ontology import OperationRecord
from signet_desktop.ui import dreaming_format as fmt
from signet_desktop.ui import quote_format as quote_fmt
from signet_desktop.ui.dreaming_items import PassItem
from signet_desktop.ui.dreaming_revert import revert_preview
from signet_desktop.ui.pane import PaneContext, PaneSpec
from signet_desktop.ui.pane_frame import Frame, FramedPane, error_text
from signet_desktop.ui.pass_audit import PassAudit
from signet_desktop.ui.widgets import (
    add_row,
    fit_rows,
    keep_rows_fitted,
    select_quietly,
    split,
    text_label,
    vbox,
)

LIST_LIMIT = 100
LIST_MIN_WIDTH = 220  # the audit beside it keeps ≥ 560 px in a 1024-wide window
EMPTY_TITLE = "No Dreaming passes yet"
EMPTY_HINT = (
    "A Dreaming pass reads your agent's completed transcripts and memories and consolidates "
    "them into entities, claims and links, citing the exact words behind every change. "
    "Passes run on their own once enough new evidence arrives (memory.dreaming.enabled), or "
    "start one now with Run a pass. Each one is audited here, tool call by tool call."
)
FRAME = Frame(
    title="Dreaming",
    name="dream",
    empty_title=EMPTY_TITLE,
    empty_hint=EMPTY_HINT,
    read_error="The Dreaming passes could not be read",
    refresh_on=("dream.pass_started", "dream.pass_finished", "ontology.changed", "pass.reverted"),
)
NO_INFERENCE = (
    "Dreaming needs a model: choose one in Settings (Ctrl+,) — your Claude Code, Codex or "
    "OpenCode, or an HTTP provider (an OpenAI-compatible server such as Ollama or llama.cpp, "
    "or Anthropic); `signet dream setup` does the same from a terminal."
)
HARNESS_LABELS = {"claude": "Claude Code", "codex": "Codex", "opencode": "OpenCode"}  # acpx:<kind>
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
        self.state_label = text_label("", name="dreamState", role="muted", wrap=True)
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
        keep_rows_fitted(self.list)
        self.audit = PassAudit(self.context, self.revert_current, lambda: self.agent_id)
        self.splitter = split(self.list, self.audit, stretch=(0, 1), sizes=[LIST_MIN_WIDTH, 760])
        content = QWidget()
        vbox(filters, (self.splitter, 1), parent=content, margins=(0, 0, 0, 0))
        self.frame_layout(content, header=[self.mode, self.run_button, self.cancel_button])
        self.notice.setWordWrap(True)

    @property
    def detail(self) -> PassDetail | None:
        """The pass shown on the right (None: none selected)."""
        return self.audit.detail

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
            entry = add_row(self.list, PassItem(row), item.id)
            entry.setToolTip(row.note or row.title)
        fit_rows(self.list)
        self.list.blockSignals(False)
        if selected in ids:
            select_quietly(self.list, ids.index(selected))
            self._load_detail(str(selected))
        elif ids and selected is None:
            self.list.setCurrentRow(0)
        elif not ids:
            self.audit.show_pass(None)

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
            self.audit.quotes.forget_sources()
            self.audit.show_pass(None)
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
                self.audit.show_pass(detail, names)

        def failed(exc: BaseException) -> None:
            if self._wanted == pass_id:
                self._wanted = None
                self.audit.show_pass(None)
                self.banner.show_message(f"The pass could not be read: {error_text(exc)}")

        self.context.tasks.call(read, done=shown, failed=failed)

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
            head, lines = revert_preview(changes, blockers)
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
