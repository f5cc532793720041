"""The Queue pane's chart of pending, leased and dead counts over time (pyqtgraph).

Apart from `ui/queue_chart.py` so that pyqtgraph (~0.4 s of imports) loads when the Queue pane
is first shown, not when the panes are discovered at start-up.
"""

from __future__ import annotations

import math

import pyqtgraph as pg  # type: ignore[import-untyped]
from PySide6.QtWidgets import QWidget

from signet_desktop.ui.queue_chart import state_colour
from signet_desktop.ui.queue_format import CHARTED_STATES, CountHistory
from signet_desktop.ui.style import current_theme

CHART_HEIGHT = 96
HINT = "pending, leased and dead: a sample every 10 s and at each job event"
HINT_SAMPLES = 3
DOTS_BELOW = 8  # a few samples are dots; a history is a line


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
