"""The Dreaming pane's list rows: one pass of the timeline, one operation of a pass.

Their labels wrap; the lists keep them fitted to their width (`widgets.keep_rows_fitted`).
"""

from __future__ import annotations

import html

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from signet_desktop.ui import dreaming_format as fmt
from signet_desktop.ui.style import Theme, current_theme
from signet_desktop.ui.widgets import text_label, vbox


def tone_colour(tone: str, theme: Theme) -> str:
    """A tone name (`ok`, `error`, `accent`, `muted`, `warn`) as the theme's colour."""
    return {"ok": theme.ok, "error": theme.error, "accent": theme.accent, "warn": theme.warn}.get(
        tone, theme.muted
    )


def _esc(text: str) -> str:
    return html.escape(text)


class PassItem(QWidget):
    """One pass of the timeline: a status dot and when/mode, then status and facts, then
    what changed."""

    def __init__(self, row: fmt.PassRow) -> None:
        super().__init__()
        theme = current_theme()
        colour = tone_colour(row.tone, theme)
        self.title = QLabel(f"<span style='color:{colour}'>●</span>&nbsp; <b>{_esc(row.title)}</b>")
        self.facts = QLabel(
            f"<span style='color:{colour}'>{_esc(row.status)}</span>"
            + (f" · {_esc(row.took)}" if row.took else "")
        )
        self.changes = QLabel(" · ".join(p for p in (row.usage, row.mutations) if p))
        self.changes.setProperty("role", "muted")
        column = QVBoxLayout(self)
        column.setContentsMargins(8, 6, 8, 6)
        column.setSpacing(1)
        for label in (self.title, self.facts, self.changes):
            label.setWordWrap(True)
            column.addWidget(label)


class OperationItem(QWidget):
    """One operation in words, in its status colour, and its outcome; with `details`, the
    operation's name, payload subject and the ids of what it made."""

    def __init__(self, row: fmt.OperationRow, details: bool = False) -> None:
        super().__init__()
        colour = tone_colour(row.tone, current_theme())
        self.title = QLabel(f"<span style='color:{colour}'><b>{_esc(row.title)}</b></span>")
        self.title.setWordWrap(True)
        raw = f" · {row.operation} {row.subject}".rstrip()
        self.outcome = text_label(
            row.outcome + raw if details else row.plain, role="muted", wrap=True
        )
        vbox(self.title, self.outcome, parent=self, margins=(8, 5, 8, 5), spacing=1)
