"""A transcript search that fills its page says it shows the best of more, not "20 match"."""

from __future__ import annotations

import asyncio

import pytest
from pytestqt.qtbot import QtBot

from signet_desktop.domain.sessions import Turn
from signet_desktop.service.transcripts.service import MAX_SEARCH_LIMIT
from signet_desktop.ui.pane import PaneContext
from signet_desktop.ui.transcript_format import hits_text
from tests.ui.memory_support import settle
from tests.ui.test_transcripts_pane import open_pane

pytestmark = pytest.mark.gui


def capture(context: PaneContext, sessions: int) -> None:
    for n in range(sessions):
        turns = [Turn(f"t{n}", "user", f"Why does the replica lag in run {n}?", None)]
        context.service.transcripts.capture("default", f"s{n}", "codex", turns, project="db")


def test_a_full_page_of_hits_is_the_best_of_more(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    capture(pane_context, MAX_SEARCH_LIMIT + 5)
    pane = open_pane(qtbot, pane_context, qt_loop)
    pane.search("replica")
    settle(qt_loop, pane_context, until=lambda: pane.results.count() == MAX_SEARCH_LIMIT)
    text = pane.results_label.text()
    assert text == f"Showing the best {MAX_SEARCH_LIMIT} — more sessions match “replica”"
    assert f"{MAX_SEARCH_LIMIT} sessions match" not in text


def test_fewer_hits_than_the_page_are_the_true_count() -> None:
    assert hits_text(3, "replica", 20) == "3 sessions match “replica”"
    assert hits_text(1, "replica", 20) == "1 session matches “replica”"
    assert hits_text(0, "zxqv", 20) == "No session mentions “zxqv”"
    assert hits_text(20, "replica", 20).startswith("Showing the best 20 — more")
