"""The "Add document / folder" dialog: files (chosen or dropped), a folder kept in step,
a web page, or pasted text.

Dropping files anywhere on the dialog adds them to the Files tab, a dropped folder fills the
Folder tab, a dropped http(s) link the Web page tab. `requests()` turns what the Files, Web
page or Text tab holds into document requests; `folder_request()` is the Folder tab's
connector registration (`service.connectors`). Built with `folders=False` (a service without
connectors), there is no Folder tab and a dropped folder is refused with a note.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QCheckBox,
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
from signet_desktop.service.documents.connectors import FolderRequest
from signet_desktop.ui.widgets import hbox, text_label, vbox

FILE_FILTER = "Documents (*.md *.markdown *.txt *.html *.htm *.pdf);;All files (*)"
DROP_HINT = "Drop files here (Markdown, text, HTML, PDF), or choose them."
FOLDER_NOTE = "Folders can't be added in this build (no folder sources): drop files."
FOLDER_HINT = (
    "The folder's Markdown and text files become documents, and stay in step: edited files "
    "are re-ingested, deleted ones removed. The folder itself is only read."
)
TABS = ("files", "folder", "url", "text")


class AddDocumentDialog(QDialog):
    """Collects what to ingest; the pane submits `requests()` after `exec()` accepts."""

    def __init__(self, parent: QWidget | None = None, *, folders: bool = True) -> None:
        super().__init__(parent)
        self.setObjectName("addDocumentDialog")
        self.setWindowTitle("Add document or folder" if folders else "Add document")
        self.setAcceptDrops(True)
        self.setMinimumSize(560, 420)
        self.folders = folders
        self.tabs = QTabWidget()
        self.tabs.addTab(self._files_tab(), "Files")
        self.folder_tab = self._folder_tab()
        if folders:
            self.tabs.addTab(self.folder_tab, "Folder")
        self.tabs.addTab(self._url_tab(), "Web page")
        self.tabs.addTab(self._text_tab(), "Text")
        self.note = text_label("", name="addDocumentNote", role="muted", wrap=True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.add_button = buttons.addButton("Add", QDialogButtonBox.ButtonRole.AcceptRole)
        self.add_button.setProperty("primary", True)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        vbox((self.tabs, 1), self.note, buttons, parent=self)
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
        row = hbox(choose, remove, 1)
        vbox(hint, (self.files, 1), row, parent=page)
        return page

    def _folder_tab(self) -> QWidget:
        page = QWidget()
        hint = text_label(FOLDER_HINT, role="muted", wrap=True)
        self.folder = QLineEdit()
        self.folder.setObjectName("addDocumentFolder")
        self.folder.setPlaceholderText("/path/to/notes")
        self.folder.textChanged.connect(lambda _t: self._update())
        choose = QPushButton("Choose folder…")
        choose.clicked.connect(self.choose_folder)
        row = QHBoxLayout()
        row.addWidget(self.folder, 1)
        row.addWidget(choose)
        self.globs = QLineEdit()
        self.globs.setPlaceholderText("Files (default **/*.md, **/*.markdown, **/*.txt)")
        self.excludes = QLineEdit()
        self.excludes.setPlaceholderText("Leave out (e.g. drafts/**), comma-separated")
        self.watch = QCheckBox("Watch for changes")
        self.watch.setChecked(True)
        vbox(hint, row, self.globs, self.excludes, self.watch, 1, parent=page)
        return page

    def _url_tab(self) -> QWidget:
        page = QWidget()
        self.url = QLineEdit()
        self.url.setObjectName("addDocumentUrl")
        self.url.setPlaceholderText("https://…")
        self.url.textChanged.connect(lambda _t: self._update())
        self.url_title = QLineEdit()
        self.url_title.setPlaceholderText("Title (optional: the page's own title is used)")
        vbox(QLabel("Address of a web page or a PDF"), self.url, self.url_title, 1, parent=page)
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
        """Files to the Files tab (each once); a folder to the Folder tab (or, without
        folder sources, refused with a note)."""
        known = set(self.paths())
        refused, folder = False, None
        for path in paths:
            if path.is_dir():
                refused = refused or not self.folders
                folder = folder or path
                continue
            if path not in known:
                known.add(path)
                self.files.addItem(str(path))
        self.note.setText(FOLDER_NOTE if refused else "")
        if folder is not None and self.folders and not self.files.count():
            self.folder.setText(str(folder))
            self._show("folder")
        else:
            if folder is not None and self.folders:
                self.folder.setText(str(folder))
            self._show("files")
        self._update()

    def _show(self, tab: str) -> None:
        if tab == "folder" and self.folders:
            self.tabs.setCurrentWidget(self.folder_tab)
        else:
            self.tabs.setCurrentIndex(0)

    def current_tab(self) -> str:
        """`files`, `folder`, `url` or `text`."""
        index = self.tabs.currentIndex()
        if not self.folders and index >= 1:
            index += 1
        return TABS[index]

    def add_urls(self, urls: Iterable[QUrl]) -> None:
        """Dropped or pasted links: local files to Files, the first http(s) link to Web page."""
        local = [Path(u.toLocalFile()) for u in urls if u.isLocalFile()]
        if local:
            self.add_paths(local)
        remote = [u.toString() for u in urls if u.scheme() in ("http", "https")]
        if remote:
            self.url.setText(remote[0])
            self.tabs.setCurrentIndex(TABS.index("url") - (0 if self.folders else 1))

    def choose_files(self) -> None:
        names, _ = QFileDialog.getOpenFileNames(
            self, "Add documents", str(Path.home()), FILE_FILTER
        )
        self.add_paths(Path(name) for name in names)

    def choose_folder(self) -> None:
        name = QFileDialog.getExistingDirectory(self, "Add a folder", str(Path.home()))
        if name:
            self.folder.setText(name)

    def _remove_selected(self) -> None:
        for item in self.files.selectedItems():
            self.files.takeItem(self.files.row(item))
        self._update()

    def paths(self) -> list[Path]:
        return [Path(self.files.item(i).text()) for i in range(self.files.count())]

    def folder_request(self) -> FolderRequest | None:
        """The Folder tab's registration, when that tab is active and names a folder."""
        path = self.folder.text().strip()
        if self.current_tab() != "folder" or not path:
            return None
        return FolderRequest(
            path=path,
            globs=_patterns(self.globs.text()),
            excludes=_patterns(self.excludes.text()),
            watch=self.watch.isChecked(),
        )

    def requests(self) -> list[DocumentRequest]:
        """What the Files, Web page or Text tab holds, as document requests (empty when it
        holds nothing, or the Folder tab is active)."""
        tab = self.current_tab()
        if tab == "files":
            return [DocumentRequest("file", path=str(path)) for path in self.paths()]
        if tab == "folder":
            return []
        if tab == "url":
            url = self.url.text().strip()
            title = self.url_title.text().strip() or None
            return [DocumentRequest("url", url=url, title=title)] if url else []
        text = self.text.toPlainText()
        title = self.text_title.text().strip() or None
        return [DocumentRequest("text", content=text, title=title)] if text.strip() else []

    def _update(self) -> None:
        count = len(self.requests()) + (self.folder_request() is not None)
        self.add_button.setEnabled(count > 0)
        several = self.current_tab() == "files" and count > 1
        self.add_button.setText(f"Add {count} files" if several else "Add")

    # -- drag and drop ---------------------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        accept_url_drag(event)

    def dropEvent(self, event: QDropEvent) -> None:
        self.add_urls(take_url_drop(event))


def accept_url_drag(event: QDragEnterEvent) -> None:
    """Take a drag that carries files, folders or links (the dialog and the Documents pane)."""
    if event.mimeData().hasUrls():
        event.acceptProposedAction()


def take_url_drop(event: QDropEvent) -> list[QUrl]:
    """A drop's URLs, the drop accepted when there are any."""
    urls = event.mimeData().urls()
    if urls:
        event.acceptProposedAction()
    return urls


def _patterns(text: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in text.split(",") if p.strip())
