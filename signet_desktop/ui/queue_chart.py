"""The Queue pane's header widgets: count pills and a small chart of counts over time."""

from __future__ import annotations

import math

import pyqtgraph as pg  # type: ignore[import-untyped]
from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

from signet_desktop.ui.queue_format import CHARTED_STATES, CountHistory, Pill
from signet_desktop.ui.style import Theme, current_theme

CHART_HEIGHT = 96
HINT = "pending, leased and dead: a sample every 10 s and at each job event"
HINT_SAMPLES = 3
DOTS_BELOW = 8  # a few samples are dots; a history is a line


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
        self._row = QHBoxLayout(self)
        self._row.setContentsMargins(0, 0, 0, 0)
        self._row.setSpacing(22)
        self._row.addStretch(1)
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


class CountsChart(pg.PlotWidget):  # type: ignore[misc]
    """Pending, leased and dead over the last minutes (x: seconds ago)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        theme = current_theme()
        super().__init__(parent, background=theme.surface)
        self.setObjectName("queueChart")
        self.setFixedHeight(CHART_HEIGHT)
        self.setMouseEnabled(x=False, y=False)
        self.setMenuEnabled(False)
        self.hideButtons()
        item = self.getPlotItem()
        item.showGrid(x=False, y=True, alpha=0.15)
        for side in ("left", "bottom"):
            axis = item.getAxis(side)
            axis.setTextPen(pg.mkPen(theme.muted))
            axis.setPen(pg.mkPen(theme.border))
        item.getAxis("bottom").setLabel("minutes ago", color=theme.muted)
        item.getAxis("left").setWidth(36)
        self.curves = {
            state: self.plot(
                [],
                [],
                pen=pg.mkPen(colour, width=2),
                symbol="o",
                symbolSize=5,
                symbolPen=None,
                symbolBrush=pg.mkBrush(colour),
            )
            for state in CHARTED_STATES
            for colour in [state_colour(state, theme)]
        }

        self.hint = pg.TextItem(HINT, color=theme.muted, anchor=(0.5, 0.5))
        self.addItem(self.hint, ignoreBounds=True)

    def set_history(self, history: CountHistory, now: float) -> None:
        self.hint.setVisible(len(history) < HINT_SAMPLES)
        series = history.series(now)
        for state, (xs, ys) in series.items():
            minutes = [x / 60.0 for x in xs]
            self.curves[state].setData(minutes, ys, symbol="o" if len(xs) < DOTS_BELOW else None)
        top = max(1, *(max(ys, default=0) for _, ys in series.values()))
        step = max(1, math.ceil(top / 2))  # whole jobs: two or three labelled lines
        self.getPlotItem().getAxis("left").setTickSpacing(step, step)
        self.setYRange(0, top * 1.2, padding=0)
        left = min(min(series[CHARTED_STATES[0]][0], default=0.0) / 60.0, -1.0)
        self.setXRange(left, 0, padding=0.02)
        self.hint.setPos(left / 2, top * 0.6)
