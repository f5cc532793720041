"""The memory detail: what it shows (pure text functions) and its actions over the real facade."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import TypeVar

import pytest
from PySide6.QtWidgets import QDialog
from pytestqt.qtbot import QtBot

from signet_desktop.domain.memory import MemoryPatch
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest
from signet_desktop.ui.memory_actions import (
    ForgetDialog,
    ImportanceDialog,
    ReasonDialog,
    TagsDialog,
)
from signet_desktop.ui.memory_detail import MemoryDetail
from signet_desktop.ui.memory_format import (
    INSPECTOR_ACTOR,
    actor_name,
    deleted_notice,
    history_rows,
    metadata_line,
    provenance_rows,
)
from signet_desktop.ui.pane import PaneContext
from tests.ui.memory_support import ELSEWHERE, settle

pytestmark = pytest.mark.gui

D = TypeVar("D", bound=QDialog)

CONTENT = "billing runs on Postgres 16 with logical replication to the analytics replica"


@pytest.fixture
def memory_id(service: SignetService) -> str:
    request = RememberRequest(
        content=CONTENT,
        type="fact",
        tags=("infra",),
        who="alice",
        project="billing",
        importance=0.8,
        source_type="claude-code",
        source_id="turn-41",
        session_id="8c35aa01",
    )
    return service.memories.remember(request, ELSEWHERE).memory.id


def open_detail(
    qtbot: QtBot, context: PaneContext, loop: asyncio.AbstractEventLoop, memory_id: str
) -> MemoryDetail:
    detail = MemoryDetail(context)
    qtbot.addWidget(detail)
    detail.resize(700, 600)
    detail.show()
    detail.show_memory(memory_id)
    settle(loop, context, until=lambda: detail.memory is not None)
    return detail


def history_texts(detail: MemoryDetail) -> list[list[str]]:
    return [
        [detail.history.topLevelItem(i).text(c) for c in range(5)]
        for i in range(detail.history.topLevelItemCount())
    ]


def dialog_of(detail: MemoryDetail, kind: type[D]) -> D:
    found = detail.findChildren(kind)
    assert found, f"no {kind.__name__} open"
    return found[-1]


# -- what it shows ---------------------------------------------------------------------------


def test_text_of_a_memory_and_its_history(service: SignetService, memory_id: str) -> None:
    memories = service.memories
    memories.modify("default", memory_id, MemoryPatch(tags=("infra", "db")), reason="tagging",
                    if_version=None, actor=ELSEWHERE)  # fmt: skip
    memories.modify("default", memory_id, MemoryPatch(tags=("db",), importance=0.3, pinned=True),
                    reason="tidy", if_version=None, actor=ELSEWHERE)  # fmt: skip
    memory = memories.get("default", memory_id)
    assert metadata_line(memory) == (
        "fact · pinned · importance 0.30 · tags db · who alice · project billing"
    )
    rows = dict(provenance_rows(memory))
    assert rows["source"] == "claude-code turn-41" and rows["session"] == "8c35aa01"
    assert (rows["who"], rows["project"], rows["agent"]) == ("alice", "billing", "default")

    timeline = history_rows(memories.history("default", memory_id), memory)
    assert [(r.event, r.actor, r.change, r.reason) for r in timeline] == [
        ("created", "claude-code (hook)", "", ""),
        ("updated", "claude-code (hook)", "tags +db", "tagging"),
        ("updated", "claude-code (hook)", "importance 0.80 → 0.30; pinned; tags −infra", "tidy"),
    ]


def test_actor_names_and_the_deleted_notice(service: SignetService, memory_id: str) -> None:
    assert actor_name("inspector", "user") == "you"
    assert actor_name("inspector", "hook") == "inspector (hook)"
    assert actor_name("alice") == "alice"
    service.memories.forget("default", memory_id, reason="r", actor=ELSEWHERE)
    memory = service.memories.inspect("default", memory_id)
    assert "recoverable for 30 more days" in deleted_notice(memory)
    later = datetime.now(UTC).replace(year=datetime.now(UTC).year + 1)
    assert "can no longer be recovered" in deleted_notice(memory, now=later)


def test_history_of_a_forced_forget_by_you(service: SignetService, memory_id: str) -> None:
    memories = service.memories
    memories.modify("default", memory_id, MemoryPatch(pinned=True), reason="keep",
                    if_version=None, actor=INSPECTOR_ACTOR)  # fmt: skip
    memories.forget("default", memory_id, reason="dup", force=True, actor=INSPECTOR_ACTOR)
    memory = memories.inspect("default", memory_id)
    timeline = history_rows(memories.history("default", memory_id), memory)
    assert [(r.event, r.actor, r.change, r.reason) for r in timeline[1:]] == [
        ("updated", "you", "pinned", "keep"),
        ("forgotten", "you", "forced (it was pinned)", "dup"),
    ]


# -- the widget ------------------------------------------------------------------------------


def test_detail_shows_content_metadata_provenance_and_history(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext, memory_id: str
) -> None:
    detail = open_detail(qtbot, pane_context, qt_loop, memory_id)
    assert detail.content.toPlainText() == CONTENT and detail.content.isReadOnly()
    assert detail.meta.text() == (
        "fact · importance 0.80 · tags infra · who alice · project billing"
    )
    labels = [
        detail.provenance.itemAt(i, detail.provenance.ItemRole.LabelRole).widget().text()
        for i in range(detail.provenance.rowCount())
    ]
    assert labels[:5] == ["source", "session", "who", "project", "agent"]
    assert [row[1:3] for row in history_texts(detail)] == [["created", "claude-code (hook)"]]
    assert detail.pin_button.text() == "Pin" and detail.recover_button.isHidden()


def test_pin_and_unpin_through_the_facade_redrawn_by_the_event(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext, memory_id: str
) -> None:
    detail = open_detail(qtbot, pane_context, qt_loop, memory_id)
    seen: list[str] = []
    pane_context.events.event_published.connect(lambda event: seen.append(event.kind))
    detail.pin_button.click()
    settle(qt_loop, pane_context, until=lambda: detail.pin_button.text() == "Unpin")
    assert pane_context.service.memories.get("default", memory_id).pinned
    assert seen == ["memory.updated"]
    assert "pinned" in detail.meta.text().split(" · ")
    assert history_texts(detail)[-1][1:] == ["updated", "you", "pinned", "pinned in the inspector"]

    detail.pin_button.click()
    settle(qt_loop, pane_context, until=lambda: detail.pin_button.text() == "Pin")
    assert not pane_context.service.memories.get("default", memory_id).pinned


def test_edit_tags_and_importance_through_their_dialogs(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext, memory_id: str
) -> None:
    detail = open_detail(qtbot, pane_context, qt_loop, memory_id)
    detail.tags_button.click()
    tags = dialog_of(detail, TagsDialog)
    assert tags.tags.text() == "infra"
    tags.tags.setText("infra,  db , ")
    tags.accept()
    settle(qt_loop, pane_context, until=lambda: "tags infra, db" in detail.meta.text())
    assert pane_context.service.memories.get("default", memory_id).tags == ("infra", "db")
    assert history_texts(detail)[-1][3:] == ["tags +db", "edited tags in the inspector"]

    detail.importance_button.click()
    importance = dialog_of(detail, ImportanceDialog)
    importance.importance.setValue(0.35)
    importance.reason.setText("")
    assert not importance.ok_button.isEnabled()  # every change needs a reason, as in HTTP
    importance.reason.setText("less central now")
    importance.accept()
    settle(qt_loop, pane_context, until=lambda: "importance 0.35" in detail.meta.text())
    assert pane_context.service.memories.get("default", memory_id).importance == 0.35
    assert history_texts(detail)[-1][3:] == ["importance 0.80 → 0.35", "less central now"]


def test_forget_a_pinned_memory_needs_force_then_recover(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext, memory_id: str
) -> None:
    memories = pane_context.service.memories
    memories.modify("default", memory_id, MemoryPatch(pinned=True), reason="keep",
                    if_version=None, actor=ELSEWHERE)  # fmt: skip
    detail = open_detail(qtbot, pane_context, qt_loop, memory_id)

    detail.forget("duplicate of another memory", force=False)  # the rule is the facade's
    settle(qt_loop, pane_context, until=lambda: bool(detail.banner.text))
    assert "pinned" in detail.banner.text
    assert not memories.inspect("default", memory_id).is_deleted

    detail.forget_button.click()
    dialog = dialog_of(detail, ForgetDialog)
    dialog.reason.setText("duplicate of another memory")
    assert dialog.force.isVisibleTo(dialog) and not dialog.ok_button.isEnabled()
    dialog.force.setChecked(True)
    assert dialog.ok_button.isEnabled()
    dialog.accept()
    settle(qt_loop, pane_context, until=lambda: not detail.recover_button.isHidden())
    assert memories.inspect("default", memory_id).is_deleted
    assert "Forgotten" in detail.notice.text and detail.forget_button.isHidden()
    assert history_texts(detail)[-1][1:] == [
        "forgotten", "you", "forced (it was pinned)", "duplicate of another memory"
    ]  # fmt: skip

    detail.recover_button.click()
    recover = dialog_of(detail, ReasonDialog)
    assert recover.reason.text() == "recovered in the inspector"
    recover.accept()
    settle(qt_loop, pane_context, until=lambda: detail.recover_button.isHidden())
    assert memories.get("default", memory_id).pinned  # back, still pinned
    assert detail.notice.isHidden() and not detail.banner.text
    assert history_texts(detail)[-1][1:3] == ["recovered", "you"]


def test_an_unpinned_memory_forgets_without_the_force_box(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext, memory_id: str
) -> None:
    detail = open_detail(qtbot, pane_context, qt_loop, memory_id)
    detail.forget_button.click()
    dialog = dialog_of(detail, ForgetDialog)
    assert not dialog.force.isVisibleTo(dialog) and not dialog.ok_button.isEnabled()
    dialog.reason.setText("obsolete")
    dialog.accept()
    settle(qt_loop, pane_context, until=lambda: not detail.recover_button.isHidden())
    assert pane_context.service.memories.inspect("default", memory_id).is_deleted


def test_a_stale_detail_is_refused_by_version_and_shown_again(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext, memory_id: str
) -> None:
    detail = open_detail(qtbot, pane_context, qt_loop, memory_id)
    memories = pane_context.service.memories
    memories.modify("default", memory_id, MemoryPatch(importance=0.1), reason="elsewhere",
                    if_version=None, actor=ELSEWHERE)  # fmt: skip
    detail.toggle_pin()  # still holds version 1: the facade refuses, nothing changes
    settle(qt_loop, pane_context)
    assert "changed meanwhile" in detail.banner.text
    assert not memories.get("default", memory_id).pinned
    assert detail.memory is not None and detail.memory.version == 2
    assert "importance 0.10" in detail.meta.text()
