"""`ElidingLabel` gives way: its text shortens with "…" to the room it has, never the window."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QHBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from signet_desktop.ui.widgets import ElidingLabel

pytestmark = pytest.mark.gui

TEXT = "Claude Code remembered “billing runs on Postgres 16 in eu-west-1” 3 s ago"


def test_a_narrow_label_shows_a_shortened_text_and_keeps_the_whole(qtbot: QtBot) -> None:
    row = QWidget()
    layout = QHBoxLayout(row)
    label = ElidingLabel(TEXT)
    layout.addWidget(label)
    qtbot.addWidget(row)
    row.resize(label.sizeHint().width() + 40, 30)
    row.show()
    qtbot.waitUntil(lambda: label.text() == TEXT)  # room enough: the whole text

    row.resize(140, 30)
    qtbot.waitUntil(lambda: label.text() != TEXT)
    assert label.text().endswith("…") and len(label.text()) < len(TEXT)
    assert label.full_text() == TEXT and label.toolTip() == TEXT
    assert label.minimumSizeHint().width() <= ElidingLabel.MIN_WIDTH < label.sizeHint().width()
    assert row.minimumSizeHint().width() < 140  # it never holds its row wider
