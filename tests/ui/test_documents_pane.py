"""The Documents pane over the real facade and document worker: the strip follows the
pipeline, chunks open their memory, delete asks for a reason, the add dialog takes dropped
files, and one agent never sees another's documents."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from pytestqt.qtbot import QtBot

from signet_desktop.domain.documents import DocumentRequest
from signet_desktop.service.facade import SignetService
from signet_desktop.ui import document_format as fmt
from signet_desktop.ui.document_dialog import FOLDER_NOTE, AddDocumentDialog
from signet_desktop.ui.pane import PaneContext, discover_panes
from signet_desktop.ui.panes.documents import PANE, DocumentsPane
from tests.ui.conftest import RecordingNavigator
from tests.ui.memory_support import settle

pytestmark = pytest.mark.gui

RUNBOOK = (
    "# Billing runbook\n\nBilling runs on Postgres 16 with logical replication.\n\n"
    "## Failover\n\nPromote the replica, then point PGBOUNCER_HOST at it."
)


def run_document_worker(service: SignetService) -> int:
    """Run the real document worker until the queue has nothing for it; steps taken."""
    [declaration] = [w for w in service.pipeline.workers if "document_ingest" in w.job_types]
    worker = declaration.factory()
    steps = 0
    while worker.run_once():
        steps += 1
    return steps


def submit(service: SignetService, agent: str = "default", text: str = RUNBOOK) -> str:
    return service.documents.submit(agent, DocumentRequest("text", content=text,
                                                           title="Billing runbook")).id  # fmt: skip


def open_pane(qtbot: QtBot, context: PaneContext, loop: asyncio.AbstractEventLoop) -> DocumentsPane:
    pane = DocumentsPane(context)
    qtbot.addWidget(pane)
    pane.resize(1200, 760)
    pane.show()
    pane.activated()
    settle(loop, context)
    return pane


def test_the_pane_registers_itself() -> None:
    spec = next(spec for spec in discover_panes() if spec.key == "documents")
    assert spec == PANE
    assert (spec.title, spec.icon, spec.order) == ("Documents", "documents.svg", 70)


def test_strip_stages() -> None:
    assert [s.state for s in fmt.stages(fmt.Progress("chunking"))] == [
        "done", "done", "current", "todo", "todo", "todo"
    ]  # fmt: skip
    embedding = fmt.stages(fmt.Progress("embedding", chunks_done=3, chunks_total=8))
    assert embedding[3].label == "embedding 3/8"
    assert [s.state for s in fmt.stages(fmt.Progress("done"))] == ["done"] * 6
    assert fmt.stages(fmt.Progress("failed"))[-1] == fmt.Stage("failed", "failed")
    assert fmt.stages(fmt.Progress("queued", retrying=True))[0].label == "queued ↻"


def test_empty_then_a_document_moves_through_its_strip_to_done(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    pane = open_pane(qtbot, pane_context, qt_loop)
    assert pane.stack.currentWidget() is pane.empty
    assert "Add document" in pane.empty.hint_label.text()
    service = pane_context.service
    document_id = submit(service)  # publishes document.progress(queued)
    settle(qt_loop, pane_context, until=lambda: document_id in pane.rows)
    assert pane.stack.currentWidget() is pane.content
    assert pane.rows[document_id].strip.plain_text().startswith("[queued] ▸ extracting")
    assert run_document_worker(service) >= 1
    settle(qt_loop, pane_context, until=lambda: pane.current is not None
           and pane.current.status == "done" and bool(pane.chunks))  # fmt: skip
    assert pane.rows[document_id].strip.plain_text().endswith("indexing ▸ done")
    assert "[" not in pane.strip.plain_text()
    settle(qt_loop, pane_context, until=lambda: pane.count_label.text() == "1 document")
    assert pane.chunk_list.count() == len(pane.chunks) >= 1
    assert pane.chunks_label.text() == f"Chunks ({len(pane.chunks)})"


def test_a_chunk_opens_its_memory(
    qtbot: QtBot,
    qt_loop: asyncio.AbstractEventLoop,
    pane_context: PaneContext,
    navigator: RecordingNavigator,
) -> None:
    submit(pane_context.service)
    run_document_worker(pane_context.service)
    pane = open_pane(qtbot, pane_context, qt_loop)
    settle(qt_loop, pane_context, until=lambda: bool(pane.chunks))
    pane.chunk_list.setCurrentRow(0)
    pane.open_button.click()
    assert navigator.opened == [pane.chunks[0].memory_id]
    memory = pane_context.service.memories.get("default", pane.chunks[0].memory_id)
    assert "Postgres 16" in memory.content


def test_delete_asks_for_a_reason_and_forgets_the_chunks(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    service = pane_context.service
    document_id = submit(service)
    run_document_worker(service)
    pane = open_pane(qtbot, pane_context, qt_loop)
    settle(qt_loop, pane_context, until=lambda: bool(pane.chunks))
    memory_id = pane.chunks[0].memory_id
    asked: list[str] = []
    pane.ask_delete_reason = lambda doc: asked.append(doc.id) or None  # type: ignore[func-returns-value]
    pane.delete_button.click()
    settle(qt_loop, pane_context)
    assert asked == [document_id] and service.documents.get("default", document_id).status == "done"
    pane.ask_delete_reason = lambda doc: "superseded by the wiki"
    pane.delete_button.click()
    settle(qt_loop, pane_context, until=lambda: "Deleted" in pane.notice.text())
    assert service.documents.get("default", document_id).status == "deleted"
    history = service.memories.history("default", memory_id)
    assert "superseded by the wiki" in repr(history)
    settle(qt_loop, pane_context, until=lambda: pane.stack.currentWidget() is pane.empty)


def drop(target: AddDocumentDialog, *urls: QUrl) -> None:
    mime = QMimeData()
    mime.setUrls(list(urls))
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime,
                       Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)  # fmt: skip
    target.dropEvent(event)


def test_the_add_dialog_takes_dropped_files_and_links(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# Deploys\n\nDeploys run on Tuesdays and Thursdays.", encoding="utf-8")
    dialog = AddDocumentDialog()
    qtbot.addWidget(dialog)
    drop(dialog, QUrl.fromLocalFile(str(notes)), QUrl("https://example.com/guide.html"))
    assert dialog.paths() == [notes]
    assert dialog.url.text() == "https://example.com/guide.html"
    dialog.tabs.setCurrentIndex(0)
    assert dialog.requests() == [DocumentRequest("file", path=str(notes))]
    assert dialog.add_button.isEnabled() and dialog.folder_request() is None

    pane = open_pane(qtbot, pane_context, qt_loop)
    pane.add_documents([*dialog.requests(), DocumentRequest("file", path="relative/path.md")])
    settle(qt_loop, pane_context, until=lambda: bool(pane.listed))
    assert pane.notice.text() == "1 document queued."
    assert "path.md" in pane.banner.text
    pane.add_documents(dialog.requests())
    settle(qt_loop, pane_context, until=lambda: "already added" in pane.notice.text())
    assert len(pane_context.service.documents.list("default")) == 1


def test_a_dropped_folder_becomes_a_folder_source(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext, tmp_path: Path
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nAlice owns billing.", encoding="utf-8")
    (folder / "b.txt").write_text("Bob owns search.", encoding="utf-8")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    dialog = AddDocumentDialog()
    qtbot.addWidget(dialog)
    drop(dialog, QUrl.fromLocalFile(str(folder)))
    assert dialog.current_tab() == "folder" and dialog.note.text() == ""
    request = dialog.folder_request()
    assert request is not None and request.path == str(folder) and request.watch
    assert dialog.requests() == [] and dialog.add_button.isEnabled()

    pane = open_pane(qtbot, pane_context, qt_loop)
    pane.add_folder(request)
    settle(qt_loop, pane_context, until=lambda: len(pane.listed) == 2)
    assert "Folder “notes” added" in pane.notice.text()
    assert all("from a folder source" in fmt.meta_text(d) for d in pane.listed)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # only read
    pane.add_folder(request)  # the same folder again: refused, said in place
    settle(qt_loop, pane_context, until=lambda: bool(pane.banner.text))
    assert "not added" in pane.banner.text


def test_without_folder_sources_a_dropped_folder_is_refused(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = AddDocumentDialog(folders=False)
    qtbot.addWidget(dialog)
    drop(dialog, QUrl.fromLocalFile(str(tmp_path)))
    assert dialog.note.text() == FOLDER_NOTE and dialog.folder_request() is None
    assert [dialog.tabs.tabText(i) for i in range(dialog.tabs.count())] == [
        "Files", "Web page", "Text"
    ]  # fmt: skip
    dialog.tabs.setCurrentIndex(1)
    dialog.url.setText("https://example.com/a")
    assert dialog.current_tab() == "url" and len(dialog.requests()) == 1


def test_text_and_url_tabs_make_their_requests(qtbot: QtBot) -> None:
    dialog = AddDocumentDialog()
    qtbot.addWidget(dialog)
    dialog.tabs.setCurrentIndex(3)
    assert dialog.current_tab() == "text"
    assert dialog.requests() == [] and not dialog.add_button.isEnabled()
    dialog.text_title.setText("Standup")
    dialog.text.setPlainText("Alice owns billing.")
    assert dialog.requests() == [DocumentRequest("text", content="Alice owns billing.",
                                                 title="Standup")]  # fmt: skip
    dialog.tabs.setCurrentIndex(2)
    dialog.url.setText(" https://example.com/a ")
    assert dialog.requests() == [DocumentRequest("url", url="https://example.com/a")]


def test_one_agent_never_sees_another_agents_documents(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    theirs = submit(pane_context.service, agent="other")
    pane = open_pane(qtbot, pane_context, qt_loop)
    assert pane.listed == [] and pane.stack.currentWidget() is pane.empty
    run_document_worker(pane_context.service)  # their events reach the bridge too
    settle(qt_loop, pane_context)
    assert theirs not in pane.rows and pane.listed == []
    pane.reveal(document_id=theirs)
    settle(qt_loop, pane_context)
    assert pane.current is None and "not found" in pane.banner.text
