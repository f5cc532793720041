"""The "Add document" dialog: files (chosen or dropped), a web page, or pasted text.

Dropping files anywhere on the dialog adds them to the Files tab; a dropped http(s) link
fills the Web page tab. `requests()` turns what the active tab holds into the document
requests the pane submits. Folder sources are not offered: this build has no `connectors`
capability yet, so a dropped folder is refused with a note instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from signet_desktop.domain.documents import DocumentRequest

FILE_FILTER = "Documents (*.md *.markdown *.txt *.html *.htm *.pdf);;All files (*)"
DROP_HINT = "Drop files here (Markdown, text, HTML, PDF), or choose them."
FOLDER_NOTE = "Folders can't be added here yet (folder sources are not in this build): drop files."


class AddDocumentDialog(QDialog):
    """Collects what to ingest; the pane submits `requests()` after `exec()` accepts."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("addDocumentDialog")
        self.setWindowTitle("Add document")
        self.setAcceptDrops(True)
        self.setMinimumSize(560, 420)
        self.tabs = QTabWidget()
        self.tabs.addTab(self._files_tab(), "Files")
        self.tabs.addTab(self._url_tab(), "Web page")
        self.tabs.addTab(self._text_tab(), "Text")
        self.note = QLabel("")
        self.note.setObjectName("addDocumentNote")
        self.note.setProperty("role", "muted")
        self.note.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.add_button = buttons.addButton("Add", QDialogButtonBox.ButtonRole.AcceptRole)
        self.add_button.setProperty("primary", True)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        column = QVBoxLayout(self)
        column.addWidget(self.tabs, 1)
        column.addWidget(self.note)
        column.addWidget(buttons)
        self.tabs.currentChanged.connect(lambda _i: self._update())
        self._update()

    def _files_tab(self) -> QWidget:
        page = QWidget()
        hint = QLabel(DROP_HINT)
        hint.setProperty("role", "muted")
        self.files = QListWidget()
        self.files.setObjectName("addDocumentFiles")
        choose = QPushButton("Choose files…")
        choose.clicked.connect(self.choose_files)
        remove = QPushButton("Remove")
        remove.clicked.connect(self._remove_selected)
        row = QHBoxLayout()
        row.addWidget(choose)
        row.addWidget(remove)
        row.addStretch(1)
        column = QVBoxLayout(page)
        column.addWidget(hint)
        column.addWidget(self.files, 1)
        column.addLayout(row)
        return page

    def _url_tab(self) -> QWidget:
        page = QWidget()
        self.url = QLineEdit()
        self.url.setObjectName("addDocumentUrl")
        self.url.setPlaceholderText("https://…")
        self.url.textChanged.connect(lambda _t: self._update())
        self.url_title = QLineEdit()
        self.url_title.setPlaceholderText("Title (optional: the page's own title is used)")
        column = QVBoxLayout(page)
        column.addWidget(QLabel("Address of a web page or a PDF"))
        column.addWidget(self.url)
        column.addWidget(self.url_title)
        column.addStretch(1)
        return page

    def _text_tab(self) -> QWidget:
        page = QWidget()
        self.text_title = QLineEdit()
        self.text_title.setObjectName("addDocumentTitle")
        self.text_title.setPlaceholderText("Title")
        self.text = QPlainTextEdit()
        self.text.setObjectName("addDocumentText")
        self.text.setPlaceholderText("Paste or type the text…")
        self.text.textChanged.connect(self._update)
        column = QVBoxLayout(page)
        column.addWidget(self.text_title)
        column.addWidget(self.text, 1)
        return page

    # -- filling ---------------------------------------------------------------------------

    def add_paths(self, paths: Iterable[Path]) -> None:
        """Files to the Files tab (each once); a folder is refused with a note."""
        known = set(self.paths())
        refused = False
        for path in paths:
            if path.is_dir():
                refused = True
                continue
            if path not in known:
                known.add(path)
                self.files.addItem(str(path))
        self.note.setText(FOLDER_NOTE if refused else "")
        self.tabs.setCurrentIndex(0)
        self._update()

    def add_urls(self, urls: Iterable[QUrl]) -> None:
        """Dropped or pasted links: local files to Files, the first http(s) link to Web page."""
        local = [Path(u.toLocalFile()) for u in urls if u.isLocalFile()]
        if local:
            self.add_paths(local)
        remote = [u.toString() for u in urls if u.scheme() in ("http", "https")]
        if remote:
            self.url.setText(remote[0])
            self.tabs.setCurrentIndex(1)

    def choose_files(self) -> None:
        names, _ = QFileDialog.getOpenFileNames(
            self, "Add documents", str(Path.home()), FILE_FILTER
        )
        self.add_paths(Path(name) for name in names)

    def _remove_selected(self) -> None:
        for item in self.files.selectedItems():
            self.files.takeItem(self.files.row(item))
        self._update()

    def paths(self) -> list[Path]:
        return [Path(self.files.item(i).text()) for i in range(self.files.count())]

    def requests(self) -> list[DocumentRequest]:
        """What the active tab holds, as document requests (empty when it holds nothing)."""
        tab = self.tabs.currentIndex()
        if tab == 0:
            return [DocumentRequest("file", path=str(path)) for path in self.paths()]
        if tab == 1:
            url = self.url.text().strip()
            title = self.url_title.text().strip() or None
            return [DocumentRequest("url", url=url, title=title)] if url else []
        text = self.text.toPlainText()
        title = self.text_title.text().strip() or None
        return [DocumentRequest("text", content=text, title=title)] if text.strip() else []

    def _update(self) -> None:
        count = len(self.requests())
        self.add_button.setEnabled(count > 0)
        self.add_button.setText(f"Add {count} files" if self.tabs.currentIndex() == 0
                                and count > 1 else "Add")  # fmt: skip

    # -- drag and drop ---------------------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        urls = event.mimeData().urls()
        if urls:
            self.add_urls(urls)
            event.acceptProposedAction()
