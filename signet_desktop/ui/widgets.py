"""Small Qt helpers every pane uses: a debounce timer and the pane's title row."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QHBoxLayout, QLabel


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
