"""Import from the Transcripts pane: start a run, watch it, list sources, preview a removal.

Over the real facade and the real Claude Code importer, with HOME moved to a temporary
folder holding a Claude Code history; only the confirmation dialog is replaced.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from signet_desktop.config import SignetConfig, WorkspacePaths
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from signet_desktop.ui.import_panel import ImportPanel, kind_label, purge_text
from signet_desktop.ui.pane import PaneContext
from signet_desktop.ui.panes.transcripts import TranscriptsPane
from tests.ui.memory_support import settle

pytestmark = pytest.mark.gui

SESSIONS = ("0b9c6d1e-1111-4a2b-9c3d-000000000001", "0b9c6d1e-2222-4a2b-9c3d-000000000002")


def write_history(home: Path) -> None:
    """Two finished Claude Code sessions, last touched a day ago."""
    folder = home / ".claude" / "projects" / "-work-billing"
    folder.mkdir(parents=True)
    day_ago = time.time() - 86_400
    for number, session in enumerate(SESSIONS):
        lines = [
            {"type": "user", "uuid": f"u{number}", "parentUuid": None, "sessionId": session,
             "cwd": "/work/billing", "timestamp": "2026-11-30T10:00:00Z",
             "message": {"role": "user", "content": f"question {number} about the ledger"}},
            {"type": "assistant", "uuid": f"a{number}", "parentUuid": f"u{number}",
             "sessionId": session, "cwd": "/work/billing", "timestamp": "2026-11-30T10:00:05Z",
             "message": {"role": "assistant",
                         "content": [{"type": "text", "text": f"answer {number}"}]}},
        ]  # fmt: skip
        path = folder / f"{session}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        os.utime(path, (day_ago, day_ago))


@pytest.fixture
def service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SignetService]:
    home = tmp_path / "home"
    home.mkdir()
    write_history(home)
    monkeypatch.setenv("HOME", str(home))
    paths = WorkspacePaths.for_root(tmp_path / "ws")
    paths.ensure()
    built = build_service(paths, SignetConfig(), BuildOptions(no_embedder=True))
    yield built
    built.imports.close()
    built.close()


def open_pane(
    qtbot: QtBot, context: PaneContext, loop: asyncio.AbstractEventLoop
) -> TranscriptsPane:
    pane = TranscriptsPane(context)
    qtbot.addWidget(pane)
    pane.resize(1200, 700)
    pane.show()
    pane.activated()
    settle(loop, context)
    return pane


def rows(panel: ImportPanel) -> list[list[str]]:
    table = panel.table
    return [
        [table.topLevelItem(i).text(c) for c in range(table.columnCount())]
        for i in range(table.topLevelItemCount())
    ]


def test_the_import_menu_lists_every_kind_the_service_has(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    pane = open_pane(qtbot, pane_context, qt_loop)
    labels = [a.text() for a in pane.import_panel.import_menu.actions()]
    assert labels == [kind_label(k) for k in pane_context.service.imports.kinds]
    assert "Claude Code history" in labels and "Codex history" in labels


def test_an_empty_pane_offers_import_and_an_import_fills_the_sessions(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    pane = open_pane(qtbot, pane_context, qt_loop)
    panel = pane.import_panel
    assert pane.stack.currentWidget() is pane.empty
    assert panel.isVisible() and pane.sources_toggle.isChecked()  # offered at once
    settle(qt_loop, pane_context, until=lambda: panel.empty.isVisible())
    panel.start_import("claude-code")
    settle(qt_loop, pane_context, until=lambda: "Import finished" in panel.status.text())
    assert panel.status.text() == "Import finished: 2 sessions, 4 turns"
    assert not panel.progress.isVisible()
    settle(qt_loop, pane_context, until=lambda: bool(rows(panel)))
    (row,) = rows(panel)
    assert row[1:4] == ["Claude Code history", "2", "4"] and row[5] == "completed"
    settle(qt_loop, pane_context, until=lambda: len(pane.model.keys()) == 2)
    assert set(pane.model.keys()) == set(SESSIONS)
    assert pane.stack.currentWidget() is pane.splitter


def test_a_second_import_adds_nothing_and_says_so(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    pane = open_pane(qtbot, pane_context, qt_loop)
    panel = pane.import_panel
    pane_context.service.imports.start("default", "claude-code", wait=True)
    panel.start_import("claude-code")
    settle(qt_loop, pane_context, until=lambda: "Import finished" in panel.status.text())
    assert panel.status.text() == "Import finished: 0 sessions, 0 turns"


def test_remove_shows_the_preview_and_cancel_purges_nothing(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    service = pane_context.service
    service.imports.start("default", "claude-code", wait=True)
    pane = open_pane(qtbot, pane_context, qt_loop)
    panel = pane.import_panel
    pane.show_sources()
    settle(qt_loop, pane_context, until=lambda: bool(rows(panel)))
    asked: list[str] = []
    panel.confirm = lambda _title, text: asked.append(text) is not None and False
    panel.table.topLevelItem(0).setSelected(True)
    assert panel.remove_button.isEnabled()
    panel.remove_selected()
    settle(qt_loop, pane_context, until=lambda: bool(asked))
    assert "session transcripts: 2" in asked[0] and "are not touched" in asked[0]
    assert service.transcripts.sessions("default").total == 2  # cancelled: nothing purged

    panel.confirm = lambda _title, _text: True
    panel.remove_selected()
    settle(qt_loop, pane_context, until=lambda: panel.status.text().startswith("Removed"))
    assert service.transcripts.sessions("default").total == 0
    settle(qt_loop, pane_context, until=lambda: panel.empty.isVisible())
    assert rows(panel) == []


def test_a_refused_import_shows_its_reason(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    pane = open_pane(qtbot, pane_context, qt_loop)
    panel = pane.import_panel
    panel.start_import("claude-code", str(Path.home() / "missing"))
    settle(qt_loop, pane_context, until=lambda: panel.banner.isVisible())
    assert panel.banner.text == f"{Path.home() / 'missing'} does not exist"
    assert not panel.progress.isVisible() and panel.status.text() == ""


def test_purge_text_lists_only_what_is_there() -> None:
    assert purge_text({"session_transcripts": 2, "staged_files": 0}) == ("  session transcripts: 2")
    assert purge_text({}) == "  nothing besides the source itself"
