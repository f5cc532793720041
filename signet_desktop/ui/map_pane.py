"""The Map pane's widget (`ui/panes/map.py` registers it): a scatter of the agent's embeddings,
PCA at once, UMAP when computed.

The layout comes from `service.projection` off the GUI thread: PCA is there at once, UMAP runs
in a background process (progress bar, Cancel) and is cached. Points are coloured by type,
tag, who or agent; hovering shows the memory's text, a click opens its detail, a lasso drag
(the Lasso button, or Shift+drag) lists the memories inside it below the map, and recall
results handed over by `reveal(highlight=[ids])` are ringed. Memory events refresh the map
(debounced); they never start a UMAP run. The colouring, hit testing and lasso maths are
plain numpy functions at the top of this module.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pyqtgraph as pg  # type: ignore[import-untyped]
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QStackedWidget,
    QWidget,
)

from signet_desktop.domain.events import Event
from signet_desktop.projection.events import ProjectionFinished, ProjectionProgress
from signet_desktop.projection.source import MapPoint
from signet_desktop.service.projection import JobStatus, MapData
from signet_desktop.ui.empty_state import Banner, EmptyState
from signet_desktop.ui.pane import PaneContext, PaneWidget
from signet_desktop.ui.style import current_theme
from signet_desktop.ui.widgets import single_shot, split, text_label, vbox

DIMENSIONS = 2
REFRESH_DEBOUNCE_MS = 1500
# memory.embedded: a remembered memory's vector arrived (it follows the write in a batch).
REFRESH_ON = frozenset(
    {
        "memory.created",
        "memory.deleted",
        "memory.recovered",
        "memory.updated",
        "memory.embedded",
        "embedding.progress",
    }
)
COLOUR_BY = ("type", "tag", "who", "agent")
# Okabe-Ito plus two Tableau tones: distinguishable for colour-blind readers, light and dark.
PALETTE = (
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9",
    "#D55E00", "#F0E442", "#7F3C8D", "#11A579", "#E73F74",
)  # fmt: skip
OTHER_COLOUR = "#8A8F98"
OTHER = "other"
HOVER_RADIUS_PX = 8
POINT_SIZE, LARGE_POINT_SIZE, LARGE = 7, 4, 20_000
RING_SIZE = 15
SELECTION_PREVIEW = 140
EMPTY_NO_VECTORS = (
    "Vectors appear here once memories are embedded. Remember something, or run "
    "`signet embed backfill` to embed the ones still waiting."
)
EMPTY_NO_EMBEDDER = (
    "Embedding is off (`embedding.provider: none`), so there is nothing to map. Choose a "
    "provider in agent.yaml and restart; memories are embedded in the background."
)

Coords = npt.NDArray[np.float64]

# -- plain functions (no Qt) -------------------------------------------------------------------


def label_of(point: MapPoint, by: str) -> str:
    """The category a point is coloured by."""
    if by == "type":
        return point.type
    if by == "tag":
        return point.tags[0] if point.tags else "untagged"
    if by == "who":
        return point.who or "unknown"
    return point.agent_id


def colour_groups(
    labels: Sequence[str], colours: int = len(PALETTE)
) -> tuple[npt.NDArray[np.int64], list[tuple[str, int, str]]]:
    """Each label's palette slot (the most frequent first; the rest share `other` = -1) and
    the legend as (label, count, colour), in slot order, `other` last."""
    counts = Counter(labels)
    ranked = sorted(counts, key=lambda label: (-counts[label], label))
    keep = ranked if len(ranked) <= colours else ranked[: colours - 1]
    slot = {label: i for i, label in enumerate(keep)}
    index = np.fromiter(
        (slot.get(label, -1) for label in labels), dtype=np.int64, count=len(labels)
    )
    legend = [(label, counts[label], PALETTE[i]) for i, label in enumerate(keep)]
    rest = len(labels) - sum(count for _, count, _ in legend)
    if rest:
        legend.append((OTHER, rest, OTHER_COLOUR))
    return index, legend


def nearest(coords: Coords, x: float, y: float, radius: float) -> int | None:
    """The point closest to (x, y) within `radius` (view units), if any."""
    if coords.shape[0] == 0:
        return None
    distances = np.hypot(coords[:, 0] - x, coords[:, 1] - y)
    best = int(np.argmin(distances))
    return best if distances[best] <= radius else None


def inside(coords: Coords, polygon: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    """Indices of the points inside `polygon` (even-odd rule; the path closes itself)."""
    if coords.shape[0] == 0 or polygon.shape[0] < 3:
        return np.zeros(0, dtype=np.int64)
    x, y = coords[:, 0], coords[:, 1]
    result = np.zeros(coords.shape[0], dtype=bool)
    x1, y1 = polygon[:, 0], polygon[:, 1]
    x2, y2 = np.roll(x1, -1), np.roll(y1, -1)
    for ax, ay, bx, by in zip(x1, y1, x2, y2, strict=True):
        crosses = (ay > y) != (by > y)
        with np.errstate(divide="ignore", invalid="ignore"):
            at = (bx - ax) * (y - ay) / (by - ay) + ax
        result ^= crosses & (x < at)
    return np.flatnonzero(result)


def hover_text(point: MapPoint) -> str:
    """What hovering a point shows: its facts, then its text."""
    facts = [point.type, *point.tags[:3], point.who or ""]
    return " · ".join(f for f in facts if f) + "\n" + point.preview


def status_text(data: MapData, method: str, highlighted: int, wanted: int) -> str:
    """The line above the map: how many points, which layout, how many recall hits shown."""
    parts = [f"{len(data.points):,} memories", "UMAP" if method == "umap" else "PCA"]
    if data.umap is None and data.job.state == "completed":
        parts.append("UMAP out of date")
    if wanted:
        parts.append(f"{highlighted} of {wanted} highlighted on the map")
    return " · ".join(parts)


# -- the plot ------------------------------------------------------------------------------------


class MapViewBox(pg.ViewBox):  # type: ignore[misc]
    """Pans and zooms as usual; with the lasso on (or Shift held) a drag draws a selection."""

    lasso_finished = Signal(object)  # (k, 2) polygon in view coordinates

    def __init__(self) -> None:
        super().__init__()
        self.lasso_enabled = False
        self._path: list[tuple[float, float]] = []
        self.lasso_curve = pg.PlotCurveItem()
        self.addItem(self.lasso_curve, ignoreBounds=True)

    def mouseDragEvent(self, ev: Any, axis: Any = None) -> None:
        shift = bool(ev.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        if ev.button() != Qt.MouseButton.LeftButton or not (self.lasso_enabled or shift):
            super().mouseDragEvent(ev, axis)
            return
        ev.accept()
        point = self.mapSceneToView(ev.scenePos())
        if ev.isStart():
            self._path = []
        self._path.append((point.x(), point.y()))
        xs, ys = zip(*self._path, strict=True)
        self.lasso_curve.setData([*xs, xs[0]], [*ys, ys[0]])
        if ev.isFinish():
            polygon = np.asarray(self._path, dtype=np.float64)
            self.lasso_curve.setData([], [])
            self.lasso_finished.emit(polygon)


class MapPane(PaneWidget):
    """The embedding map of the context's agent."""

    map_loaded = Signal()  # new data is drawn (or the empty state shown)

    def __init__(self, context: PaneContext) -> None:
        super().__init__(context)
        self.setObjectName("mapPane")
        self.auto_umap = True  # start UMAP once when the pane first finds no cached layout
        self.data: MapData | None = None
        self.coords: Coords = np.zeros((0, DIMENSIONS))
        self.method = "pca"
        self.highlight: list[str] = []
        self.selected: list[str] = []
        self._seq = 0
        self._loaded_once = False
        self._dirty = True
        self._auto_started = False
        self._items: list[Any] = []
        self._build()
        self._refresh = single_shot(self, REFRESH_DEBOUNCE_MS, self.load)
        context.events.event_published.connect(self._event)

    # -- building ---------------------------------------------------------------------------

    def _build(self) -> None:
        self.colour_by = QComboBox()
        self.colour_by.setObjectName("mapColourBy")
        self.colour_by.addItems(list(COLOUR_BY))
        self.colour_by.currentTextChanged.connect(lambda _text: self._draw())
        self.layout_choice = QComboBox()
        self.layout_choice.setObjectName("mapLayout")
        self.layout_choice.addItems(["PCA", "UMAP"])
        self.layout_choice.currentTextChanged.connect(lambda _text: self._draw())
        self.compute_button = QPushButton("Compute UMAP")
        self.compute_button.setObjectName("mapUmapCompute")
        self.compute_button.clicked.connect(self.start_umap)
        self.progress = QProgressBar()
        self.progress.setObjectName("mapUmapProgress")
        self.progress.setRange(0, 100)
        self.progress.setFormat("UMAP %p%")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("mapUmapCancel")
        self.cancel_button.clicked.connect(self.cancel_umap)
        self.lasso_button = QPushButton("Lasso")
        self.lasso_button.setObjectName("mapLasso")
        self.lasso_button.setCheckable(True)
        self.lasso_button.setToolTip("Drag to select (or hold Shift while dragging)")
        self.status = QLabel()
        self.status.setObjectName("mapStatus")
        self.status.setWordWrap(True)  # two lines in a narrow window, never a wider one
        self.status.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        bar = QHBoxLayout()
        for caption, combo in (("Colour by", self.colour_by), ("Layout", self.layout_choice)):
            bar.addWidget(QLabel(caption))
            bar.addWidget(combo)
        controls: tuple[QWidget, ...] = (
            self.compute_button,
            self.progress,
            self.cancel_button,
            self.lasso_button,
        )
        for widget in controls:
            bar.addWidget(widget)
        bar.addStretch(1)
        bar.addWidget(self.status)
        self.banner = Banner()
        self.stack = QStackedWidget()
        self.stack.setObjectName("mapStack")
        self.empty = EmptyState("map.svg", "No vectors to map yet", EMPTY_NO_VECTORS)
        self.empty.setObjectName("mapEmpty")
        self.stack.addWidget(self.empty)
        self.stack.addWidget(self._build_plot())
        self._set_progress(None)
        vbox(bar, self.banner, (self.stack, 1), parent=self)

    def _build_plot(self) -> QWidget:
        theme = current_theme()
        self.view = MapViewBox()
        self.view.setAspectLocked(True)
        self.view.lasso_finished.connect(self.select_polygon)
        self.view.lasso_curve.setPen(pg.mkPen(theme.accent, width=1.5))
        self.plot = pg.PlotWidget(viewBox=self.view, background=theme.surface)
        self.plot.setObjectName("mapPlot")
        self.plot.hideAxis("left")
        self.plot.hideAxis("bottom")
        self.plot.setMenuEnabled(False)
        self.rings = pg.ScatterPlotItem(
            size=RING_SIZE, brush=None, pen=pg.mkPen(theme.accent, width=2.5), pxMode=True
        )
        self.rings.setZValue(10)
        self.plot.addItem(self.rings)
        self.lasso_button.toggled.connect(self._lasso_toggled)
        scene = self.plot.scene()
        scene.sigMouseMoved.connect(self._mouse_moved)
        scene.sigMouseClicked.connect(self._mouse_clicked)
        self.hover = text_label(name="mapHover", wrap=True)
        self.legend = QLabel()
        self.legend.setObjectName("mapLegend")
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setWordWrap(True)
        box = QWidget()
        vbox((self.plot, 1), self.legend, self.hover, parent=box, margins=(0, 0, 0, 0))
        self.selection_count = QLabel()
        self.selection_count.setObjectName("mapSelectionCount")
        self.selection = QListWidget()
        self.selection.setObjectName("mapSelection")
        self.selection.itemActivated.connect(self._open_item)
        self.selection.itemClicked.connect(self._open_item)
        below = QWidget()
        vbox(self.selection_count, (self.selection, 1), parent=below, margins=(0, 0, 0, 0))
        self.splitter = split(box, below, stretch=(4, 1), vertical=True)
        below.hide()
        self._below = below
        return self.splitter

    # -- pane hooks -------------------------------------------------------------------------

    def activated(self) -> None:
        if self._dirty or not self._loaded_once:
            self.load()

    def reveal(self, **reveal: Any) -> None:
        ids = reveal.get("highlight")
        if ids is not None:
            self.highlight = [str(i) for i in ids]
            self._draw_rings()
            self._update_status()

    def shutdown(self) -> None:
        self._refresh.stop()
        self.context.events.event_published.disconnect(self._event)

    # -- loading ----------------------------------------------------------------------------

    def load(self) -> None:
        """Fetch points and layouts off the GUI thread; the newest answer wins."""
        self._seq += 1
        self._dirty = False
        seq = self._seq
        projection, embeddings = self.context.service.projection, self.context.service.embeddings
        agent = self.context.agent_id

        def fetch() -> tuple[MapData, str]:
            return projection.map_data(agent, DIMENSIONS), embeddings.status().provider

        self.context.tasks.call(
            fetch,
            done=lambda answer: self._loaded(seq, *answer),
            failed=lambda exc: self._failed(seq, exc),
        )

    def _loaded(self, seq: int, data: MapData, provider: str) -> None:
        if seq != self._seq:
            return
        had_umap = self.data is not None and self.data.umap is not None
        self.data = data
        self._loaded_once = True
        if not data.points:
            hint = EMPTY_NO_EMBEDDER if provider == "none" else EMPTY_NO_VECTORS
            self.empty.set_text("No vectors to map yet", hint)
            self.stack.setCurrentIndex(0)
        else:
            self.stack.setCurrentIndex(1)
        umap_item = self.layout_choice.model().item(1)  # type: ignore[attr-defined]
        umap_item.setEnabled(data.umap is not None)
        if data.umap is not None and (not had_umap or self.layout_choice.currentIndex() == 1):
            self.layout_choice.setCurrentIndex(1)
        elif data.umap is None:
            self.layout_choice.setCurrentIndex(0)
        self._set_progress(data.job if data.job.running else None)
        self._draw()
        self.map_loaded.emit()
        if self.auto_umap and not self._auto_started and self._umap_wanted(data):
            self._auto_started = True
            self.start_umap()

    def _failed(self, seq: int, exc: BaseException) -> None:
        if seq == self._seq:
            self.banner.show_message(f"Could not load the map: {exc}")
            self.map_loaded.emit()

    @staticmethod
    def _umap_wanted(data: MapData) -> bool:
        return len(data.points) >= 3 and data.umap is None and not data.job.running

    # -- drawing ----------------------------------------------------------------------------

    def _draw(self) -> None:
        data = self.data
        for item in self._items:
            self.plot.removeItem(item)
        self._items = []
        if data is None or not data.points:
            self.coords = np.zeros((0, DIMENSIONS))
            self._draw_rings()
            self._update_status()
            return
        use_umap = self.layout_choice.currentIndex() == 1 and data.umap is not None
        layout = data.umap if use_umap and data.umap is not None else data.pca
        self.method = "umap" if use_umap else "pca"
        self.coords = layout.coords[:, :2]
        by = self.colour_by.currentText()
        index, legend = colour_groups([label_of(p, by) for p in data.points])
        size = LARGE_POINT_SIZE if len(data.points) > LARGE else POINT_SIZE
        for slot in (*range(len(PALETTE)), -1):
            mask = index == slot
            if not mask.any():
                continue
            colour = OTHER_COLOUR if slot < 0 else PALETTE[slot]
            item = pg.ScatterPlotItem(
                pos=self.coords[mask], size=size, pen=None, brush=pg.mkBrush(colour), pxMode=True
            )
            self.plot.addItem(item)
            self._items.append(item)
        self.legend.setText(_legend_html(legend))
        self.view.autoRange(padding=0.05)
        self._draw_rings()
        self._update_status()

    def _draw_rings(self) -> None:
        index = self._index()
        rows = [index[i] for i in self.highlight if i in index]
        self.rings.setData(pos=self.coords[rows] if rows else np.zeros((0, 2)))

    def _index(self) -> dict[str, int]:
        return {} if self.data is None else {p.id: i for i, p in enumerate(self.data.points)}

    def _update_status(self) -> None:
        if self.data is None:
            self.status.clear()
            return
        index = self._index()
        shown = sum(1 for i in self.highlight if i in index)
        self.status.setText(status_text(self.data, self.method, shown, len(self.highlight)))

    def colours(self) -> dict[str, str]:
        """Each point's colour as drawn (tests and screenshots read it)."""
        out: dict[str, str] = {}
        if self.data is None:
            return out
        by = self.colour_by.currentText()
        index, _ = colour_groups([label_of(p, by) for p in self.data.points])
        for point, slot in zip(self.data.points, index, strict=True):
            out[point.id] = OTHER_COLOUR if slot < 0 else PALETTE[slot]
        return out

    # -- hover, click, lasso ----------------------------------------------------------------

    def point_at(self, scene_pos: QPointF) -> int | None:
        """The point under a scene position (within a few pixels)."""
        if self.data is None or not self.data.points:
            return None
        view = self.view.mapSceneToView(scene_pos)
        pixel = self.view.viewPixelSize()
        return nearest(self.coords, view.x(), view.y(), HOVER_RADIUS_PX * max(pixel))

    def _mouse_moved(self, scene_pos: QPointF) -> None:
        row = self.point_at(scene_pos)
        if row is None or self.data is None:
            self.hover.clear()
            self.plot.setToolTip("")
            return
        text = hover_text(self.data.points[row])
        self.hover.setText(text)
        self.plot.setToolTip(text)

    def _mouse_clicked(self, ev: Any) -> None:
        if ev.button() != Qt.MouseButton.LeftButton or self.data is None:
            return
        row = self.point_at(ev.scenePos())
        if row is not None:
            ev.accept()
            self.context.navigator.open_memory(self.data.points[row].id)

    def _lasso_toggled(self, on: bool) -> None:
        self.view.lasso_enabled = on
        self.view.setMouseEnabled(x=not on, y=not on)

    def select_polygon(self, polygon: npt.NDArray[np.float64]) -> None:
        """Select the points inside `polygon` (view coordinates) and list them below."""
        if self.data is None:
            return
        rows = inside(self.coords, polygon)
        self.selected = [self.data.points[int(r)].id for r in rows]
        self.selection.clear()
        for r in rows:
            point = self.data.points[int(r)]
            item = QListWidgetItem(f"{point.type} · {point.preview[:SELECTION_PREVIEW]}")
            item.setData(Qt.ItemDataRole.UserRole, point.id)
            item.setToolTip(point.preview)
            self.selection.addItem(item)
        count = len(self.selected)
        self.selection_count.setText(f"{count:,} selected" if count else "Nothing selected")
        self._below.setVisible(True)

    def _open_item(self, item: QListWidgetItem) -> None:
        memory_id = item.data(Qt.ItemDataRole.UserRole)
        if memory_id:
            self.context.navigator.open_memory(str(memory_id))

    # -- UMAP runs --------------------------------------------------------------------------

    def start_umap(self) -> None:
        projection, agent = self.context.service.projection, self.context.agent_id
        self._set_progress(JobStatus("running", "starting"))
        self.context.tasks.call(
            projection.start_umap,
            agent,
            DIMENSIONS,
            done=self._job_changed,
            failed=self._job_failed,
        )

    def cancel_umap(self) -> None:
        projection, agent = self.context.service.projection, self.context.agent_id
        self.cancel_button.setEnabled(False)
        self.context.tasks.call(
            projection.cancel_umap,
            agent,
            DIMENSIONS,
            done=self._job_changed,
            failed=self._job_failed,
        )

    def _job_changed(self, job: JobStatus) -> None:
        self._set_progress(job if job.running else None)

    def _job_failed(self, exc: BaseException) -> None:
        self._set_progress(None)
        self.banner.show_message(f"UMAP could not start: {exc}")

    def _set_progress(self, job: JobStatus | None) -> None:
        running = job is not None and job.running
        self.progress.setVisible(running)
        self.cancel_button.setVisible(running)
        self.cancel_button.setEnabled(running)
        self.compute_button.setVisible(not running)
        stale = (
            self.data is not None and self.data.umap is None and self.data.job.state == "completed"
        )
        self.compute_button.setText("Recompute UMAP" if stale else "Compute UMAP")
        self.compute_button.setEnabled(self.data is not None and len(self.data.points) >= 3)
        if job is not None and running:
            self.progress.setValue(round(job.fraction * 100))
            self.progress.setToolTip(f"UMAP: {job.phase or 'starting'} (PCA shown meanwhile)")

    # -- events -----------------------------------------------------------------------------

    def _event(self, event: Event) -> None:
        if event.agent_id not in (None, self.context.agent_id):
            return
        if isinstance(event, ProjectionProgress) and event.dimensions == DIMENSIONS:
            self._set_progress(JobStatus("running", event.phase, event.fraction))
        elif isinstance(event, ProjectionFinished) and event.dimensions == DIMENSIONS:
            self._set_progress(None)
            if event.outcome == "failed":
                self.banner.show_message(f"UMAP failed: {event.error}")
            if event.outcome == "completed":
                self.load()
        elif event.kind in REFRESH_ON and event.agent_id == self.context.agent_id:
            self._dirty = True
            if self.isVisible():
                self._refresh.start()


def _legend_html(legend: list[tuple[str, int, str]]) -> str:
    swatches = []
    for label, count, colour in legend:
        name = label.replace("&", "&amp;").replace("<", "&lt;")
        swatches.append(f'<span style="color:{QColor(colour).name()}">●</span> {name} ({count:,})')
    return " &nbsp; ".join(swatches)
