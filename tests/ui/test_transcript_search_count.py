"""A transcript search says how many sessions match and how many it shows, never "20 match"
when more do."""

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


def test_a_full_page_of_hits_says_how_many_match_in_all(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    capture(pane_context, MAX_SEARCH_LIMIT + 5)
    pane = open_pane(qtbot, pane_context, qt_loop)
    pane.search("replica")
    settle(qt_loop, pane_context, until=lambda: pane.results.count() == MAX_SEARCH_LIMIT)
    total = MAX_SEARCH_LIMIT + 5
    text = pane.results_label.text()
    assert text == f"Showing the best {MAX_SEARCH_LIMIT} of {total} sessions that match “replica”"
    assert pane_context.service.transcripts.count_matches("other", "replica") == 0  # per agent


def test_the_summary_is_the_true_count() -> None:
    assert hits_text(3, "replica", 3) == "3 sessions match “replica”"
    assert hits_text(1, "replica", 1) == "1 session matches “replica”"
    assert hits_text(0, "zxqv", 0) == "No session mentions “zxqv”"
    assert (
        hits_text(20, "replica", 595) == "Showing the best 20 of 595 sessions that match “replica”"
    )
