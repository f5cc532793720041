"""Small Qt helpers every pane uses: a debounce timer, the title row, a quiet selection."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QHBoxLayout, QLabel, QListWidget


def single_shot(parent: QObject, interval_ms: int, slot: Callable[[], object]) -> QTimer:
    """A single-shot timer calling `slot`; `start()` (re)arms it, so bursts collapse to one."""
    timer = QTimer(parent)
    timer.setSingleShot(True)
    timer.setInterval(interval_ms)
    timer.timeout.connect(slot)
    return timer


def title_row(title: str, count_name: str) -> tuple[QHBoxLayout, QLabel]:
    """A pane's heading on the left and its muted count label ("Loading…" at first) right."""
    heading = QLabel(title)
    heading.setProperty("role", "title")
    count = QLabel("Loading…")
    count.setObjectName(count_name)
    count.setProperty("role", "muted")
    row = QHBoxLayout()
    row.addWidget(heading)
    row.addStretch(1)
    row.addWidget(count)
    return row, count


def select_quietly(view: QListWidget, row: int) -> None:
    """Make `row` current without emitting the selection signals (a re-read keeps its place)."""
    view.blockSignals(True)
    view.setCurrentRow(row)
    view.blockSignals(False)
