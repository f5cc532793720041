"""What the Settings pane's sections share: the section frame and the host they act through.

A section never touches files or the facade on the GUI thread: it asks its `SettingsHost`
(the pane) to `act` — run the work off the GUI thread, then show the answer and read the
settings again — and to `confirm` a change after showing exactly what it would write.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from signet_desktop.service.facade import SignetService
from signet_desktop.ui.widgets import text_label

RESTART_NOTE = (
    "The daemon reads agent.yaml when it starts: quit Signet Desktop (tray → Quit) and open "
    "it again for this to apply."
)


class SettingsHost(Protocol):
    """What a section may ask of the Settings pane."""

    service: SignetService
    workspace: Path
    url: str
    agent_id: str
    env: Mapping[str, str]

    def act(self, work: Callable[[], Any], done: Callable[[Any], str]) -> None:
        """Run `work` off the GUI thread; `done(result)` returns what to tell the person."""

    def confirm(self, title: str, lead: str, details: str) -> bool:
        """Show `details` (a diff) and ask; True only when the person agreed."""


class Section(QFrame):
    """A titled card: heading, a muted lead line, then the section's own rows."""

    def __init__(self, name: str, title: str, lead: str) -> None:
        super().__init__()
        self.setObjectName(name)
        self.setProperty("card", True)
        self.body = QVBoxLayout(self)
        self.body.setContentsMargins(16, 12, 16, 14)
        self.body.setSpacing(8)
        heading = QLabel(title)
        heading.setProperty("role", "heading")
        self.body.addWidget(heading)
        self.lead = muted(lead)
        self.body.addWidget(self.lead)


def muted(text: str = "", name: str = "") -> QLabel:
    """A wrapping secondary-text label."""
    label = text_label(text, role="muted", wrap=True)
    if name:
        label.setObjectName(name)
    return label


def row_of(*widgets: QWidget, stretch: bool = True) -> QWidget:
    """Widgets side by side (a stretch after them unless `stretch` is False)."""

    holder = QWidget()
    layout = QHBoxLayout(holder)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(8)
    for widget in widgets:
        layout.addWidget(widget)
    if stretch:
        layout.addStretch(1)
    return holder


def set_state(label: QLabel, state: str) -> None:
    """Colour `label` as ok, warn or error ("" for plain) through the stylesheet."""
    label.setProperty("state", state)
    label.style().unpolish(label)
    label.style().polish(label)
