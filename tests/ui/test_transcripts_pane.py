"""The Transcripts pane over the real facade: list, filters, reading, find, search, events."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtGui import QFont, QFontMetrics
from pytestqt.qtbot import QtBot

from signet_desktop.domain.sessions import Turn
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest
from signet_desktop.ui.memory_detail import MemoryDetail
from signet_desktop.ui.pane import PaneContext, discover_panes
from signet_desktop.ui.panes.transcripts import PANE, TranscriptsPane
from signet_desktop.ui.style import DARK, LIGHT
from signet_desktop.ui.transcript_format import excerpt_html, session_date, transcript_html
from signet_desktop.ui.transcript_list import two_lines
from tests.ui.conftest import RecordingNavigator
from tests.ui.memory_support import ELSEWHERE, settle

pytestmark = pytest.mark.gui

BILLING = [
    Turn("b0", "user", "Why is billing slow on the analytics replica?", "2026-11-30T10:02:11Z"),
    Turn("b1", "assistant", "max_wal_senders dropped to 4, so the replica waits.", None),
    Turn("b2", "user", "Set it back to 10 and tell alice.", "2026-11-30T10:05:03Z"),
    Turn("b3", "assistant", "Done: PR #412 puts the replica's sender back.", None),
]
DATA = [
    Turn("d0", "user", "Add a dbt test for ingest lag above fifteen minutes.", None),
    Turn("d1", "assistant", "Added tests/ingest_lag.sql to the nightly run.", None),
]


def capture_two(service: SignetService, agent_id: str = "default") -> None:
    """A completed claude-code session in billing, then an open codex one in data (newest)."""
    transcripts = service.transcripts
    transcripts.capture(agent_id, "cc-billing", "claude-code", BILLING, project="billing",
                        complete=True)  # fmt: skip
    transcripts.capture(agent_id, "cx-data", "codex", DATA, project="data")


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


def listed(pane: TranscriptsPane) -> list[str]:
    return pane.model.keys()


def test_the_pane_registers_itself() -> None:
    spec = next(spec for spec in discover_panes() if spec.key == "transcripts")
    assert spec == PANE
    assert (spec.title, spec.icon, spec.order, spec.shortcut) == (
        "Transcripts",
        "transcripts.svg",
        30,
        "Ctrl+3",
    )


def test_no_sessions_shows_how_they_arrive_and_the_first_capture_arrives_by_event(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    pane = open_pane(qtbot, pane_context, qt_loop)
    assert pane.stack.currentWidget() is pane.empty
    hint = pane.empty.hint_label.text()
    assert "signet install claude-code" in hint
    assert "/api/hooks/claude-code/" in hint
    assert "/api/hooks/session-start" in hint
    assert pane_context.url in hint

    pane_context.service.transcripts.capture("default", "s1", "claude-code", BILLING[:1])
    settle(qt_loop, pane_context, until=lambda: listed(pane) == ["s1"])
    assert pane.stack.currentWidget() is pane.splitter
    settle(qt_loop, pane_context, until=lambda: pane.view.session_key == "s1")


def test_sessions_list_newest_first_with_what_each_row_shows(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    capture_two(pane_context.service)
    pane = open_pane(qtbot, pane_context, qt_loop)
    assert listed(pane) == ["cx-data", "cc-billing"]
    assert pane.count_label.text() == "2 sessions"
    newest, oldest = pane.model.row_at(0), pane.model.row_at(1)
    assert newest is not None and oldest is not None
    # titled by the first prompt, the project (the cwd) below, dated by the first turn
    assert (newest.title, newest.meta, newest.status) == (
        "Add a dbt test for ingest lag above fifteen minutes.",
        "data · codex · 2 turns",
        "open",
    )
    assert (oldest.title, oldest.meta, oldest.status) == (
        "Why is billing slow on the analytics replica?",
        "billing · claude-code · 4 turns",
        "completed",
    )
    assert newest.when.startswith("today ")  # no turn times: when it was captured
    assert oldest.when == session_date("2026-11-30T10:02:11Z")  # its own first turn
    assert oldest.when != newest.when
    # the newest session opens at once
    settle(qt_loop, pane_context, until=lambda: pane.view.session_key == "cx-data")


def test_filters_by_harness_project_and_status(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    capture_two(pane_context.service)
    pane = open_pane(qtbot, pane_context, qt_loop)
    projects = [pane.project_filter.itemData(i) for i in range(pane.project_filter.count())]
    assert {"billing", "data"} <= set(projects)  # the choices grew from the rows read

    pane.harness_filter.setCurrentIndex(pane.harness_filter.findData("codex"))
    settle(qt_loop, pane_context)
    assert listed(pane) == ["cx-data"]
    assert pane.count_label.text() == "1 match"

    pane.harness_filter.setCurrentIndex(0)
    pane.project_filter.setCurrentIndex(pane.project_filter.findData("billing"))
    settle(qt_loop, pane_context)
    assert listed(pane) == ["cc-billing"]

    pane.project_filter.setCurrentIndex(0)
    pane.status_filter.setCurrentIndex(pane.status_filter.findData("open"))
    settle(qt_loop, pane_context)
    assert listed(pane) == ["cx-data"]
    pane.status_filter.setCurrentIndex(pane.status_filter.findData("imported"))
    settle(qt_loop, pane_context)
    assert listed(pane) == []
    assert pane.count_label.text() == "No session matches these filters"
    assert pane.stack.currentWidget() is pane.splitter  # filtered to nothing is not "no sessions"


def test_reading_a_session_shows_its_turns_in_order_with_roles_and_times(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    capture_two(pane_context.service)
    pane = open_pane(qtbot, pane_context, qt_loop)
    pane.sessions.setCurrentIndex(pane.model.index(1, 0))  # click the billing session
    settle(qt_loop, pane_context, until=lambda: pane.view.session_key == "cc-billing")
    settle(qt_loop, pane_context, until=lambda: len(pane.view.turns) == 4)
    view = pane.view
    assert [t.turn_id for t in view.turns] == ["b0", "b1", "b2", "b3"]
    text = view.reader.toPlainText()
    positions = [text.index(turn.text) for turn in BILLING]
    assert positions == sorted(positions)  # in order
    assert text.count("User") == 2 and text.count("Assistant") == 2
    assert "2026-11-30" in text  # a turn's time
    assert view.title.text() == "Why is billing slow on the analytics replica?"  # as listed
    assert view.meta.text().startswith("billing\n")  # the project (cwd) above the facts
    assert "claude-code · completed · 4 turns" in view.meta.text()
    assert "→" in view.meta.text() and "captured" in view.meta.text()  # the turns' own span
    assert "session cc-billing" in view.meta.text()


def test_roles_are_styled_from_the_theme_in_light_and_dark() -> None:
    for theme in (LIGHT, DARK):
        page = transcript_html(BILLING, theme)
        assert theme.accent in page  # the user label
        assert theme.ok in page  # the assistant label
        assert theme.selection in page  # user turns are tinted
    escaped = transcript_html(
        [Turn("x", "user", "<script>alert(1)</script>\n```\ncode\n```")], LIGHT
    )
    assert "<script>" not in escaped and "&lt;script&gt;" in escaped
    assert "<pre" in escaped


def test_find_in_session_highlights_every_match_and_steps_through_them(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    capture_two(pane_context.service)
    pane = open_pane(qtbot, pane_context, qt_loop)
    pane.reveal(session_key="cc-billing")
    settle(qt_loop, pane_context, until=lambda: len(pane.view.turns) == 4)
    view = pane.view
    view.find_box.setText("replica")
    assert view.matches == 3
    assert len(view.reader.extraSelections()) == 3
    assert view.find_count.text() == "1 of 3"
    assert view.reader.textCursor().selectedText().lower() == "replica"
    first = view.reader.textCursor().position()
    view.next_match()
    assert view.find_count.text() == "2 of 3"
    assert view.reader.textCursor().position() > first
    view.previous_match()
    view.previous_match()
    assert view.find_count.text() == "3 of 3"  # wraps around
    view.find_box.setText("zxqv")
    assert view.matches == 0 and view.find_count.text() == "no match"
    assert not view.next_button.isEnabled()
    view.find_box.setText("alice replica")  # not a phrase here: any of its words
    assert view.matches == 4


def test_global_search_shows_excerpts_and_opens_the_session(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    capture_two(pane_context.service)
    pane = open_pane(qtbot, pane_context, qt_loop)
    settle(qt_loop, pane_context, until=lambda: pane.view.session_key == "cx-data")
    pane.search("replica")
    settle(qt_loop, pane_context, until=lambda: pane.results.count() == 1)
    assert pane.left.currentIndex() == 1
    assert "replica" in pane.results_label.text()
    label = pane.results.itemWidget(pane.results.item(0))
    assert "replica" in label.text() and "billing" in label.text()

    pane.results.setCurrentRow(0)  # click the hit
    settle(qt_loop, pane_context, until=lambda: pane.view.session_key == "cc-billing")
    settle(qt_loop, pane_context, until=lambda: pane.view.matches == 3)
    assert pane.view.find_box.text() == "replica"  # the matches are highlighted there

    pane.search_box.clear()  # back to the sessions list, the opened one selected
    assert pane.left.currentIndex() == 0
    assert pane.sessions.currentIndex().row() == pane.model.row_of("cc-billing")


def test_excerpt_marks_become_escaped_highlights() -> None:
    excerpt = "…the analytics [replica] waits <b> for [max_wal_senders]…"
    page = excerpt_html(excerpt, LIGHT)
    assert "&lt;b&gt;" in page and page.count("<span") == 2


def test_reveal_opens_a_session_and_says_so_when_it_is_not_found(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    capture_two(pane_context.service)
    pane = open_pane(qtbot, pane_context, qt_loop)
    pane.reveal(session_key="cc-billing")
    settle(qt_loop, pane_context, until=lambda: pane.view.session is not None
           and pane.view.session.session_key == "cc-billing")  # fmt: skip
    assert pane.sessions.currentIndex().row() == pane.model.row_of("cc-billing")

    missing: list[str] = []
    pane.view.session_missing.connect(missing.append)
    pane.reveal(session_key="no-such-session")
    settle(qt_loop, pane_context, until=lambda: missing == ["no-such-session"])
    assert pane.view.session is None
    assert "no-such-session was not found" in pane.view.placeholder.text()
    assert pane.view.placeholder.isVisible()
    assert not pane.sessions.currentIndex().isValid()


def test_reveal_of_an_unknown_session_in_an_empty_store_is_said_in_place(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    pane = open_pane(qtbot, pane_context, qt_loop)
    pane.reveal(session_key="gone")
    settle(
        qt_loop, pane_context, until=lambda: "gone was not found" in pane.view.placeholder.text()
    )
    assert pane.stack.currentWidget() is pane.splitter


def test_a_capture_refreshes_the_list_and_the_open_session(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    capture_two(pane_context.service)
    pane = open_pane(qtbot, pane_context, qt_loop)
    pane.reveal(session_key="cc-billing")
    settle(qt_loop, pane_context, until=lambda: len(pane.view.turns) == 4)
    transcripts = pane_context.service.transcripts
    more = [*BILLING, Turn("b4", "user", "Thanks, and the backups?", None)]
    transcripts.capture("default", "cc-billing", "claude-code", more, project="billing")
    settle(qt_loop, pane_context, until=lambda: len(pane.view.turns) == 5)
    assert "and the backups?" in pane.view.reader.toPlainText()
    settle(qt_loop, pane_context, until=lambda: listed(pane)[0] == "cc-billing")  # now newest

    transcripts.capture("default", "oc-new", "opencode", DATA[:1], project="frontend")
    settle(qt_loop, pane_context, until=lambda: "oc-new" in listed(pane))
    assert pane.view.session_key == "cc-billing"  # another session's capture leaves it open
    assert pane.count_label.text() == "3 sessions"


def test_many_captures_in_a_burst_cost_a_few_reads(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    capture_two(pane_context.service)
    pane = open_pane(qtbot, pane_context, qt_loop)
    reads: list[int] = []
    pane.model.loaded.connect(lambda: reads.append(1))
    for n in range(30):
        turns = [Turn(f"t{i}", "user", f"turn {i}", None) for i in range(n + 1)]
        pane_context.service.transcripts.capture("default", "burst", "codex", turns)
    settle(qt_loop, pane_context)
    assert "burst" in listed(pane)
    assert 1 <= len(reads) <= 3


def test_a_pane_of_one_agent_never_lists_another_agents_sessions(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    service = pane_context.service
    capture_two(service, agent_id="b")
    service.transcripts.capture("a", "a-only", "codex", DATA, project="data")
    context = PaneContext(
        service=service,
        events=pane_context.events,
        tasks=pane_context.tasks,
        navigator=pane_context.navigator,
        workspace=pane_context.workspace,
        agent_id="a",
    )
    pane = open_pane(qtbot, context, qt_loop)
    assert listed(pane) == ["a-only"]
    pane.search("replica")  # only b's billing session says it
    settle(qt_loop, context)
    assert pane.results.count() == 0
    assert "No session mentions" in pane.results_label.text()
    missing: list[str] = []
    pane.view.session_missing.connect(missing.append)
    pane.reveal(session_key="cc-billing")
    settle(qt_loop, context, until=lambda: missing == ["cc-billing"])
    service.transcripts.capture("b", "b-more", "codex", DATA)  # b's event is not a's refresh
    settle(qt_loop, context)
    assert listed(pane) == ["a-only"]


def test_memory_detail_opens_the_session_it_came_from(
    qtbot: QtBot,
    qt_loop: asyncio.AbstractEventLoop,
    pane_context: PaneContext,
    navigator: RecordingNavigator,
) -> None:
    memories = pane_context.service.memories
    from_session = memories.remember(
        RememberRequest(content="billing replica needs 10 WAL senders", session_id="cc-billing"),
        ELSEWHERE,
    ).memory
    direct = memories.remember(RememberRequest(content="no session here"), ELSEWHERE).memory
    detail = MemoryDetail(pane_context)
    qtbot.addWidget(detail)
    detail.show()
    detail.show_memory(direct.id)
    settle(qt_loop, pane_context, until=lambda: detail.memory is not None)
    assert not detail.session_button.isVisible()
    detail.show_memory(from_session.id)
    settle(qt_loop, pane_context, until=lambda: detail.memory == from_session
           or (detail.memory is not None and detail.memory.id == from_session.id))  # fmt: skip
    assert detail.session_button.isVisible()
    detail.session_button.click()
    assert navigator.panes == [("transcripts", {"session_key": "cc-billing"})]


def test_reveal_at_a_turn_scrolls_there_and_highlights_the_quote(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    """What the Dreaming and Proposals panes ask for: a cited quote in its session, at its turn."""
    turns = [Turn(f"t{i}", "user" if i % 2 == 0 else "assistant", f"turn {i} " + "text " * 80,
                  None) for i in range(40)]  # fmt: skip
    turns[33] = Turn("t33", "assistant", "The billing database moved to Postgres 16.", None)
    pane_context.service.transcripts.capture("default", "long", "claude-code", turns,
                                             complete=True)  # fmt: skip
    pane = open_pane(qtbot, pane_context, qt_loop)
    pane.resize(900, 500)
    pane.reveal(session_key="long")
    settle(qt_loop, pane_context, until=lambda: len(pane.view.turns) == 40)
    assert pane.view.reader.verticalScrollBar().value() == 0
    bar = pane.view.reader.verticalScrollBar()
    pane.reveal(session_key="long", turn=33)
    settle(qt_loop, pane_context, until=lambda: bar.value() > 0)
    assert bar.value() > bar.maximum() // 2  # turn 34 of 40 is far down the session
    pane.reveal(session_key="long", turn=33, find="moved to Postgres 16")
    settle(qt_loop, pane_context, until=lambda: pane.view.matches == 1)
    assert pane.view.find_box.text() == "moved to Postgres 16"
    pane.reveal(session_key="long", turn=99)  # out of range: opens, no scroll error
    settle(qt_loop, pane_context, until=lambda: pane.view.session is not None)


def test_a_listing_reads_the_first_user_prompt_and_the_first_turn_time(
    pane_context: PaneContext,
) -> None:
    """An import's sessions: the opening turn may be the harness's, a turn may lack a time."""
    turns = [
        Turn("s0", "assistant", "Session restored.", None),
        Turn("s1", "user", "  Rename the\n ledger service  ", "2025-03-04T08:00:00Z"),
        Turn("s2", "user", "and its queue", "2025-03-04T08:01:00Z"),
    ]
    service = pane_context.service
    service.transcripts.capture("default", "imp-1", "codex", turns, project="/src/ledger")
    [listed_row] = service.transcripts.sessions("default").rows
    assert listed_row.first_prompt == "  Rename the\n ledger service  "
    assert listed_row.started_at == "2025-03-04T08:00:00Z"
    assert service.transcripts.get("default", "imp-1").first_prompt is None  # listings only


def test_a_long_title_breaks_onto_two_lines_at_a_space(qapp: object) -> None:
    metrics = QFontMetrics(QFont())
    prompt = "Why does the billing replica lag behind the primary after the nightly vacuum runs?"
    width = metrics.horizontalAdvance("Why does the billing replica")
    first, second = two_lines(metrics, prompt, width)
    assert first == "Why does the billing replica"
    assert second.startswith("lag behind") and second.endswith("…")
    assert metrics.horizontalAdvance(second) <= width
    assert two_lines(metrics, "short", width) == ["short"]
