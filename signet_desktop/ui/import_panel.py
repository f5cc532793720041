"""Import history into the Transcripts pane: start an import, watch it, list and remove sources.

`ImportPanel` sits above the session list when the pane's "Sources" toggle is on. "Import…"
offers every importer kind the service has (Claude Code and Codex from their default
folders, or a folder a person picks; a Signet workspace always from a picked folder). A run
shows a progress bar fed by `import.progress` / `import.finished` events (counts and rate —
the total is not known up front, so the bar is busy until the run ends). The source table
shows each source's sessions, turns and last run; "Remove source…" first asks the service
for a dry-run preview and shows exactly what would be purged before anything is.

Every service call runs through the pane's TaskRunner, never on the GUI thread. The
confirmation and folder dialogs are attributes (`confirm`, `pick_folder`) so tests replace
them instead of driving modal windows.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QFrame,
    QHeaderView,
    QLabel,
    QMenu,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QWidget,
)

from signet_desktop.domain.events import Event, ImportFinished, ImportProgress
from signet_desktop.ui.empty_state import Banner
from signet_desktop.ui.hit_format import relative_date
from signet_desktop.ui.pane import PaneContext
from signet_desktop.ui.widgets import hbox, text_label, vbox

KIND_LABELS = {
    "claude-code": "Claude Code history",
    "codex": "Codex history",
    "signet-workspace": "Signet workspace…",
}
ASKS_FOR_FOLDER = {"signet-workspace"}  # kinds with no default folder
COLUMNS = ("Source", "Kind", "Sessions", "Turns", "Last run", "Status")


def kind_label(kind: str) -> str:
    """What the Import menu calls a kind."""
    return KIND_LABELS.get(kind, kind)


def progress_text(event: ImportProgress) -> str:
    """`Importing Claude Code history: 12 files · 40 sessions · 8,020 turns · 1,530 turns/s`."""
    rate = event.turns_imported / event.elapsed_s if event.elapsed_s > 0 else 0.0
    parts = [
        f"{event.files_seen:,} files",
        f"{event.records_imported:,} sessions",
        f"{event.turns_imported:,} turns",
    ]
    if rate:
        parts.append(f"{rate:,.0f} turns/s")
    if event.lines_skipped:
        parts.append(f"{event.lines_skipped:,} unreadable lines skipped")
    label = KIND_LABELS.get(event.source_kind, event.source_kind).rstrip("…")
    return f"Importing {label}: " + " · ".join(parts)


def finished_text(event: ImportFinished) -> str:
    """One line on how a run ended."""
    if event.status == "completed":
        text = f"Import finished: {event.records_imported:,} sessions, {event.turns_imported:,}"
        text += " turns"
        if event.records_duplicate:
            text += f", {event.records_duplicate:,} already here"
        if event.records_failed:
            text += f", {event.records_failed:,} failed"
        return text
    reason = f": {event.error}" if event.error else ""
    return f"Import {event.status}{reason}"


def purge_text(purged: Mapping[str, int]) -> str:
    """A preview of a removal, one `name: count` per line (only what is there)."""
    lines = [f"  {name.replace('_', ' ')}: {count:,}" for name, count in purged.items() if count]
    return "\n".join(lines) if lines else "  nothing besides the source itself"


class ImportPanel(QFrame):
    """Import actions, the live run and the agent's sources (see the module docstring)."""

    sources_changed = Signal()

    def __init__(self, context: PaneContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("importPanel")
        self.context = context
        self._imports = context.service.imports
        self._running: set[str] = set()  # run ids this panel is following
        self._sources: list[Any] = []
        self.confirm: Callable[[str, str], bool] = self._ask
        self.pick_folder: Callable[[str], str | None] = self._folder_dialog
        self._build()
        context.events.event_published.connect(self._on_event)

    # -- layout ----------------------------------------------------------------------------

    def _build(self) -> None:
        self.import_button = QPushButton("Import…")
        self.import_button.setObjectName("importButton")
        self.import_menu = QMenu(self.import_button)
        for kind in self._imports.kinds:
            action = self.import_menu.addAction(kind_label(kind))
            action.setObjectName(f"import-{kind}")
            action.setData(kind)
            action.triggered.connect(lambda _checked=False, k=kind: self.start_import(k))
        self.import_button.setMenu(self.import_menu)
        self.remove_button = QPushButton("Remove source…")
        self.remove_button.setObjectName("removeSource")
        self.remove_button.setEnabled(False)
        self.remove_button.hide()  # shown once there is a source to remove
        self.remove_button.clicked.connect(self.remove_selected)
        heading = QLabel("Sources")
        heading.setProperty("role", "heading")
        row = hbox(heading, 1, self.remove_button, self.import_button)

        self.progress = QProgressBar()
        self.progress.setObjectName("importProgress")
        self.progress.setRange(0, 0)  # busy: the number of sessions is not known up front
        self.progress.setTextVisible(False)
        self.progress.setMaximumHeight(6)
        self.progress.hide()
        self.status = text_label("", name="importStatus", role="muted", wrap=True)
        self.status.hide()
        self.banner = Banner()

        self.table = QTreeWidget()
        self.table.setObjectName("sourceTable")
        self.table.setColumnCount(len(COLUMNS))
        self.table.setHeaderLabels(list(COLUMNS))
        self.table.setRootIsDecorated(False)
        self.table.setUniformRowHeights(True)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setMaximumHeight(150)
        header = self.table.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in range(1, len(COLUMNS)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.table.itemSelectionChanged.connect(
            lambda: self.remove_button.setEnabled(bool(self.table.selectedItems()))
        )
        self.empty = QLabel(
            "No sources yet. Import brings in the sessions Claude Code and Codex already keep "
            "on this machine, or a whole Signet workspace; importing again adds only what is "
            "new."
        )
        self.empty.setObjectName("sourcesEmpty")
        self.empty.setProperty("role", "muted")
        self.empty.setWordWrap(True)

        self.setFrameShape(QFrame.Shape.StyledPanel)
        vbox(
            row,
            self.banner,
            self.progress,
            self.status,
            self.table,
            self.empty,
            parent=self,
            margins=(12, 8, 12, 10),
            spacing=6,
        )

    # -- sources ---------------------------------------------------------------------------

    def refresh(self) -> None:
        """Re-read the agent's sources and their totals (off the GUI thread)."""
        agent = self.context.agent_id
        imports = self._imports

        def read() -> list[Any]:
            return [imports.source(agent, s.id, runs=1) for s in imports.sources(agent)]

        self.context.tasks.call(read, done=self._show_sources, failed=self._failed)

    def _show_sources(self, details: list[Any]) -> None:
        self._sources = details
        selected = self.selected_source_id()
        self.table.clear()
        for detail in details:
            source, totals = detail.source, detail.totals
            last = detail.runs[0] if detail.runs else None
            sessions = sum(totals.records.get(o, 0) for o in ("imported", "duplicate"))
            item = QTreeWidgetItem(
                [
                    source.name,
                    kind_label(source.kind).rstrip("…"),
                    f"{sessions:,}",
                    f"{totals.turns:,}",
                    relative_date(last.started_at) if last else "never",
                    last.status if last else source.status,
                ]
            )
            item.setToolTip(0, source.root_path)
            item.setData(0, Qt.ItemDataRole.UserRole, source.id)
            for column in (2, 3):
                item.setTextAlignment(column, Qt.AlignmentFlag.AlignRight)
            self.table.addTopLevelItem(item)
            if source.id == selected:
                item.setSelected(True)
        self.table.setVisible(bool(details))
        self.remove_button.setVisible(bool(details))
        self.empty.setVisible(not details)
        self.sources_changed.emit()

    def selected_source_id(self) -> str | None:
        items = self.table.selectedItems()
        return str(items[0].data(0, Qt.ItemDataRole.UserRole)) if items else None

    def _set_status(self, text: str) -> None:
        self.status.setText(text)
        self.status.setVisible(bool(text))

    # -- importing -------------------------------------------------------------------------

    def start_import(self, kind: str, path: str | None = None) -> None:
        """Start a run of `kind` (asks for a folder when the kind has no default)."""
        if path is None and kind in ASKS_FOR_FOLDER:
            path = self.pick_folder(kind)
            if not path:
                return
        agent = self.context.agent_id
        imports = self._imports
        self.banner.hide()
        self._set_status(f"Starting {kind_label(kind).rstrip('…')} import…")

        def started(ticket: Any) -> None:
            self._running.add(ticket.run_id)
            self.progress.show()
            self.refresh()

        self.context.tasks.call(
            lambda: imports.start(agent, kind, path), done=started, failed=self._failed
        )

    def _on_event(self, event: Event) -> None:
        if event.agent_id != self.context.agent_id:
            return
        if isinstance(event, ImportProgress):
            self._running.add(event.run_id)
            self.progress.show()
            self._set_status(progress_text(event))
        elif isinstance(event, ImportFinished):
            self._running.discard(event.run_id)
            if not self._running:
                self.progress.hide()
            self._set_status(finished_text(event))
            if event.status == "failed":
                self.banner.show_message(finished_text(event))
            self.refresh()

    # -- removal ---------------------------------------------------------------------------

    def remove_selected(self) -> None:
        """Preview what removing the selected source purges, then remove it if confirmed."""
        source_id = self.selected_source_id()
        if source_id is None:
            return
        agent = self.context.agent_id
        imports = self._imports

        def previewed(report: Any) -> None:
            source = report.source
            text = (
                f"Remove {source.name} ({source.root_path})?\n\nThis purges what it "
                f"brought in:\n{purge_text(report.purged)}\n\nA short audit record stays. "
                "The files it was imported from are not touched."
            )
            if not self.confirm("Remove source", text):
                return
            self.context.tasks.call(
                lambda: imports.remove(agent, source_id, dry_run=False, reason="inspector"),
                done=removed,
                failed=self._failed,
            )

        def removed(report: Any) -> None:
            total = sum(report.purged.values())
            self._set_status(f"Removed {report.source.name}: {total:,} rows purged")
            self.refresh()

        self.context.tasks.call(
            lambda: imports.remove(agent, source_id, dry_run=True),
            done=previewed,
            failed=self._failed,
        )

    # -- dialogs and errors ----------------------------------------------------------------

    def _failed(self, exc: BaseException) -> None:
        message = getattr(exc, "message", None) or str(exc)
        self.banner.show_message(message)
        self._set_status("")
        if not self._running:
            self.progress.hide()

    def _ask(self, title: str, text: str) -> bool:
        answer = QMessageBox.question(
            self,
            title,
            text,
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        return answer == QMessageBox.StandardButton.Yes

    def _folder_dialog(self, kind: str) -> str | None:
        start = str(Path.home())
        title = f"Import {kind_label(kind).rstrip('…')} from…"
        chosen = QFileDialog.getExistingDirectory(self, title, start)
        return chosen or None

    def shutdown(self) -> None:
        with contextlib.suppress(RuntimeError, TypeError):  # already disconnected
            self.context.events.event_published.disconnect(self._on_event)
