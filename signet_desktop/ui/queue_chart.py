"""The Queue pane's header widgets: count pills (the chart is in `ui/queue_plot.py`)."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QWidget

from signet_desktop.ui.queue_format import CHARTED_STATES, Pill
from signet_desktop.ui.style import Theme, current_theme
from signet_desktop.ui.widgets import hbox


def state_colour(state: str, theme: Theme) -> str:
    """The colour a job state is drawn in everywhere in the pane."""
    return {
        "pending": theme.accent,
        "leased": theme.ok,
        "dead": theme.error,
        "failed": theme.error,
        "retrying": theme.warn,
    }.get(state, theme.muted)


class CountPills(QWidget):
    """`● pending 12   ● leased 2   completed 4,118   dead 1 ⚠` in the states' colours."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("queueCounts")
        self._row = hbox(1, parent=self, margins=(0, 0, 0, 0), spacing=22)
        self.labels: dict[str, QLabel] = {}

    def set_pills(self, pills: list[Pill]) -> None:
        theme = current_theme()
        for pill in pills:
            label = self.labels.get(pill.state)
            if label is None:
                label = self.labels[pill.state] = QLabel()
                label.setObjectName(f"queueCount_{pill.state}")
                self._row.insertWidget(len(self.labels) - 1, label)
            dot = "● " if pill.state in CHARTED_STATES else ""
            colour = state_colour(pill.state, theme)
            weight = "600" if pill.alert else "normal"
            label.setText(
                f"<span style='color:{colour}'>{dot}</span>"
                f"<span style='font-weight:{weight}'>{pill.text}</span>"
            )
            label.setProperty("alert", pill.alert)

    def text(self) -> str:
        """The pills' words, for tests and the accessible name."""
        return " · ".join(
            label.text().split(">")[-2].split("<")[0] for label in self.labels.values()
        )
