"""Past results in the Recall pane: from the opt-in telemetry ledger, compared with now."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from signet_desktop.config import SignetConfig, WorkspacePaths
from signet_desktop.domain.memory import Actor
from signet_desktop.domain.telemetry import SearchRecord, SearchResultEntry
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest
from signet_desktop.ui.event_bridge import EventBridge
from signet_desktop.ui.pane import PaneContext
from signet_desktop.ui.panes.recall import RecallPane
from signet_desktop.ui.recall_history import DISABLED_TIP, history_rows
from signet_desktop.ui.tasks import TaskRunner
from tests.ui.conftest import RecordingNavigator
from tests.ui.test_recall_pane import BACKGROUND, search, settle

pytestmark = pytest.mark.gui


def record(*ids: str, count: int | None = None) -> SearchRecord:
    entries = tuple(SearchResultEntry(i, 0.5, "keyword") for i in ids)
    n = len(ids) if count is None else count
    return SearchRecord("r", "default", None, "q", None, "keyword", n, 3.2, entries,
                        "2026-12-01T10:00:00.000Z")  # fmt: skip


def test_history_rows_compare_each_run_with_now() -> None:
    rows = history_rows(
        [record("a", "b"), record("a", "c"), record("b", "a")], ["a", "b"], {"a": "alpha text"}
    )
    assert [r.change for r in rows] == [
        "same results as now", "+1 new now, 1 no longer found", "same results, other order"
    ]  # fmt: skip
    assert rows[0].when == "2026-12-01 10:00:00"
    assert rows[0].summary == "2 results · keyword · 3 ms"
    assert rows[0].top == ("0.50  alpha text", "0.50  b")


@pytest.fixture
def recording(tmp_path: Path) -> Iterator[SignetService]:
    config = SignetConfig.model_validate({"search": {"telemetry": {"enabled": True}}})
    paths = WorkspacePaths.for_root(tmp_path / "ws")
    built = build_service(paths, config, BuildOptions(no_embedder=True))
    yield built
    built.close()


def make_pane(qtbot: QtBot, service: SignetService, tmp_path: Path) -> RecallPane:
    context = PaneContext(service, EventBridge(service.events), TaskRunner(),
                          RecordingNavigator(), tmp_path, "http://127.0.0.1:3850")  # fmt: skip
    pane = RecallPane(context)
    qtbot.addWidget(pane)
    pane.show()
    return pane


def test_past_results_show_earlier_runs(
    qtbot: QtBot, recording: SignetService, tmp_path: Path, qt_loop: asyncio.AbstractEventLoop
) -> None:
    requests = [RememberRequest(text) for text in BACKGROUND]
    requests.append(RememberRequest("billing runs on Postgres 16"))
    recording.memories.remember_many(requests, Actor())
    pane = make_pane(qtbot, recording, tmp_path)
    try:
        search(qt_loop, pane, "billing postgres")
        assert pane.history_button.isEnabled()
        recording.memories.remember(RememberRequest("billing uses Postgres replicas"), Actor())
        search(qt_loop, pane, "billing postgres")
        settle(qt_loop, pane, pane.show_history)
        dialog = pane.history_dialog
        assert dialog is not None and dialog.tree.topLevelItemCount() == 1
        earlier = dialog.tree.topLevelItem(0)
        assert earlier.text(2) == "+1 new now, 0 no longer found"
        assert "billing runs on Postgres 16" in earlier.child(0).text(1)
        dialog.close()
    finally:
        pane.shutdown()
        pane.context.tasks.cancel_all()
        pane.context.events.close()


def test_without_telemetry_the_button_says_how_to_turn_it_on(
    qtbot: QtBot, service: SignetService, tmp_path: Path, qt_loop: asyncio.AbstractEventLoop
) -> None:
    service.memories.remember_many([RememberRequest(t) for t in BACKGROUND], Actor())
    pane = make_pane(qtbot, service, tmp_path)
    try:
        search(qt_loop, pane, "backups")
        assert not pane.history_button.isEnabled()
        assert pane.history_button.toolTip() == DISABLED_TIP
    finally:
        pane.shutdown()
        pane.context.tasks.cancel_all()
        pane.context.events.close()
