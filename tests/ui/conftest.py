"""Qt tests run offscreen; a qasync loop drives the window's coroutines as in the real app."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import asyncio
import gc
from collections.abc import Iterator
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QApplication

from signet_desktop.config import SignetConfig, WorkspacePaths
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from signet_desktop.ui.event_bridge import EventBridge
from signet_desktop.ui.pane import PaneContext
from signet_desktop.ui.settings import ShellSettings
from signet_desktop.ui.tasks import TaskRunner


@pytest.fixture(autouse=True)
def _release_qt_objects(qapp: QApplication) -> Iterator[None]:
    """After each UI test, run its deferred deletes and collect the Python cycles that hold
    its Qt objects here, on the GUI thread. Left to the garbage collector they die whenever
    it runs next — possibly on a worker thread of a later test, which crashes PySide6.

    What survives is then frozen (`gc.freeze`): the next test's collection walks only what
    was made since, not the whole heap of an xdist worker (~0.5 s a test at a million
    objects). Frozen objects are still freed by reference counting; only a later cycle
    among them is never collected, which at worst leaks, never deletes off-thread."""
    yield
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()
    QApplication.processEvents()
    gc.freeze()


@pytest.fixture
def qt_loop(qapp: QApplication) -> Iterator[asyncio.AbstractEventLoop]:
    """A qasync event loop over the test QApplication (closed after the test)."""
    loop = qasync.QEventLoop(qapp)
    asyncio.set_event_loop(loop)
    yield loop
    loop.close()
    asyncio.set_event_loop(None)


@pytest.fixture
def service(tmp_path: Path) -> Iterator[SignetService]:
    """A real facade over a fresh workspace database (lexical recall: no model to load)."""
    paths = WorkspacePaths.for_root(tmp_path / "ws")
    paths.ensure()
    built = build_service(paths, SignetConfig(), BuildOptions(no_embedder=True))
    yield built
    built.close()


@pytest.fixture
def settings(tmp_path: Path) -> ShellSettings:
    """Shell settings in an ini file under tmp (never the user's QSettings)."""
    return ShellSettings.at(tmp_path / "settings.ini")


@pytest.fixture
def bridge(service: SignetService) -> Iterator[EventBridge]:
    """The service's bus bridged to Qt signals, closed after the test."""
    events = EventBridge(service.events)
    yield events
    events.close()


class RecordingNavigator:
    """A `Navigator` that records what a pane asked the shell for."""

    def __init__(self) -> None:
        self.panes: list[tuple[str, dict[str, object]]] = []
        self.opened: list[str] = []

    def show_pane(self, key: str, **reveal: object) -> None:
        self.panes.append((key, reveal))

    def open_memory(self, memory_id: str) -> None:
        self.opened.append(memory_id)


@pytest.fixture
def navigator() -> RecordingNavigator:
    return RecordingNavigator()


@pytest.fixture
def pane_context(
    qapp: QApplication, service: SignetService, navigator: RecordingNavigator, tmp_path: Path
) -> Iterator[PaneContext]:
    """A `PaneContext` over the real test facade (events bridged, tasks on the qasync loop)."""
    bridge = EventBridge(service.events)
    tasks = TaskRunner()
    yield PaneContext(
        service=service,
        events=bridge,
        tasks=tasks,
        navigator=navigator,
        workspace=tmp_path / "ws",
        url="http://127.0.0.1:3850",
    )
    tasks.cancel_all()
    bridge.close()
