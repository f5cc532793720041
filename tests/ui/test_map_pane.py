"""The Map pane over a real facade with hash-embedder vectors; UMAP runs use a fast fake reducer
in the real worker process (support.projection_fakes)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from pytestqt.qtbot import QtBot
from support.projection_fakes import ACTOR, SLOW, remember_topics, use_reducer

from signet_desktop.config import SignetConfig, WorkspacePaths
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest
from signet_desktop.ui.event_bridge import EventBridge
from signet_desktop.ui.map_pane import (
    PALETTE,
    MapPane,
    colour_groups,
    inside,
    label_of,
    nearest,
)
from signet_desktop.ui.pane import PaneContext, discover_panes
from signet_desktop.ui.panes.map import build_map_pane
from signet_desktop.ui.tasks import TaskRunner
from tests.ui.conftest import RecordingNavigator

pytestmark = pytest.mark.gui


@pytest.fixture
def vector_service(tmp_path: Path) -> Iterator[SignetService]:
    """A real facade whose memories get hash-embedder vectors at once."""
    options = BuildOptions(embedder=HashEmbedder(64), inline_vectors=True)
    svc = build_service(WorkspacePaths.for_root(tmp_path / "ws"), SignetConfig(), options)
    use_reducer(svc)
    yield svc
    svc.close()


@pytest.fixture
def context(
    qt_loop: asyncio.AbstractEventLoop, vector_service: SignetService, tmp_path: Path
) -> Iterator[PaneContext]:
    bridge = EventBridge(vector_service.events)
    tasks = TaskRunner()
    yield PaneContext(
        service=vector_service, events=bridge, tasks=tasks,
        navigator=RecordingNavigator(), workspace=tmp_path / "ws",
    )  # fmt: skip
    tasks.cancel_all()
    bridge.close()


def make_pane(qtbot: QtBot, context: PaneContext, *, auto_umap: bool = False) -> MapPane:
    pane = MapPane(context)
    pane.auto_umap = auto_umap
    qtbot.addWidget(pane)
    pane.resize(900, 700)
    pane.show()
    return pane


def run_until(
    condition: Callable[[], bool], action: Callable[[], object] | None = None, timeout: float = 30
) -> None:
    """Do `action` on the running qasync loop, then run it until `condition()` holds."""
    loop = asyncio.get_event_loop()

    async def go() -> None:
        if action is not None:
            action()
        while not condition():
            await asyncio.sleep(0.02)

    loop.run_until_complete(asyncio.wait_for(go(), timeout))


def open_pane(qtbot: QtBot, pane: MapPane) -> None:
    loaded: list[bool] = []
    pane.map_loaded.connect(lambda: loaded.append(True))
    run_until(lambda: bool(loaded), pane.activated)


def scene_pos(pane: MapPane, row: int) -> QPointF:
    x, y = pane.coords[row]
    return pane.view.mapViewToScene(QPointF(float(x), float(y)))


def viewport_pos(pane: MapPane, row: int) -> QPoint:
    return pane.plot.mapFromScene(scene_pos(pane, row))


def test_the_pane_registers_itself() -> None:
    spec = next(s for s in discover_panes() if s.key == "map")
    assert (spec.title, spec.icon, spec.order, spec.shortcut) == ("Map", "map.svg", 80, "Ctrl+9")
    assert spec.factory is build_map_pane  # the widget module loads when the pane is built


def test_no_vectors_shows_what_to_do(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    pane = make_pane(qtbot, pane_context)
    open_pane(qtbot, pane)
    assert pane.stack.currentWidget() is pane.empty
    assert "embedding.provider" in pane.empty.hint_label.text(), pane.banner.text_label.text()
    assert not pane.compute_button.isEnabled()


def test_points_are_drawn_with_pca_at_once(qtbot: QtBot, context: PaneContext) -> None:
    ids = remember_topics(context.service, 5)
    pane = make_pane(qtbot, context)
    open_pane(qtbot, pane)
    assert pane.stack.currentIndex() == 1 and pane.method == "pca"
    assert pane.coords.shape == (15, 2)
    drawn = sum(len(item.data) for item in pane._items)
    assert drawn == 15
    assert sorted(p.id for p in pane.data.points) == sorted(ids)  # type: ignore[union-attr]
    assert pane.status.text().startswith("15 memories · PCA")
    assert pane.layout_choice.model().item(1).isEnabled() is False  # type: ignore[attr-defined]


@pytest.mark.parametrize("count", [1, 2])
def test_one_or_two_points(qtbot: QtBot, context: PaneContext, count: int) -> None:
    for i in range(count):
        context.service.memories.remember(RememberRequest(content=f"solo note {i}"), ACTOR)
    pane = make_pane(qtbot, context, auto_umap=True)
    open_pane(qtbot, pane)
    assert pane.coords.shape == (count, 2) and not pane.compute_button.isEnabled()
    assert not pane.progress.isVisible()  # nothing to reduce: no run started


def test_colour_by_changes_the_colours(qtbot: QtBot, context: PaneContext) -> None:
    remember_topics(context.service, 4)
    pane = make_pane(qtbot, context)
    open_pane(qtbot, pane)
    by_type = pane.colours()
    assert len(set(by_type.values())) == 3  # fact, decision, preference
    pane.colour_by.setCurrentText("who")
    by_who = pane.colours()
    assert len(set(by_who.values())) == 2 and by_who != by_type
    assert "alice" in pane.legend.text() and "bob" in pane.legend.text()
    pane.colour_by.setCurrentText("tag")
    assert len(set(pane.colours().values())) == 3 and "billing" in pane.legend.text()


def test_hover_shows_the_memory_text(qtbot: QtBot, context: PaneContext) -> None:
    remember_topics(context.service, 3)
    pane = make_pane(qtbot, context)
    open_pane(qtbot, pane)
    row = 4
    point = pane.data.points[row]  # type: ignore[union-attr]
    pane._mouse_moved(scene_pos(pane, row))
    assert point.preview in pane.hover.text() and point.type in pane.hover.text()
    assert pane.plot.toolTip() == pane.hover.text()
    far = pane.view.mapViewToScene(QPointF(10_000.0, 10_000.0))
    pane._mouse_moved(far)
    assert pane.hover.text() == ""


def test_a_click_opens_the_memory(qtbot: QtBot, context: PaneContext) -> None:
    remember_topics(context.service, 3)
    pane = make_pane(qtbot, context)
    open_pane(qtbot, pane)
    row = 2
    navigator = pane.context.navigator
    assert isinstance(navigator, RecordingNavigator)
    run_until(
        lambda: navigator.opened != [],
        lambda: qtbot.mouseClick(
            pane.plot.viewport(), Qt.MouseButton.LeftButton, pos=viewport_pos(pane, row)
        ),
        timeout=5,
    )
    assert navigator.opened == [pane.data.points[row].id]  # type: ignore[union-attr]


def test_lasso_lists_the_selection_and_opens_from_it(qtbot: QtBot, context: PaneContext) -> None:
    remember_topics(context.service, 4)
    pane = make_pane(qtbot, context)
    open_pane(qtbot, pane)
    x, y = pane.coords[:, 0], pane.coords[:, 1]
    polygon = np.array([[x.min() - 1, y.min() - 1], [0, y.min() - 1], [0, y.max() + 1],
                        [x.min() - 1, y.max() + 1]])  # fmt: skip
    pane.view.lasso_finished.emit(polygon)
    expected = {p.id for p, c in zip(pane.data.points, pane.coords, strict=True) if c[0] < 0}  # type: ignore[union-attr]
    assert expected and set(pane.selected) == expected
    assert pane.selection.count() == len(expected)
    assert pane.selection_count.text() == f"{len(expected)} selected"
    item = pane.selection.item(0)
    pane.selection.itemClicked.emit(item)
    navigator = pane.context.navigator
    assert isinstance(navigator, RecordingNavigator)
    assert navigator.opened == [item.data(Qt.ItemDataRole.UserRole)]


def test_recall_highlights_are_ringed(qtbot: QtBot, context: PaneContext) -> None:
    ids = remember_topics(context.service, 3)
    pane = make_pane(qtbot, context)
    pane.reveal(highlight=[ids[0], ids[5], "not-on-the-map"])  # before the data arrives
    open_pane(qtbot, pane)
    rings = pane.rings.getData()
    index = {p.id: i for i, p in enumerate(pane.data.points)}  # type: ignore[union-attr]
    assert len(rings[0]) == 2
    assert {(round(a, 3), round(b, 3)) for a, b in zip(*rings, strict=True)} == {
        tuple(np.round(pane.coords[index[i]], 3)) for i in (ids[0], ids[5])
    }
    assert "2 of 3 highlighted" in pane.status.text()
    pane.reveal(highlight=[])
    assert len(pane.rings.getData()[0]) == 0


def test_umap_runs_in_the_background_and_replaces_pca(qtbot: QtBot, context: PaneContext) -> None:
    remember_topics(context.service, 4)
    pane = make_pane(qtbot, context, auto_umap=True)
    open_pane(qtbot, pane)
    assert pane.method == "pca"  # PCA at once, while UMAP computes
    run_until(lambda: pane.method == "umap")
    assert not pane.progress.isVisible() and pane.compute_button.isVisible()
    assert pane.layout_choice.currentText() == "UMAP"
    assert pane.status.text().startswith("12 memories · UMAP")
    pane.layout_choice.setCurrentText("PCA")
    assert pane.method == "pca"


def test_cancel_stops_the_run(qtbot: QtBot, context: PaneContext) -> None:
    use_reducer(context.service, SLOW)
    remember_topics(context.service, 3)
    pane = make_pane(qtbot, context)
    open_pane(qtbot, pane)
    run_until(lambda: pane.progress.value() == 20, pane.compute_button.click)
    assert pane.progress.isVisible() and pane.cancel_button.isVisible()
    run_until(lambda: not pane.progress.isVisible(), pane.cancel_button.click)
    assert context.service.projection.job_status("default").state == "cancelled"
    assert pane.method == "pca"


def test_new_memories_refresh_the_map_without_a_run(qtbot: QtBot, context: PaneContext) -> None:
    remember_topics(context.service, 2)
    pane = make_pane(qtbot, context)
    open_pane(qtbot, pane)
    assert pane.coords.shape == (6, 2)
    for i in range(3):
        context.service.memories.remember(RememberRequest(content=f"fresh note {i}"), ACTOR)
    run_until(lambda: pane.coords.shape == (9, 2))
    assert context.service.projection.job_status("default").state == "idle"


def test_plain_helpers() -> None:
    index, legend = colour_groups(["a", "b", "a", "c", "d"], colours=3)
    assert index.tolist() == [0, 1, 0, -1, -1]
    assert legend == [("a", 2, PALETTE[0]), ("b", 1, PALETTE[1]), ("other", 2, "#8A8F98")]
    coords = np.array([[0.0, 0.0], [5.0, 5.0], [10.0, 0.0]])
    assert nearest(coords, 4.5, 4.0, 2.0) == 1 and nearest(coords, 50, 50, 2.0) is None
    square = np.array([[-1.0, -1.0], [6.0, -1.0], [6.0, 6.0], [-1.0, 6.0]])
    assert inside(coords, square).tolist() == [0, 1]
    assert inside(coords, square[:2]).tolist() == []


def test_a_hundred_thousand_points_are_drawn(qtbot: QtBot, pane_context: PaneContext) -> None:
    """The drawing path at scale, fed a synthetic MapData (no database of 100k rows here)."""
    from signet_desktop.projection.layout import pca_layout
    from signet_desktop.projection.source import MapPoint
    from signet_desktop.service.projection import JobStatus, Layout, MapData

    rng = np.random.default_rng(0)
    count = 100_000
    matrix = rng.normal(size=(count, 16)).astype(np.float32)
    points = tuple(
        MapPoint(f"m{i}", "default", ("fact", "decision")[i % 2], (f"t{i % 13}",), None, 0.5,
                 False, f"note {i}", "2026-01-01T00:00:00.000Z", None, None)
        for i in range(count)
    )  # fmt: skip
    data = MapData("default", 2, None, points, Layout("pca", pca_layout(matrix)), None, JobStatus())
    pane = make_pane(qtbot, pane_context)
    pane._seq = 1
    pane._loaded(1, data, "hash")
    assert sum(len(item.data) for item in pane._items) == count
    pane.colour_by.setCurrentText("tag")
    assert len(pane._items) == len(PALETTE)  # 9 tags + other
    assert label_of(points[0], "tag") == "t0"


class _SlowHashEmbedder(HashEmbedder):
    """Vectors arrive two seconds after the remember: later than the map's debounce."""

    def embed(self, texts):  # type: ignore[no-untyped-def]
        import time

        time.sleep(2.0)
        return super().embed(texts)


def test_a_vector_that_follows_its_remember_reaches_the_map(
    qt_loop: asyncio.AbstractEventLoop, qtbot: QtBot, tmp_path: Path
) -> None:
    """memory.created comes before the vector; memory.embedded refreshes the map again."""
    paths = WorkspacePaths.for_root(tmp_path / "ws2")
    service = build_service(paths, SignetConfig(), BuildOptions(embedder=_SlowHashEmbedder(64)))
    use_reducer(service)
    bridge = EventBridge(service.events)
    tasks = TaskRunner()
    context = PaneContext(
        service=service, events=bridge, tasks=tasks,
        navigator=RecordingNavigator(), workspace=tmp_path / "ws2",
    )  # fmt: skip
    try:
        pane = make_pane(qtbot, context)
        open_pane(qtbot, pane)
        assert pane.coords.shape[0] == 0
        service.memories.remember(RememberRequest(content="billing runs on postgres"), ACTOR)
        run_until(lambda: pane.coords.shape[0] == 1, timeout=15)
    finally:
        tasks.cancel_all()
        bridge.close()
        service.close()
