"""The Memories pane over the real facade: paging, filters, sort, reveal, events and scope."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from signet_desktop.domain.browse import BrowseQuery
from signet_desktop.domain.memory import MemoryPatch
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest
from signet_desktop.ui.memory_table_model import COLUMNS, PAGE_SIZE, PLACEHOLDER
from signet_desktop.ui.pane import PaneContext, discover_panes
from signet_desktop.ui.panes.memories import PANE, MemoriesPane
from tests.ui.memory_support import ELSEWHERE, fill, settle

pytestmark = pytest.mark.gui

COLUMN = {name: number for number, (name, _title) in enumerate(COLUMNS)}


def open_pane(qtbot: QtBot, context: PaneContext, loop: asyncio.AbstractEventLoop) -> MemoriesPane:
    pane = MemoriesPane(context)
    qtbot.addWidget(pane)
    pane.resize(1200, 700)
    pane.show()
    pane.activated()
    settle(loop, context, until=lambda: pane.model.has_loaded)
    return pane


def cell(pane: MemoriesPane, row: int, column: str) -> str:
    return str(pane.model.data(pane.model.index(row, COLUMN[column])))


def test_the_pane_registers_itself() -> None:
    spec = next(spec for spec in discover_panes() if spec.key == "memories")
    assert spec == PANE
    assert (spec.title, spec.icon, spec.order, spec.shortcut) == (
        "Memories",
        "memories.svg",
        20,
        "Ctrl+2",
    )


def test_empty_store_shows_what_to_do_and_the_first_memory_arrives_by_event(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    pane = open_pane(qtbot, pane_context, qt_loop)
    assert pane.stack.currentWidget() is pane.empty
    assert "signet remember" in pane.empty.hint_label.text()
    assert "POST /api/memory/remember" in pane.empty.hint_label.text()

    pane_context.service.memories.remember(
        RememberRequest(content="billing runs on Postgres 16"), ELSEWHERE
    )
    settle(qt_loop, pane_context, until=lambda: pane.model.total == 1)
    assert pane.stack.currentWidget() is pane.splitter
    assert cell(pane, 0, "content") == "billing runs on Postgres 16"
    assert pane.count_label.text() == "1 memory"


def test_pages_are_fetched_when_rows_are_shown(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    ids = fill(pane_context.service, 2 * PAGE_SIZE + 50)
    pane = open_pane(qtbot, pane_context, qt_loop)
    model = pane.model
    assert model.total == len(ids) and pane.count_label.text() == f"{len(ids)} memories"
    assert model.cached_pages() == (0,)
    newest = len(ids) - 1  # 249: a multiple of 3, so "billing"
    assert cell(pane, 0, "content") == f"memory number {newest:04d} about billing"

    last = model.total - 1
    assert cell(pane, last, "content") == PLACEHOLDER  # not fetched yet: asks for its page
    settle(qt_loop, pane_context, until=lambda: model.memory_at(last) is not None)
    assert cell(pane, last, "content") == "memory number 0000 about billing"
    assert 1 not in model.cached_pages()  # only the page shown was read

    pane.table.scrollToBottom()
    settle(qt_loop, pane_context)
    assert 2 in model.cached_pages()
    fetched = [model.memory_at(row) for row in range(2 * PAGE_SIZE, model.total)]
    expected = pane_context.service.memories.browse("default", BrowseQuery(), 50, 2 * PAGE_SIZE)
    assert fetched == expected


def test_filters_narrow_the_table_in_sql(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    fill(pane_context.service, 120)
    pane = open_pane(qtbot, pane_context, qt_loop)
    model = pane.model

    def rows() -> list[str]:
        return [cell(pane, row, "content") for row in range(model.total)]

    def apply() -> None:
        pane.apply_filters()
        settle(qt_loop, pane_context)

    pane.text_filter.setText("NUMBER 011")  # contains, case-insensitive
    apply()
    assert rows() == [f"memory number 011{d} about {'billing' if d % 3 == 1 else 'search'}"
                      for d in range(9, -1, -1)]  # fmt: skip
    assert pane.count_label.text() == "10 match"

    pane.clear_filters()
    settle(qt_loop, pane_context)
    pane.type_filter.setCurrentIndex(pane.type_filter.findData("decision"))  # applies at once
    settle(qt_loop, pane_context)
    assert model.total == 24 and {cell(pane, r, "type") for r in range(model.total)} == {"decision"}

    pane.tag_filter.setText("infra")
    pane.who_filter.setText("alice")
    apply()
    assert model.total == 6  # n % 20 == 0
    assert all(cell(pane, r, "tags") == "infra" for r in range(model.total))

    pane.clear_filters()
    settle(qt_loop, pane_context)
    pane.pinned_filter.setCurrentIndex(pane.pinned_filter.findData(True))
    settle(qt_loop, pane_context)
    assert rows() == ["memory number 0100 about search", "memory number 0050 about search",
                      "memory number 0000 about billing"]  # fmt: skip

    pane.clear_filters()
    pane.project_filter.setText("nothing like this")
    apply()
    assert model.total == 0
    assert pane.count_label.text() == "No memory matches these filters"
    assert pane.stack.currentWidget() is pane.splitter  # filters, not an empty store


def test_header_click_sorts_the_whole_store(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    fill(pane_context.service, 230)
    pane = open_pane(qtbot, pane_context, qt_loop)
    pane.table.sortByColumn(COLUMN["importance"], Qt.SortOrder.AscendingOrder)
    settle(qt_loop, pane_context)
    assert (pane.model.query.sort, pane.model.query.descending) == ("importance", False)
    assert cell(pane, 0, "importance") == "0.00"
    assert cell(pane, 0, "content") == "memory number 0000 about billing"  # ties: oldest first

    pane.table.sortByColumn(COLUMN["who"], Qt.SortOrder.DescendingOrder)
    settle(qt_loop, pane_context)
    last = pane.model.total - 1
    pane.model.data(pane.model.index(last, 0))
    settle(qt_loop, pane_context, until=lambda: pane.model.memory_at(last) is not None)
    assert cell(pane, 0, "who") == "bob" and cell(pane, last, "who") == "alice"


def test_reveal_selects_a_memory_beyond_the_loaded_pages(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    ids = fill(pane_context.service, 2 * PAGE_SIZE + 50)
    pane = open_pane(qtbot, pane_context, qt_loop)
    target = ids[10]  # row 439, page 2
    pane.reveal(memory_id=target)
    settle(qt_loop, pane_context, until=lambda: pane.detail.memory is not None)
    settle(qt_loop, pane_context)
    assert pane.detail.memory is not None and pane.detail.memory.id == target
    assert pane.detail.content.toPlainText() == "memory number 0010 about search"
    current = pane.table.selectionModel().currentIndex()
    assert current.row() == len(ids) - 1 - 10
    assert pane.model.memory_at(current.row()) == pane.detail.memory
    assert pane.note.isHidden()


def test_reveal_of_a_forgotten_or_unknown_memory_says_so(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    ids = fill(pane_context.service, 5)
    pane_context.service.memories.forget("default", ids[2], reason="wrong", actor=ELSEWHERE)
    pane = open_pane(qtbot, pane_context, qt_loop)

    pane.reveal(memory_id=ids[2])
    settle(qt_loop, pane_context)
    assert pane.detail.memory is not None and pane.detail.memory.is_deleted
    assert "Forgotten" in pane.detail.notice.text
    assert "forgotten" in pane.note.text and "“Forgotten”" in pane.note.text
    assert not pane.table.selectionModel().currentIndex().isValid()

    pane.state_filter.setCurrentIndex(pane.state_filter.findData(True))
    settle(qt_loop, pane_context)
    assert pane.model.total == 1 and pane.count_label.text() == "1 forgotten"

    pane.reveal(memory_id="0b5c3c9e-0000-4000-8000-000000000000")
    settle(qt_loop, pane_context)
    assert pane.detail.memory is None
    assert "was not found" in pane.detail.placeholder.text()
    assert pane.note.isHidden()


def test_selecting_a_row_opens_its_detail(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    ids = fill(pane_context.service, 12)
    pane = open_pane(qtbot, pane_context, qt_loop)
    pane.table.selectRow(3)
    settle(qt_loop, pane_context)
    assert pane.detail.memory is not None and pane.detail.memory.id == ids[-4]
    assert pane.detail.meta.text().startswith("fact · importance 0.80")


def test_moving_onto_a_row_still_loading_opens_it_when_it_arrives(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    ids = fill(pane_context.service, 2 * PAGE_SIZE + 5)
    pane = open_pane(qtbot, pane_context, qt_loop)
    assert pane.model.memory_at(len(ids) - 1) is None
    pane.table.setFocus()
    qtbot.keyClick(pane.table, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    settle(qt_loop, pane_context, until=lambda: pane.detail.memory is not None)
    assert pane.table.selectionModel().currentIndex().row() == len(ids) - 1
    assert pane.detail.memory is not None and pane.detail.memory.id == ids[0]


def test_a_change_from_another_client_updates_table_and_detail(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    ids = fill(pane_context.service, 30)
    pane = open_pane(qtbot, pane_context, qt_loop)
    pane.reveal(memory_id=ids[-1])
    settle(qt_loop, pane_context)
    pane_context.service.memories.modify(
        "default",
        ids[-1],
        MemoryPatch(tags=("infra", "postgres")),
        reason="tagging",
        if_version=None,
        actor=ELSEWHERE,
    )
    settle(qt_loop, pane_context, until=lambda: cell(pane, 0, "tags") == "infra, postgres")
    settle(qt_loop, pane_context)
    assert "tags infra, postgres" in pane.detail.meta.text()
    pane_context.service.memories.forget("default", ids[-1], reason="stale", actor=ELSEWHERE)
    settle(qt_loop, pane_context, until=lambda: pane.model.total == 29)
    settle(qt_loop, pane_context)
    assert cell(pane, 0, "content") == pane_context.service.memories.get("default", ids[-2]).content
    assert pane.detail.memory is not None and pane.detail.memory.is_deleted  # still shown


def test_a_pane_of_agent_a_never_shows_or_touches_agent_b(
    qtbot: QtBot,
    qt_loop: asyncio.AbstractEventLoop,
    pane_context: PaneContext,
    service: SignetService,
) -> None:
    mine = fill(service, 3, agent_id="a")
    theirs = fill(service, 4, agent_id="b")
    context = replace(pane_context, agent_id="a")
    pane = open_pane(qtbot, context, qt_loop)
    assert pane.model.total == 3
    assert {pane.model.memory_at(r).agent_id for r in range(3)} == {"a"}  # type: ignore[union-attr]

    pane.text_filter.setText("memory number")
    pane.apply_filters()
    settle(qt_loop, context)
    assert pane.model.total == 3

    pane.reveal(memory_id=theirs[1])
    settle(qt_loop, context)
    assert pane.detail.memory is None and "was not found" in pane.detail.placeholder.text()
    pane.detail.toggle_pin()
    pane.detail.forget("not mine", force=True)
    settle(qt_loop, context)
    assert not service.memories.get("b", theirs[1]).pinned
    assert service.memories.count("b") == 4

    service.memories.forget("b", theirs[2], reason="b's own", actor=ELSEWHERE)
    assert not pane._refresh_timer.isActive()  # b's event is not this pane's business
    service.memories.forget("a", mine[1], reason="a's own", actor=ELSEWHERE)
    assert pane._refresh_timer.isActive()
    settle(qt_loop, context, until=lambda: pane.model.total == 2)
    assert {pane.model.memory_at(r).agent_id for r in range(2)} == {"a"}  # type: ignore[union-attr]


def test_a_reveal_during_a_burst_of_writes_still_finds_the_memory(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    """Rows reload while the position is looked up: the memory is not reported filtered out."""
    ids = fill(pane_context.service, PAGE_SIZE + 20)
    pane = open_pane(qtbot, pane_context, qt_loop)
    target = ids[5]
    pane.reveal(memory_id=target)
    for i in range(15):  # each publishes memory.created: the model reloads under the lookup
        pane_context.service.memories.remember(
            RememberRequest(content=f"burst note {i}"), ELSEWHERE
        )
    settle(qt_loop, pane_context, until=lambda: pane.detail.memory is not None)
    settle(qt_loop, pane_context)
    current = pane.table.selectionModel().currentIndex()
    assert pane.model.memory_at(current.row()) == pane.detail.memory
    assert pane.detail.memory is not None and pane.detail.memory.id == target
    assert pane.note.isHidden()
