"""The Memories pane on a large store: time to the first page, to the end, and per-query costs.

Run: QT_QPA_PLATFORM=offscreen uv run python bench/inspector_memories.py [--size 100000]
     [--runs 20]

The store is written in bulk through `storage/memories.py: insert_memory` in 5,000-row write
transactions (setup, not timed; FTS follows through its trigger), with varied type, tags,
who, project, importance and pinned. Timings, offscreen on a qasync loop like the app:

- open: a new `MemoriesPane` is built, shown and activated until its first page is painted
  (construction, the count + first page trip to the thread pool, the reset, one paint); the
  first open of the process is also shown alone (the pool's threads open their read
  connections then);
- end: on that pane, the scroll bar is moved to the end until the last row is painted
  (one page fetched at offset size-200, not every page before it);
- jumps: 20 scroll-bar jumps to evenly spaced places, each until its rows are painted;
- facade: the calls the model makes (`browse`, `browse_count`, `browse_position`) by
  themselves, for the default order and for orders and filters without an index.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import qasync
from corpus import sentences
from PySide6.QtWidgets import QApplication

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.browse import BrowseQuery
from signet_desktop.domain.memory import NewMemory
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from signet_desktop.storage import memories as memory_rows
from signet_desktop.storage.database import open_database
from signet_desktop.ui.event_bridge import EventBridge
from signet_desktop.ui.memory_table_model import PAGE_SIZE, MemoryTableModel
from signet_desktop.ui.pane import PaneContext
from signet_desktop.ui.panes.memories import MemoriesPane
from signet_desktop.ui.tasks import TaskRunner

BATCH = 5000
TYPES = ("fact", "decision", "preference", "learning", "issue")
TAGS = (("infra",), ("db", "ops"), ("billing",), (), ("search", "infra"))
WHO = ("claude-code", "codex", "alice", "bob")
JUMPS = 20


class Navigator:
    def show_pane(self, key: str, **reveal: object) -> None: ...

    def open_memory(self, memory_id: str) -> None: ...


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))]


def row(name: str, values: list[float]) -> str:
    p50, p95 = statistics.median(values), percentile(values, 0.95)
    return f"| {name:<44} | {p50:>8.1f} | {p95:>8.1f} | {max(values):>8.1f} |"


def fill(db_path: Path, size: int) -> float:
    """`size` memories in large transactions; returns the seconds it took."""
    started = time.perf_counter()
    db = open_database(db_path)
    texts = sentences(size)
    for start in range(0, size, BATCH):
        with db.write() as conn:
            for n in range(start, min(size, start + BATCH)):
                new = NewMemory(
                    "default",
                    texts[n],
                    type=TYPES[n % len(TYPES)],
                    tags=TAGS[n % len(TAGS)],
                    who=WHO[n % len(WHO)],
                    project="billing" if n % 7 == 0 else None,
                    importance=(n % 11) / 10,
                    pinned=n % 97 == 0,
                    created_at=_stamp(n),
                )
                memory_rows.insert_memory(
                    conn, str(uuid.uuid4()), new, actor="bench", embedding_model=None
                )
    db.close()
    return time.perf_counter() - started


def _stamp(n: int) -> str:
    days, seconds = divmod(n * 37, 86400)  # ~43 days of memories at 100k
    hours, rest = divmod(seconds, 3600)
    day = f"2026-{1 + days // 28:02d}-{1 + days % 28:02d}"
    return f"{day}T{hours:02d}:{rest // 60:02d}:{rest % 60:02d}.000Z"


def has_row(model: MemoryTableModel, row: int) -> Callable[[], bool]:
    return lambda: model.has_loaded and model.memory_at(row) is not None


class Waker:
    """Wakes `until` on the model's signals (connected once: no polling, as in the app)."""

    def __init__(self, model: MemoryTableModel) -> None:
        self.woke = asyncio.Event()
        model.loaded.connect(self.wake)
        model.dataChanged.connect(self.wake)

    def wake(self, *_args: object) -> None:
        self.woke.set()

    async def until(self, condition: Callable[[], bool]) -> None:
        while not condition():
            self.woke.clear()
            await asyncio.wait_for(self.woke.wait(), timeout=30)


async def gui_timings(context: PaneContext, runs: int) -> dict[str, list[float]]:
    """Everything inside the running loop, as in the app (paints are forced synchronously)."""
    results: dict[str, list[float]] = {"open": [], "end": [], "jumps": []}
    for _ in range(runs):
        started = time.perf_counter()
        pane = MemoriesPane(context)
        pane.resize(1280, 800)
        pane.show()
        pane.activated()
        model = pane.model
        waker = Waker(model)
        await waker.until(has_row(model, 0))
        pane.repaint()
        results["open"].append((time.perf_counter() - started) * 1000)

        bar, last = pane.table.verticalScrollBar(), model.total - 1
        started = time.perf_counter()
        bar.setValue(bar.maximum())
        pane.table.viewport().repaint()  # asks for the last page
        await waker.until(has_row(model, last))
        pane.table.viewport().repaint()
        results["end"].append((time.perf_counter() - started) * 1000)

        for step in range(1, JUMPS + 1):
            started = time.perf_counter()
            bar.setValue(bar.maximum() * step // (JUMPS + 1))
            pane.table.viewport().repaint()
            shown = pane.table.rowAt(0)
            await waker.until(has_row(model, shown))
            pane.table.viewport().repaint()
            results["jumps"].append((time.perf_counter() - started) * 1000)
        await context.tasks.wait_idle()
        pane.shutdown()
        pane.hide()
        pane.setParent(None)
    return results


def facade_timings(service: SignetService, size: int, runs: int) -> dict[str, list[float]]:
    memories = service.memories
    deep = max(0, size - PAGE_SIZE)
    middle = memories.browse("default", BrowseQuery(), 1, size // 2)[0].id
    cases: dict[str, Callable[[], object]] = {
        "browse page 1 (created desc)": lambda: memories.browse("default", BrowseQuery()),
        f"browse offset {deep:,} (created desc)": lambda: memories.browse(
            "default", BrowseQuery(), PAGE_SIZE, deep
        ),
        "browse_count (no filter)": lambda: memories.browse_count("default", BrowseQuery()),
        "browse_position (middle row)": lambda: memories.browse_position(
            "default", BrowseQuery(), middle
        ),
        "browse page 1 by importance (no index)": lambda: memories.browse(
            "default", BrowseQuery(sort="importance")
        ),
        f"browse offset {deep:,} by who (no index)": lambda: memories.browse(
            "default", BrowseQuery(sort="who"), PAGE_SIZE, deep
        ),
        "browse_count text contains 'postgres'": lambda: memories.browse_count(
            "default", BrowseQuery(text="postgres")
        ),
        "browse page 1 tag 'billing'": lambda: memories.browse(
            "default", BrowseQuery(tag="billing")
        ),
        "browse_count tag 'billing'": lambda: memories.browse_count(
            "default", BrowseQuery(tag="billing")
        ),
    }
    results: dict[str, list[float]] = {}
    for name, call in cases.items():
        samples = []
        for _ in range(runs):
            started = time.perf_counter()
            call()
            samples.append((time.perf_counter() - started) * 1000)
        results[name] = samples
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with tempfile.TemporaryDirectory(prefix="signet-bench-") as tmp:
        paths = WorkspacePaths.for_root(Path(tmp) / "ws")
        paths.ensure()
        build_service(paths, SignetConfig(), BuildOptions(no_embedder=True)).close()  # migrate
        seconds = fill(paths.db_path, args.size)
        service = build_service(paths, SignetConfig(), BuildOptions(no_embedder=True))
        bridge = EventBridge(service.events)
        tasks = TaskRunner()
        context = PaneContext(service, bridge, tasks, Navigator(), paths.root)
        try:
            gui = loop.run_until_complete(gui_timings(context, args.runs))
            facade = facade_timings(service, args.size, args.runs)
        finally:
            tasks.cancel_all()
            bridge.close()
            service.close()
            loop.close()  # joins the executor's threads (Qt aborts on a running QThread)
            asyncio.set_event_loop(None)
            gc.collect()  # the panes go while the QApplication is still there
    load = os.getloadavg()
    print(
        f"Memories pane on {args.size:,} memories ({seconds:.1f} s to write them); {args.runs} "
        f"runs; load average {load[0]:.2f}"
    )
    print(f"\n| {'pane (offscreen, qasync), ms':<44} | {'p50':>8} | {'p95':>8} | {'max':>8} |")
    print(f"| {'-' * 44} | {'-' * 7}: | {'-' * 7}: | {'-' * 7}: |")
    print(row("open, the first in the process (cold)", gui["open"][:1]))
    print(row("open: first page painted", gui["open"]))
    print(row("scroll to the end: last row painted", gui["end"]))
    print(row(f"scroll-bar jump ({JUMPS} places per run)", gui["jumps"]))
    print(f"\n| {'facade call (one thread), ms':<44} | {'p50':>8} | {'p95':>8} | {'max':>8} |")
    print(f"| {'-' * 44} | {'-' * 7}: | {'-' * 7}: | {'-' * 7}: |")
    for name, samples in facade.items():
        print(row(name, samples))
    return 0


if __name__ == "__main__":
    sys.exit(main())
