"""The Recall pane over the real facade: rows, badges, why it ranked, filters, no match, scope,
navigation, stale answers, refresh on events, and a GUI thread that never waits for recall."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLineEdit
from pytestqt.qtbot import QtBot

from signet_desktop.config import SignetConfig, WorkspacePaths
from signet_desktop.domain.memory import Actor, MemoryPatch
from signet_desktop.domain.recall import RecallQuery, RecallResult
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest
from signet_desktop.ui.event_bridge import EventBridge
from signet_desktop.ui.pane import PaneContext, discover_panes
from signet_desktop.ui.panes.recall import PANE, RECALL_LIMIT, RecallPane
from signet_desktop.ui.recall_delegate import ROW_ROLE, HitRow
from signet_desktop.ui.tasks import TaskRunner
from tests.ui.conftest import RecordingNavigator

pytestmark = pytest.mark.gui

# Enough unrelated memories that the calibrated lexical score has real IDF to work with
# (docs/RECALL.md, "Known gap: tiny workspaces").
BACKGROUND = (
    "The frontend is written in Svelte", "We deploy on Fridays after the standup",
    "Redis caches sessions for the auth gateway", "The CI runner builds with pnpm workspaces",
    "Nightly backups go to S3 buckets in the EU region", "Kafka retries when traffic spikes",
    "The mobile app ships every two weeks", "OpenTelemetry traces go to the collector",
)  # fmt: skip
POSTGRES = "billing runs on Postgres 16 with logical replication to the analytics replica"
IDEMPOTENCY = "Use idempotency keys on every POST to the billing API"
INVOICES = "billing invoices are rendered as PDF by the nightly job"


def remember(service: SignetService, agent: str = "default") -> dict[str, str]:
    """The background plus three billing memories of different type, who and pinned state."""
    requests = [RememberRequest(text, agent_id=agent) for text in BACKGROUND]
    requests += [
        RememberRequest(POSTGRES, agent_id=agent, type="fact", tags=("infra", "db"),
                        who="alice", project="billing"),
        RememberRequest(IDEMPOTENCY, agent_id=agent, type="decision", tags=("billing",),
                        who="bob", pinned=True),
        RememberRequest(INVOICES, agent_id=agent, type="fact", tags=("billing",), who="bob"),
    ]  # fmt: skip
    outcomes = service.memories.remember_many(requests, Actor())
    return {o.memory.content: o.memory.id for o in outcomes}


@pytest.fixture
def pane(qtbot: QtBot, pane_context: PaneContext) -> Iterator[RecallPane]:
    widget = RecallPane(pane_context)
    qtbot.addWidget(widget)
    widget.resize(1000, 600)
    widget.show()
    yield widget
    widget.shutdown()


def settle(loop: asyncio.AbstractEventLoop, pane: RecallPane, action: Callable[[], None]) -> None:
    """Do `action` on the running loop, then wait until no recall is scheduled or in flight."""

    async def go() -> None:
        action()
        while pane.refresh_scheduled or pane.context.tasks.pending:
            await pane.context.tasks.wait_idle()
            await asyncio.sleep(0.01)

    loop.run_until_complete(asyncio.wait_for(go(), timeout=20))


def search(loop: asyncio.AbstractEventLoop, pane: RecallPane, text: str) -> None:
    pane.query_box.setText(text)
    settle(loop, pane, pane.run_query)


def rows(pane: RecallPane) -> list[HitRow]:
    model = pane.model
    return [model.data(model.index(i), ROW_ROLE) for i in range(model.rowCount())]


def contents(pane: RecallPane) -> list[str]:
    return [row.hit.memory.content for row in rows(pane)]


def test_the_pane_registers_itself() -> None:
    assert PANE in discover_panes()
    assert (PANE.key, PANE.title, PANE.icon, PANE.order, PANE.shortcut) == (
        "recall", "Recall", "recall.svg", 10, "Ctrl+1"
    )  # fmt: skip


def test_before_a_search_the_pane_says_what_to_type(pane: RecallPane) -> None:
    assert pane.stack.currentWidget() is pane.empty
    assert pane.empty.title_label.text() == "Search your memories"
    assert "Enter runs the search" in pane.empty.hint_label.text()
    assert pane.model.rowCount() == 0


def test_recall_lists_rows_with_meta_badges_and_summary(
    pane: RecallPane, service: SignetService, qt_loop: asyncio.AbstractEventLoop
) -> None:
    remember(service)
    search(qt_loop, pane, "which database does billing use?")
    assert pane.stack.currentIndex() == 2
    found = contents(pane)
    assert set(found) >= {POSTGRES, IDEMPOTENCY, INVOICES}
    assert not set(found) & set(BACKGROUND)
    by_text = {row.hit.memory.content: row for row in rows(pane)}
    postgres = by_text[POSTGRES]
    assert postgres.meta == "fact · infra, db · alice · billing · just now"
    assert by_text[IDEMPOTENCY].meta.startswith("decision · pinned · billing · bob · ")
    assert postgres.badges == ("keyword",)  # lexical only: this service has no embedder
    scores = [row.hit.score for row in rows(pane)]
    assert scores == sorted(scores, reverse=True)
    summary = pane.summary.text()
    assert summary.startswith(f"{len(found)} results · ") and " ms" in summary
    assert summary.endswith("vectors unavailable")  # said, not hidden
    assert "no embedder" in pane.summary.toolTip()
    assert pane.model.data(pane.model.index(0), Qt.ItemDataRole.ToolTipRole).startswith("score ")


def test_the_explanation_shows_channel_rank_score_and_the_who_boost(
    pane: RecallPane, service: SignetService, qt_loop: asyncio.AbstractEventLoop
) -> None:
    remember(service)
    search(qt_loop, pane, "what did alice say about billing")
    first = pane.selected_hit()  # the first row is selected when results arrive
    assert first is not None and first.memory.content == POSTGRES
    row = rows(pane)[0]
    assert row.badges == ("keyword", "context")
    lexical = first.channels["lexical"]
    lines = pane.explanation.text().splitlines()
    assert lines[0] == f"keyword #{lexical.rank} {lexical.score:.2f}"
    assert lines[1] == "who +0.15 names alice"
    assert lines[2] == "session +0.00"
    assert lines[3] == f"score {first.score:.2f}"
    assert pane.explanation.open_button.isEnabled()
    pane.results.setCurrentIndex(pane.model.index(1))
    second = pane.selected_hit()
    assert second is not None and second.memory.content != POSTGRES
    assert pane.explanation.text().splitlines()[1] == "who +0.00"


def test_vector_badges_come_from_the_semantic_channel(
    qtbot: QtBot, qapp: QApplication, tmp_path: Path, qt_loop: asyncio.AbstractEventLoop
) -> None:
    paths = WorkspacePaths.for_root(tmp_path / "vec")
    paths.ensure()
    options = BuildOptions(embedder=HashEmbedder(384), inline_vectors=True)
    service = build_service(paths, SignetConfig(), options)
    bridge, tasks = EventBridge(service.events), TaskRunner()
    context = PaneContext(service, bridge, tasks, RecordingNavigator(), tmp_path / "vec")
    widget = RecallPane(context)
    qtbot.addWidget(widget)
    try:
        remember(service)
        search(qt_loop, widget, "billing runs on Postgres 16")
        first = rows(widget)[0]
        assert first.hit.memory.content == POSTGRES
        assert set(first.badges) >= {"keyword", "vector"}
        assert "vector #" in widget.explanation.text()
        assert "vectors" not in widget.summary.text()  # complete: nothing to warn about
    finally:
        widget.shutdown()
        tasks.cancel_all()
        bridge.close()
        service.close()


@pytest.mark.parametrize(
    ("set_filter", "expected"),
    [
        (lambda p: p.filters.type_box.setCurrentText("decision"), {IDEMPOTENCY}),
        (lambda p: p.filters.pinned_box.setCurrentText("Pinned only"), {IDEMPOTENCY}),
        (lambda p: p.filters.pinned_box.setCurrentText("Not pinned"), {POSTGRES, INVOICES}),
        (lambda p: _typed(p.filters.who_edit, "bob"), {IDEMPOTENCY, INVOICES}),
        (lambda p: _typed(p.filters.tags_edit, "infra, db"), {POSTGRES}),
        (lambda p: _typed(p.filters.project_edit, "billing"), {POSTGRES}),
    ],
    ids=["type", "pinned", "not-pinned", "who", "tags", "project"],
)
def test_filters_narrow_the_results(
    pane: RecallPane,
    service: SignetService,
    qt_loop: asyncio.AbstractEventLoop,
    set_filter: Callable[[RecallPane], None],
    expected: set[str],
) -> None:
    remember(service)
    search(qt_loop, pane, "billing")
    assert set(contents(pane)) == {POSTGRES, IDEMPOTENCY, INVOICES}
    settle(qt_loop, pane, lambda: set_filter(pane))  # a changed filter re-runs the query
    assert set(contents(pane)) == expected
    assert pane.filters_button.text() == "Filters (1)"
    settle(qt_loop, pane, pane.filters.clear)
    assert set(contents(pane)) == {POSTGRES, IDEMPOTENCY, INVOICES}
    assert pane.filters_button.text() == "Filters"


def _typed(edit: QLineEdit, text: str) -> None:
    edit.setText(text)
    edit.editingFinished.emit()


def test_a_time_range_in_the_future_finds_nothing_and_says_filters_narrow_it(
    pane: RecallPane, service: SignetService, qt_loop: asyncio.AbstractEventLoop
) -> None:
    remember(service)
    search(qt_loop, pane, "billing")
    assert pane.model.rowCount() == 3

    def future_range() -> None:
        today = pane.filters.start_edit.date().currentDate()
        pane.filters.start_edit.setDate(today.addDays(5))
        pane.filters.end_edit.setDate(today.addDays(9))
        pane.filters.time_box.setCurrentText("Custom range…")

    settle(qt_loop, pane, future_range)
    assert pane.model.rowCount() == 0
    assert pane.stack.currentWidget() is pane.no_match
    assert "1 filter is narrowing the search" in pane.no_match.hint_label.text()
    settle(qt_loop, pane, lambda: pane.filters.time_box.setCurrentText("Past 24 hours"))
    assert pane.model.rowCount() == 3


def test_nonsense_says_no_match(
    pane: RecallPane, service: SignetService, qt_loop: asyncio.AbstractEventLoop
) -> None:
    remember(service)
    search(qt_loop, pane, "zxqv wibble")
    assert pane.stack.currentWidget() is pane.no_match
    assert pane.no_match.title_label.text() == (
        "No match for 'zxqv wibble' — try fewer or other words."
    )
    assert pane.summary.text().startswith("0 results · ")
    assert not pane.map_all_button.isEnabled()
    assert not pane.explanation.open_button.isEnabled()


def test_errors_show_inline_and_the_next_search_clears_them(
    pane: RecallPane, service: SignetService, qt_loop: asyncio.AbstractEventLoop
) -> None:
    remember(service)
    pane.filters.tags_edit.setText(",".join(f"t{i}" for i in range(11)))  # the core allows 10
    search(qt_loop, pane, "billing")
    assert not pane.banner.isHidden()
    assert "at most 10 tag filters" in pane.banner.text_label.text()
    pane.filters.tags_edit.clear()
    search(qt_loop, pane, "billing")
    assert pane.banner.isHidden()
    assert pane.model.rowCount() == 3


def test_reveal_with_a_query_fills_the_box_and_runs_it(
    pane: RecallPane, service: SignetService, qt_loop: asyncio.AbstractEventLoop
) -> None:
    remember(service)
    settle(qt_loop, pane, lambda: pane.reveal(query="idempotency keys"))
    assert pane.query_box.text() == "idempotency keys"
    assert contents(pane)[0] == IDEMPOTENCY


def test_enter_in_the_box_searches_and_down_then_enter_opens_the_memory(
    qtbot: QtBot,
    pane: RecallPane,
    service: SignetService,
    navigator: RecordingNavigator,
    qt_loop: asyncio.AbstractEventLoop,
) -> None:
    ids = remember(service)
    pane.query_box.setText("idempotency keys")
    settle(qt_loop, pane, lambda: qtbot.keyClick(pane.query_box, Qt.Key.Key_Return))
    assert contents(pane)[0] == IDEMPOTENCY
    qtbot.keyClick(pane.query_box, Qt.Key.Key_Down)
    assert pane.results.currentIndex().row() == 0
    qtbot.keyClick(pane.results, Qt.Key.Key_Return)
    assert navigator.opened == [ids[IDEMPOTENCY]]


def test_open_memory_and_show_on_map_ask_the_navigator_with_the_right_ids(
    pane: RecallPane,
    service: SignetService,
    navigator: RecordingNavigator,
    qt_loop: asyncio.AbstractEventLoop,
) -> None:
    ids = remember(service)
    search(qt_loop, pane, "billing")
    pane.results.setCurrentIndex(pane.model.index(1))
    selected = pane.selected_hit()
    assert selected is not None
    pane.explanation.open_button.click()
    pane.explanation.map_button.click()
    pane.map_all_button.click()
    assert navigator.opened == [selected.memory.id]
    shown = [hit.memory.id for hit in pane.model.hits()]
    assert set(shown) == {ids[POSTGRES], ids[IDEMPOTENCY], ids[INVOICES]}
    assert navigator.panes == [
        ("map", {"highlight": [selected.memory.id]}),
        ("map", {"highlight": shown}),
    ]


def test_an_older_answer_never_overwrites_a_newer_query(
    pane: RecallPane,
    service: SignetService,
    qt_loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    remember(service)
    real = service.recall.search
    second_done = threading.Event()

    def first_slower(query: RecallQuery) -> RecallResult:
        result = real(query)
        if query.query == "idempotency keys":
            assert second_done.wait(10)  # answer only after the newer query has answered
        else:
            second_done.set()
        return result

    monkeypatch.setattr(service.recall, "search", first_slower)
    finished: list[str] = []
    pane.recall_finished.connect(lambda: finished.append(pane.summary.text()))

    def two_queries() -> None:
        pane.query_box.setText("idempotency keys")
        pane.run_query()
        pane.query_box.setText("logical replication")
        pane.run_query()

    settle(qt_loop, pane, two_queries)
    assert second_done.is_set()
    assert contents(pane) == [POSTGRES]
    assert len(finished) == 1  # the stale answer was dropped, not shown then replaced


def test_the_gui_loop_keeps_ticking_while_recall_runs(
    pane: RecallPane,
    service: SignetService,
    qt_loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    remember(service)
    real = service.recall.search
    threads: list[threading.Thread] = []

    def slow(query: RecallQuery) -> RecallResult:
        threads.append(threading.current_thread())
        time.sleep(0.4)  # a slow recall (cold model, big workspace)
        return real(query)

    monkeypatch.setattr(service.recall, "search", slow)
    gaps: list[float] = []

    async def scenario() -> None:
        stop = asyncio.Event()

        async def heartbeat() -> None:
            last = time.perf_counter()
            while not stop.is_set():
                await asyncio.sleep(0.005)
                now = time.perf_counter()
                gaps.append(now - last)
                last = now

        beat = asyncio.ensure_future(heartbeat())
        pane.query_box.setText("billing")
        pane.run_query()
        await pane.context.tasks.wait_idle()
        stop.set()
        await beat

    qt_loop.run_until_complete(scenario())
    assert threads and threads[0] is not threading.main_thread()
    assert sum(gaps) >= 0.4 and len(gaps) >= 20  # ticked all through the 0.4 s recall
    assert max(gaps) < 0.2
    assert pane.model.rowCount() == 3


def test_a_pane_of_agent_a_never_shows_agent_b(
    qtbot: QtBot,
    service: SignetService,
    pane_context: PaneContext,
    qt_loop: asyncio.AbstractEventLoop,
) -> None:
    ids_a = remember(service, "a")
    ids_b = remember(service, "b")
    context = PaneContext(
        service, pane_context.events, pane_context.tasks, pane_context.navigator,
        pane_context.workspace, agent_id="a",
    )  # fmt: skip
    widget = RecallPane(context)
    qtbot.addWidget(widget)
    search(qt_loop, widget, "billing")
    shown = {hit.memory.id for hit in widget.model.hits()}
    assert shown == {ids_a[POSTGRES], ids_a[IDEMPOTENCY], ids_a[INVOICES]}
    assert not shown & set(ids_b.values())
    # agent b's edits never make agent a's pane re-run
    finished: list[int] = []
    widget.recall_finished.connect(lambda: finished.append(1))
    service.memories.forget("b", ids_b[INVOICES], reason="test", actor=Actor())
    assert not widget.refresh_scheduled
    widget.shutdown()


def test_results_refresh_when_a_shown_memory_is_updated_or_deleted(
    pane: RecallPane, service: SignetService, qt_loop: asyncio.AbstractEventLoop
) -> None:
    ids = remember(service)
    search(qt_loop, pane, "billing")
    pane.results.setCurrentIndex(pane.model.index(pane.model.row_of(ids[INVOICES])))
    finished: list[int] = []
    pane.recall_finished.connect(lambda: finished.append(1))

    # not shown: no re-run
    service.memories.forget("default", _id_of(service, BACKGROUND[0]), reason="t", actor=Actor())
    assert not pane.refresh_scheduled

    patch = MemoryPatch(tags=("billing", "pdf"))
    settle(qt_loop, pane, lambda: _modify(service, ids[INVOICES], patch))
    assert finished == [1]
    row = rows(pane)[pane.model.row_of(ids[INVOICES])]
    assert row.meta.startswith("fact · billing, pdf · bob")
    selected = pane.selected_hit()
    assert selected is not None and selected.memory.id == ids[INVOICES]  # selection kept

    settle(qt_loop, pane, lambda: _forget(service, ids[POSTGRES]))
    assert finished == [1, 1]
    assert POSTGRES not in contents(pane)
    assert set(contents(pane)) == {IDEMPOTENCY, INVOICES}


def _id_of(service: SignetService, content: str) -> str:
    page = service.memories.list_page("default", limit=100)
    return next(m.id for m in page.memories if m.content == content)


def _modify(service: SignetService, memory_id: str, patch: MemoryPatch) -> None:
    service.memories.modify(
        "default", memory_id, patch, reason="tagging", if_version=None, actor=Actor()
    )


def _forget(service: SignetService, memory_id: str) -> None:
    service.memories.forget("default", memory_id, reason="wrong", actor=Actor())


def test_the_pane_shows_exactly_what_every_other_surface_gets(
    pane: RecallPane, service: SignetService, qt_loop: asyncio.AbstractEventLoop
) -> None:
    """The pane's rows are `service.recall.search` for its query, in order, scores and all
    (tests/integration/test_one_recall.py proves HTTP, hooks, the CLI and MCP return that)."""
    remember(service)
    text = "billing invoices postgres"
    search(qt_loop, pane, text)
    query = RecallQuery(text, agent_id=pane.context.agent_id, limit=RECALL_LIMIT)
    direct = service.recall.search(query)
    shown = [(row.hit.memory.id, row.hit.score) for row in rows(pane)]
    assert len(shown) >= 3
    assert shown == [(hit.memory.id, hit.score) for hit in direct.hits]


def test_a_session_turn_is_listed_after_the_memories_and_opens_the_transcripts_pane(
    pane: RecallPane,
    service: SignetService,
    navigator: RecordingNavigator,
    qt_loop: asyncio.AbstractEventLoop,
) -> None:
    from signet_desktop.domain.sessions import Turn

    remember(service)
    said = [
        Turn("u", "user", "what about the ledger?", "2026-11-29T09:00:00Z"),
        Turn("a", "assistant", "the billing ledger export runs at 02:00 UTC", None),
    ]
    service.transcripts.capture("default", "cc-ledger", "claude-code", said, project="billing")
    search(qt_loop, pane, "billing ledger export")
    kinds = [row.turn is not None for row in rows(pane)]
    assert True in kinds and kinds == sorted(kinds)  # memories first, then turns
    index = kinds.index(True)
    turn_row = rows(pane)[index]
    assert turn_row.badges == ("transcript",)
    assert "session cc-ledger · turn 2 of 2" in turn_row.meta
    assert "said by assistant" in turn_row.meta and "ledger export" in turn_row.preview
    pane.results.setCurrentIndex(pane.model.index(index))
    assert pane.explanation.open_button.text() == "Open session"
    assert "transcript #1" in pane.explanation.text()
    pane.explanation.open_button.click()
    assert navigator.panes == [("transcripts", {"session_key": "cc-ledger", "turn": 1})]
    assert navigator.opened == []
    assert "cc-ledger" not in " ".join(pane.model.ids())  # the map gets memories only
