"""The Documents pane: each document with its pipeline strip, its chunks, add and delete.

Left, the agent's documents (newest first), each with queued ▸ extracting ▸ chunking ▸
embedding ▸ indexing ▸ done drawn from its status; right, the selected one: facts, error,
its chunks (activate one to open its memory), Delete (asks for a reason through the
replaceable `ask_delete_reason`). "Add…" opens `AddDocumentDialog` (files chosen or
dropped, a folder registered through `service.connectors` and synced in the background, a
web page, pasted text); files or a folder dropped on the pane open it prefilled. A
`document.progress` / `document.finished` event of this agent moves that row's strip at
once and schedules one coalesced re-read; nothing polls. Every service call runs off the GUI
thread.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QWidget,
)

from signet_desktop.domain.documents import Document, DocumentChunk, DocumentRequest
from signet_desktop.domain.events import Event
from signet_desktop.service.documents.connectors import FolderRequest
from signet_desktop.ui import document_format as fmt
from signet_desktop.ui.document_dialog import AddDocumentDialog, accept_url_drag, take_url_drop
from signet_desktop.ui.document_strip import PipelineStrip
from signet_desktop.ui.pane import PaneContext, PaneSpec
from signet_desktop.ui.pane_frame import Frame, FramedPane
from signet_desktop.ui.style import current_theme
from signet_desktop.ui.widgets import (
    add_row,
    fit_rows,
    hbox,
    keep_rows_fitted,
    select_quietly,
    split,
    text_label,
    vbox,
)

LIST_LIMIT = 200
LIST_MIN_WIDTH = 300  # a row's pipeline strip wraps in a narrow list
EVENTS = ("document.progress", "document.finished")
STATUS_CHOICES = (
    ("All documents", None),
    ("Done", "done"),
    ("Failed", "failed"),
    ("Queued", "queued"),
)
EMPTY_TITLE = "No documents yet"
EMPTY_HINT = (
    "Add Markdown, text, HTML or PDF files, a web page or pasted text with Add document "
    "(or drop files here). Each one is split into chunks that recall can find, and you can "
    "watch it move through queued ▸ extracting ▸ chunking ▸ embedding ▸ indexing ▸ done."
)
FRAME = Frame(
    title="Documents",
    name="document",
    empty_title=EMPTY_TITLE,
    empty_hint=EMPTY_HINT,
    hint_width=560,
)
CHUNK_STYLE = "QListWidget::item {{ padding: 6px 4px; border-bottom: 1px solid {border}; }}"
Detail = tuple[Document, Sequence[DocumentChunk]]
AskReason = Callable[[Document], str | None]


class DocumentRow(QWidget):
    """One document in the list: title, source line, pipeline strip."""

    def __init__(self, document: Document) -> None:
        super().__init__()
        self.title = text_label(name="documentTitle", wrap=True)
        self.meta = text_label(role="muted", wrap=True)
        self.strip = PipelineStrip()
        vbox(self.title, self.meta, self.strip, parent=self, margins=(8, 6, 8, 6), spacing=2)
        self.show_document(document)

    def show_document(self, document: Document) -> None:
        self.title.setText(f"<b>{html.escape(fmt.title_of(document), quote=False)}</b>")
        self.meta.setText(fmt.meta_text(document))
        self.strip.set_progress(fmt.progress_of(document))


class DocumentsPane(FramedPane):
    """The agent's documents, one document's chunks, and adding or deleting them."""

    def __init__(self, context: PaneContext) -> None:
        super().__init__(context, FRAME)
        self.setObjectName("documentsPane")
        self.setAcceptDrops(True)
        self.documents = context.service.documents
        self.ask_delete_reason: AskReason = self._ask_reason
        self.rows: dict[str, DocumentRow] = {}
        self.listed: list[Document] = []
        self.current: Document | None = None
        self.chunks: Sequence[DocumentChunk] = ()
        self._wanted: str | None = None  # the document whose detail was asked for last
        self._build()

    # -- layout ----------------------------------------------------------------------------

    def _build(self) -> None:
        self.connectors = getattr(self.context.service, "connectors", None)
        self.add_button = QPushButton(
            "Add document or folder…" if self.connectors else "Add document…"
        )
        self.add_button.setObjectName("addDocument")
        self.add_button.setProperty("primary", True)
        self.add_button.clicked.connect(lambda: self.open_add_dialog())
        self.status_filter = QComboBox()
        self.status_filter.setObjectName("documentStatusFilter")
        for label, value in STATUS_CHOICES:
            self.status_filter.addItem(label, value)
        self.status_filter.currentIndexChanged.connect(lambda _i: self.refresh())
        filters = QHBoxLayout()
        filters.addWidget(self.status_filter)
        filters.addStretch(1)
        self.list = QListWidget()
        self.list.setObjectName("documentList")
        self.list.setMinimumWidth(LIST_MIN_WIDTH)
        keep_rows_fitted(self.list)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.currentRowChanged.connect(self._on_row)
        self.splitter = split(
            self.list, self._detail(), stretch=(2, 3), sizes=[LIST_MIN_WIDTH + 20, 600]
        )
        content = QWidget()
        vbox(filters, (self.splitter, 1), parent=content, margins=(0, 0, 0, 0))
        self.frame_layout(content, header=[self.add_button])

    def _detail(self) -> QWidget:
        box = QWidget()
        box.setObjectName("documentDetail")
        self.heading = text_label("", role="heading", wrap=True)
        self.strip = PipelineStrip()
        self.form = QFormLayout()
        self.error = text_label("", name="documentError", wrap=True)
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.chunks_label = QLabel("Chunks")
        self.chunks_label.setProperty("role", "muted")
        self.chunk_list = QListWidget()
        self.chunk_list.setObjectName("documentChunks")
        self.chunk_list.setWordWrap(True)
        self.chunk_list.setSpacing(2)
        self.chunk_list.setStyleSheet(CHUNK_STYLE.format(border=current_theme().border))
        self.chunk_list.itemActivated.connect(self._open_item)
        self.open_button = QPushButton("Open memory")
        self.open_button.setObjectName("openChunkMemory")
        self.open_button.clicked.connect(self.open_selected_chunk)
        self.delete_button = QPushButton("Delete…")
        self.delete_button.setObjectName("deleteDocument")
        self.delete_button.clicked.connect(self.delete_current)
        buttons = hbox(self.open_button, 1, self.delete_button)
        vbox(
            self.heading,
            self.strip,
            self.form,
            self.error,
            self.chunks_label,
            (self.chunk_list, 1),
            0,
            buttons,
            parent=box,
            margins=(12, 0, 0, 0),
        )
        self.detail_box = box
        self._show_detail(None, ())
        return box

    # -- the PaneWidget hooks --------------------------------------------------------------

    def reveal(self, **reveal: Any) -> None:
        """`document_id=…`: select that document once it is listed."""
        self.open_revealed(reveal.get("document_id"), self._load_detail)

    # -- reading ---------------------------------------------------------------------------

    def reader(self) -> Callable[[], list[Document]]:
        agent, status, docs = (
            self.context.agent_id,
            self.status_filter.currentData(),
            self.documents,
        )
        return lambda: docs.list(agent, status=status, limit=LIST_LIMIT)

    def show_snapshot(self, documents: list[Document]) -> None:
        self.listed = documents
        filtered = self.status_filter.currentIndex() > 0
        self.show_listing(
            not documents and not filtered, fmt.count_text(documents) if documents else ""
        )
        selected = self._wanted or (self.current.id if self.current else None)
        if [d.id for d in documents] == list(self.rows):
            for document in documents:  # the same documents: update rows in place
                self.rows[document.id].show_document(document)
        else:
            self._rebuild(documents)
        ids = [d.id for d in documents]
        keep = ids.index(selected) if selected in ids else -1
        if keep >= 0:
            select_quietly(self.list, keep)
            self._load_detail(documents[keep].id)
        elif documents and selected is None:
            self.list.setCurrentRow(0)  # loads its detail through currentRowChanged

    def _rebuild(self, documents: list[Document]) -> None:
        """New rows for a changed list, keeping the scroll position."""
        scroll = self.list.verticalScrollBar().value()
        self.list.blockSignals(True)
        self.list.clear()
        self.rows = {}
        for document in documents:
            row = DocumentRow(document)
            add_row(self.list, row, document.id)
            self.rows[document.id] = row
        fit_rows(self.list)
        self.list.blockSignals(False)
        self.list.verticalScrollBar().setValue(scroll)

    def _on_row(self, row: int) -> None:
        if 0 <= row < len(self.listed):
            self._load_detail(self.listed[row].id)

    def _load_detail(self, document_id: str) -> None:
        agent, docs = self.context.agent_id, self.documents

        def read() -> Detail:
            return docs.get(agent, document_id), docs.chunks(agent, document_id)

        def shown(detail: Detail) -> None:
            if detail[0].id == self._wanted:  # a later selection wins
                self._show_detail(*detail)

        self._wanted = document_id
        self.context.tasks.call(read, done=shown, failed=self._detail_failed)

    def _detail_failed(self, exc: BaseException) -> None:
        self._wanted = None
        self.banner.show_message(f"The document could not be read: {exc}")

    def _show_detail(self, document: Document | None, chunks: Sequence[DocumentChunk]) -> None:
        self.current, self.chunks = document, chunks
        while self.form.rowCount():
            self.form.removeRow(0)
        self.detail_box.setEnabled(document is not None)
        self.chunk_list.clear()
        if document is None:
            self.heading.setText("Select a document")
            self.strip.clear()
            self.error.hide()
            self.chunks_label.setText("Chunks")
            return
        self.heading.setText(fmt.title_of(document))
        row = self.rows.get(document.id)
        if row is not None:
            row.show_document(document)
        self.strip.set_progress(fmt.progress_of(document))
        for label, value in fmt.detail_lines(document):
            field = QLabel(value)
            field.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            field.setWordWrap(True)
            self.form.addRow(label, field)
        self.error.setText(f"Error: {document.error}" if document.error else "")
        self.error.setVisible(bool(document.error))
        self.error.setStyleSheet(f"color: {current_theme().error};")
        live = [c for c in chunks if not c.is_deleted]
        self.chunks_label.setText(f"Chunks ({len(live)})" if live else "No chunks yet")
        self.chunk_list.setVisible(bool(live))
        self.open_button.setVisible(bool(live))
        for chunk in live:
            item = QListWidgetItem(fmt.chunk_text(chunk))
            item.setData(Qt.ItemDataRole.UserRole, chunk.memory_id)
            item.setToolTip("Enter or double-click: open this chunk's memory")
            self.chunk_list.addItem(item)
        self.open_button.setEnabled(bool(live))
        self.delete_button.setEnabled(document.status != "deleted")

    # -- chunks ----------------------------------------------------------------------------

    def open_selected_chunk(self) -> None:
        item = self.chunk_list.currentItem() or self.chunk_list.item(0)
        if item is not None:
            self._open_item(item)

    def _open_item(self, item: QListWidgetItem) -> None:
        self.context.navigator.open_memory(str(item.data(Qt.ItemDataRole.UserRole)))

    # -- events ----------------------------------------------------------------------------

    def on_event(self, event: Event) -> None:
        if event.kind not in EVENTS:
            return
        document_id = str(getattr(event, "document_id", ""))
        row = self.rows.get(document_id)
        retrying = bool(getattr(event, "retrying", False))
        status = str(getattr(event, "status", ""))
        progress = fmt.Progress(
            status="queued" if retrying else status,  # a failed attempt that will retry
            chunks_done=int(getattr(event, "chunks_done", 0) or 0),
            chunks_total=getattr(event, "chunks_total", None),
            retrying=retrying,
        )
        if row is not None and progress.status in fmt.STAGES:
            row.strip.set_progress(progress)
        if self.current is not None and self.current.id == document_id:
            if progress.status in fmt.STAGES:
                self.strip.set_progress(progress)
            if event.kind == "document.finished":
                self._load_detail(document_id)
        if row is None or event.kind == "document.finished":
            self.schedule_refresh()

    # -- adding ----------------------------------------------------------------------------

    def open_add_dialog(self, paths: Sequence[Path] = (), urls: Sequence[QUrl] = ()) -> None:
        """The Add document dialog (prefilled with dropped files or links); submits on Add."""
        dialog = AddDocumentDialog(self, folders=self.connectors is not None)
        if paths:
            dialog.add_paths(paths)
        if urls:
            dialog.add_urls(urls)
        if dialog.exec():
            folder = dialog.folder_request()
            if folder is not None:
                self.add_folder(folder)
            else:
                self.add_documents(dialog.requests())
        dialog.deleteLater()

    def add_folder(self, request: FolderRequest) -> None:
        """Register the folder as a source and start its first sync (in the background);
        its files arrive as documents, each with its own document events."""
        connectors, agent = self.connectors, self.context.agent_id
        if connectors is None:
            return
        self._started = True

        def register() -> Any:
            connector = connectors.add_folder(agent, request)
            connectors.sync_in_background(agent, connector.id)
            return connector

        self.context.tasks.call(
            register,
            done=self._folder_added,
            failed=lambda exc: self.banner.show_message(
                f"The folder was not added: {getattr(exc, 'message', exc)}"
            ),
        )

    def _folder_added(self, connector: Any) -> None:
        self.banner.clear()
        self.say(
            f"Folder “{connector.display_name}” added: its files are being ingested and show "
            "up below as they arrive; edits and deletions in the folder follow."
        )
        self.refresh()

    def add_documents(self, requests: Sequence[DocumentRequest]) -> None:
        """Submit each request off the GUI thread; say what was queued and what was refused."""
        if not requests:
            return
        agent, docs = self.context.agent_id, self.documents
        self._started = True

        def submit() -> list[tuple[DocumentRequest, Any]]:
            answers: list[tuple[DocumentRequest, Any]] = []
            for request in requests:
                try:
                    answers.append((request, docs.submit(agent, request)))
                except Exception as exc:  # one refused file does not stop the others
                    answers.append((request, exc))
            return answers

        self.context.tasks.call(submit, done=self._submitted, failed=self._submit_failed)

    def _submitted(self, answers: list[tuple[DocumentRequest, Any]]) -> None:
        queued = sum(1 for _, a in answers if not isinstance(a, Exception) and not a.deduplicated)
        repeats = sum(1 for _, a in answers if not isinstance(a, Exception) and a.deduplicated)
        refused = [(r, a) for r, a in answers if isinstance(a, Exception)]
        parts = []
        if queued:
            parts.append(f"{queued} document{'s' if queued != 1 else ''} queued")
        if repeats:
            parts.append(f"{repeats} already added")
        self.notice.setText("; ".join(parts) + ("." if parts else ""))
        self.notice.setVisible(bool(parts))
        if refused:
            lines = [f"{_name(r)}: {getattr(a, 'message', str(a))}" for r, a in refused]
            self.banner.show_message("Not added — " + "; ".join(lines))
        else:
            self.banner.clear()
        firsts = [a for _, a in answers if not isinstance(a, Exception)]
        if firsts:
            self.current = None
            self._load_detail(firsts[0].id)
        self.refresh()

    def _submit_failed(self, exc: BaseException) -> None:
        self.banner.show_message(f"The documents could not be added: {exc}")

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        accept_url_drag(event)

    def dropEvent(self, event: QDropEvent) -> None:
        urls = take_url_drop(event)
        if urls:
            self.open_add_dialog(urls=urls)

    # -- deleting --------------------------------------------------------------------------

    def delete_current(self) -> None:
        """Ask for a reason, then delete the selected document (its work in flight stops)."""
        document = self.current
        if document is None:
            return
        reason = self.ask_delete_reason(document)
        if reason is None:
            return
        agent, docs = self.context.agent_id, self.documents
        self.context.tasks.call(
            lambda: docs.delete(agent, document.id, reason),
            done=lambda outcome: self._deleted(document, outcome),
            failed=lambda exc: self.banner.show_message(f"The delete failed: {exc}"),
        )

    def _deleted(self, document: Document, outcome: Any) -> None:
        n = int(getattr(outcome, "memories_deleted", 0))
        self.say(
            f"Deleted “{fmt.title_of(document)}”: {n} chunk memor{'y' if n == 1 else 'ies'} "
            "forgotten."
        )
        self.current, self._wanted = None, None
        self._show_detail(None, ())
        self.refresh()

    def _ask_reason(self, document: Document) -> str | None:
        """The default: a reason prompt (None when cancelled)."""
        text, ok = QInputDialog.getText(
            self,
            "Delete document",
            f"Delete “{fmt.title_of(document)}” and forget its chunks?\nReason:",
            QLineEdit.EchoMode.Normal,
            "no longer relevant",
        )
        return text.strip() or "deleted in the inspector" if ok else None


def _name(request: DocumentRequest) -> str:
    if request.path:
        return Path(request.path).name
    return request.url or request.title or "text"


PANE = PaneSpec(
    key="documents",
    title="Documents",
    icon="documents.svg",
    order=70,
    factory=DocumentsPane,
    shortcut="Ctrl+8",
)
