"""The Health pane over a real facade: the doctor's checks, pause/resume, coverage, the log."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from signet_desktop.config import SignetConfig, WorkspacePaths
from signet_desktop.daemon.logring import log_ring
from signet_desktop.daemon.workers import WorkerThreads
from signet_desktop.domain.events import (
    EmbeddingProgress,
    Event,
    JobCompleted,
    JobFailed,
    MemoriesEmbedded,
    MemoryCreated,
)
from signet_desktop.domain.memory import Actor
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.diagnostics import render
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest
from signet_desktop.ui import health_report
from signet_desktop.ui.event_bridge import EventBridge
from signet_desktop.ui.health_report import (
    CoverageCount,
    EmbeddingFacts,
    HealthReport,
    health_checks,
    read_health,
)
from signet_desktop.ui.pane import Navigator, PaneContext, discover_panes
from signet_desktop.ui.panes import health as health_pane
from signet_desktop.ui.panes.health import PANE, HealthPane
from signet_desktop.ui.tasks import TaskRunner

pytestmark = pytest.mark.gui

TIMEOUT_S = 10.0


def wait_until(condition: Callable[[], bool], timeout: float = TIMEOUT_S) -> None:
    """Run the qasync loop (tasks and queued signals) until `condition()` holds."""
    loop = asyncio.get_event_loop()

    async def run() -> None:
        deadline = loop.time() + timeout
        while not condition():
            if loop.time() > deadline:
                raise AssertionError("the pane did not get there in time")
            await asyncio.sleep(0.02)

    loop.run_until_complete(run())


def run_for(seconds: float) -> None:
    asyncio.get_event_loop().run_until_complete(asyncio.sleep(seconds))


def open_pane(qtbot: QtBot, context: PaneContext) -> HealthPane:
    pane = HealthPane(context)
    qtbot.addWidget(pane)
    pane.resize(1100, 760)
    pane.show()
    pane.activated()
    wait_until(lambda: pane.report is not None)
    return pane


def test_registers_itself_for_the_rail() -> None:
    assert PANE in discover_panes()
    assert (PANE.key, PANE.order, PANE.shortcut) == ("health", 90, "Ctrl+0")


def test_shows_what_signet_doctor_checks(
    qt_loop: asyncio.AbstractEventLoop, qtbot: QtBot, pane_context: PaneContext
) -> None:
    workspace = pane_context.workspace
    (workspace / "agent.yaml").write_text("git:\n  enabled: true\nsearch:\n  alpah: 0.5\n")
    pane = open_pane(qtbot, pane_context)
    shown = pane.checks.texts()
    status = pane_context.service.status()
    assert f"✓ config {workspace / 'agent.yaml'} parsed" in shown
    assert any(line.startswith("    ignored") and "git" in line for line in shown)
    assert any(
        line.startswith("! config:") and "did you mean 'search.alpha'" in line for line in shown
    )
    assert (
        f"✓ database {status.database.path} open (SQLite {status.database.sqlite_version}, "
        f"{status.database.migrations} migrations applied)"
    ) in shown
    assert any(line.startswith("✓ sqlite-vec loaded") for line in shown)
    assert "! vectorCompleteness unavailable: no vector search: recall is keyword-only" in shown
    # The same lines `signet doctor`'s shared checks give for these facts.
    report = read_health(pane_context.service, workspace)
    assert shown == render(list(report.checks))
    assert report.checks == tuple(health_checks(workspace, status))
    assert "No embedder configured" in pane.embedding.model.text()
    assert pane.summary.text() == "Ready · 2 checks need a look"


def test_doctor_reads_the_same_values_back_from_the_wire(pane_context: PaneContext) -> None:
    """`signet doctor` judges what /api/status says; the pane, the values it was made from."""
    from signet_desktop.api.views import service_status_json
    from signet_desktop.cli.status_wire import embedding_from_wire, vector_from_wire

    status = pane_context.service.status()
    wire = service_status_json(status)
    assert vector_from_wire(wire) == status.vector
    assert embedding_from_wire(wire) == status.embedding


def test_a_config_change_shows_after_the_next_event(
    qt_loop: asyncio.AbstractEventLoop, qtbot: QtBot, pane_context: PaneContext
) -> None:
    pane = open_pane(qtbot, pane_context)
    assert "✓ no agent.yaml: using defaults" in pane.checks.texts()
    (pane_context.workspace / "agent.yaml").write_text("search:\n  alpha: [1,\n")
    pane_context.service.status_board.set("config", {"reloaded": True})  # status.changed
    wait_until(lambda: any(line.startswith("✗ config:") for line in pane.checks.texts()))
    assert "failing" in pane.summary.text()


@pytest.fixture
def hosted(tmp_path: Path) -> Iterator[tuple[SignetService, WorkerThreads]]:
    """A facade with an embedder, its workers hosted on threads as the headless daemon does."""
    paths = WorkspacePaths.for_root(tmp_path / "hosted")
    paths.ensure()
    service = build_service(paths, SignetConfig(), BuildOptions(embedder=HashEmbedder(64)))
    host = WorkerThreads(service.pipeline.workers, service.events)
    service.pipeline.attach(host)
    host.start()
    yield service, host
    host.stop(5)
    service.pipeline.detach()
    service.close()


@pytest.fixture
def hosted_context(
    qapp: QApplication, hosted: tuple[SignetService, WorkerThreads], navigator: Navigator
) -> Iterator[PaneContext]:
    service, _ = hosted
    bridge = EventBridge(service.events)
    tasks = TaskRunner()
    yield PaneContext(
        service=service,
        events=bridge,
        tasks=tasks,
        navigator=navigator,
        workspace=service.status().database.path.parent.parent,
    )
    tasks.cancel_all()
    bridge.close()


def test_pause_and_resume_change_the_pipeline_and_the_view_follows_the_events(
    qt_loop: asyncio.AbstractEventLoop,
    qtbot: QtBot,
    hosted: tuple[SignetService, WorkerThreads],
    hosted_context: PaneContext,
) -> None:
    service, _ = hosted
    seen: list[Event] = []
    service.events.connect(seen.append)
    pane = open_pane(qtbot, hosted_context)
    workers = pane.workers
    wait_until(lambda: workers.worker_state("embedding") == "running")
    assert workers.pause_button.isEnabled() and not workers.resume_button.isEnabled()

    workers.pause_button.click()
    wait_until(lambda: workers.worker_state("embedding") == "paused")
    assert service.pipeline.paused
    assert service.pipeline.status().workers[0].state == "paused"
    assert any(e.kind == "worker.state" and getattr(e, "state", "") == "paused" for e in seen)
    wait_until(lambda: "! worker embedding paused" in pane.checks.texts())
    assert workers.mode.text().startswith("Paused")
    assert workers.resume_button.isEnabled() and not workers.pause_button.isEnabled()

    workers.resume_button.click()
    wait_until(lambda: workers.worker_state("embedding") == "running")
    assert not service.pipeline.paused
    wait_until(lambda: "✓ worker embedding running" in pane.checks.texts())
    assert workers.mode.text() == "Running"


def test_coverage_bar_moves_with_embedding_progress_events(
    qt_loop: asyncio.AbstractEventLoop,
    qtbot: QtBot,
    hosted: tuple[SignetService, WorkerThreads],
    hosted_context: PaneContext,
) -> None:
    service, _ = hosted
    pane = open_pane(qtbot, hosted_context)
    bar = pane.embedding.bar
    assert pane.embedding.model.text().startswith("hash · hash-64")

    def publish(embedded: int) -> None:  # from a worker thread, as the tracker does
        event = EmbeddingProgress(generation=1, embedded=embedded, total=400)
        thread = threading.Thread(target=service.events.publish, args=(event,))
        thread.start()
        thread.join()

    publish(120)
    wait_until(lambda: (bar.value(), bar.maximum()) == (120, 400))
    assert pane.embedding.coverage.text() == "120 / 400 (30%)"
    publish(310)
    wait_until(lambda: bar.value() == 310)
    assert pane.embedding.coverage.text() == "310 / 400 (78%)"


def test_a_real_backfill_moves_the_bar(
    qt_loop: asyncio.AbstractEventLoop, qtbot: QtBot, navigator: Navigator, tmp_path: Path
) -> None:
    """Memories stored without an embedder get their vectors from the tracker's backfill."""
    paths = WorkspacePaths.for_root(tmp_path / "backfill")
    paths.ensure()
    plain = build_service(paths, SignetConfig(), BuildOptions(no_embedder=True))
    for n in range(6):
        plain.memories.remember(RememberRequest(content=f"billing fact number {n}"), Actor())
    plain.close()
    service = build_service(paths, SignetConfig(), BuildOptions(embedder=HashEmbedder(64)))
    bridge, tasks = EventBridge(service.events), TaskRunner()
    host = WorkerThreads(service.pipeline.workers, service.events)
    service.pipeline.attach(host)
    context = PaneContext(service, bridge, tasks, navigator, paths.root)
    try:
        pane = open_pane(qtbot, context)
        assert pane.embedding.coverage.text() == "0 / 6 (0%)"
        values: list[int] = []
        pane.embedding.bar.valueChanged.connect(values.append)
        host.start()  # the tracker's idle scan embeds the six and publishes embedding.progress
        wait_until(lambda: pane.embedding.coverage.text() == "6 / 6 (100%)")
        assert values[-1] == pane.embedding.bar.maximum() == 6
    finally:
        host.stop(5)
        service.pipeline.detach()
        tasks.cancel_all()
        bridge.close()
        service.close()


def test_vectors_that_follow_a_remember_fill_the_bar(
    qt_loop: asyncio.AbstractEventLoop,
    qtbot: QtBot,
    hosted: tuple[SignetService, WorkerThreads],
    hosted_context: PaneContext,
) -> None:
    """memory.created and memory.embedded move the bar although status() caches coverage."""
    service, _ = hosted
    pane = open_pane(qtbot, hosted_context)
    for n in range(5):
        service.memories.remember(RememberRequest(content=f"billing fact number {n}"), Actor())
    wait_until(lambda: pane.embedding.coverage.text() == "5 / 5 (100%)", timeout=5)
    run_for(0.5)  # the readings those events asked for do not put an older count back
    assert pane.embedding.coverage.text() == "5 / 5 (100%)"
    assert pane.embedding.bar.value() == pane.embedding.bar.maximum() == 5


@pytest.fixture
def ring_logger() -> Iterator[logging.Logger]:
    """A logger writing into the process's ring, as `daemonlog.install` arranges."""
    logger = logging.getLogger("signet_desktop.test.health")
    ring = log_ring()
    ring.clear()
    logger.addHandler(ring)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    yield logger
    logger.removeHandler(ring)
    ring.clear()


def test_log_lines_arrive_live_and_filter_by_level(
    qt_loop: asyncio.AbstractEventLoop,
    qtbot: QtBot,
    pane_context: PaneContext,
    ring_logger: logging.Logger,
) -> None:
    ring_logger.info("before the pane opened")
    pane = open_pane(qtbot, pane_context)
    log = pane.log
    assert any("before the pane opened" in line for line in log.shown())

    worker = threading.Thread(target=ring_logger.warning, args=("disk almost full",))
    worker.start()
    worker.join()
    ring_logger.debug("a debug detail")
    wait_until(lambda: any("disk almost full" in line for line in log.shown()))
    assert not any("a debug detail" in line for line in log.shown())  # Info by default

    log.level.setCurrentIndex(log.level.findData(logging.WARNING))
    assert not any("before the pane opened" in line for line in log.shown())
    assert any("WARNING" in line and "disk almost full" in line for line in log.shown())
    ring_logger.info("quiet news")
    ring_logger.error("write failed")
    wait_until(lambda: any("write failed" in line for line in log.shown()))
    assert not any("quiet news" in line for line in log.shown())

    log.level.setCurrentIndex(log.level.findData(logging.DEBUG))
    shown = log.shown()
    assert [
        m for m in ("before", "disk", "a debug", "quiet", "write") if any(m in s for s in shown)
    ]
    assert len(shown) == 5
    pane.shutdown()
    ring_logger.error("after shutdown")
    run_for(0.1)
    assert not any("after shutdown" in line for line in log.shown())


def test_a_burst_of_job_events_costs_few_readings_and_shows_the_last_job(
    qt_loop: asyncio.AbstractEventLoop,
    qtbot: QtBot,
    hosted: tuple[SignetService, WorkerThreads],
    hosted_context: PaneContext,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    service, _ = hosted
    readings: list[float] = []

    def counted(service: SignetService, workspace: Path, agent_id: str) -> HealthReport:
        readings.append(time.monotonic())
        return health_report.read_health(service, workspace, agent_id)

    monkeypatch.setattr(health_pane, "read_health", counted)
    pane = open_pane(qtbot, hosted_context)
    wait_until(lambda: pane.workers.worker_state("embedding") == "running")
    run_for(0.5)
    before = len(readings)
    for n in range(200):  # a backfill finishing jobs as fast as it can
        service.events.publish(
            JobCompleted(job_id=f"j{n}", job_type="embedding_backfill", worker="embedding",
                         duration_ms=1.0)
        )  # fmt: skip
    service.events.publish(
        JobFailed(job_id="j-bad", job_type="embedding_backfill", worker="embedding",
                  error="provider timeout", attempt=1, retry_at=None)
    )  # fmt: skip
    wait_until(lambda: last_job_text(pane).endswith(" failed"))
    run_for(1.0)
    assert 1 <= len(readings) - before <= 3  # coalesced: not one reading per event
    row = pane.workers._row_of("embedding")
    assert row is not None
    error = pane.workers.table.item(row, 3)
    assert error is not None and error.text() == "provider timeout"


def last_job_text(pane: HealthPane) -> str:
    row = pane.workers._row_of("embedding")
    item = None if row is None else pane.workers.table.item(row, 2)
    return "" if item is None else item.text()


def facts(generation: int | None, embedded: int, total: int) -> EmbeddingFacts:
    return EmbeddingFacts("hash", "hash-64", 64, generation, "active", embedded, total, "complete")


def test_coverage_count_prefers_events_until_the_status_cache_has_caught_up() -> None:
    count = CoverageCount(window_s=10)
    assert count.reading(facts(1, 3, 3), now=0)
    created = MemoryCreated(memory_id="m4", memory_type="fact", embedded=False)
    assert count.event(created, now=1)
    assert (count.embedded, count.total) == (3, 4)
    assert count.event(MemoriesEmbedded(memory_ids=("m4",), generation=1), now=2)
    assert (count.embedded, count.total) == (4, 4)
    assert not count.reading(facts(1, 3, 3), now=5)  # a cached, older count
    assert (count.embedded, count.total) == (4, 4)
    assert count.reading(facts(1, 2, 4), now=12.5)  # after the window: the truth (a re-embed)
    assert (count.embedded, count.total) == (2, 4)
    assert not count.event(MemoriesEmbedded(memory_ids=("x",), generation=9), now=13)
    assert count.event(EmbeddingProgress(generation=2, embedded=1, total=4), now=14)
    assert not count.reading(facts(1, 4, 4), now=15)  # the cached count of the old generation
    assert (count.generation, count.embedded) == (2, 1)
    assert count.reading(facts(2, 2, 4), now=25)
    assert (count.generation, count.embedded) == (2, 2)
