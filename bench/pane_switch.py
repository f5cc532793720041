"""Pane switch latency in the real window: idle, and while an import writes memories.

Run (a real display is best: fonts and painting as a user has them):
    QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1600x1000x24" \
        uv run python bench/pane_switch.py [--rounds 5] [--import-memories 3000]

Setup (not measured): the demo workspace of `scripts/demo_workspace.py` with its workers on
threads, and the real main window at 1280×800 (`scripts/window_tour.py` drives it). Measured:
each pane's own shortcut pressed with real key events, from the key press until the pane is
on screen and the loop has run once more (what a person sees change), for `--rounds` rounds
over every pane; first in an idle app, then while a worker thread writes `--import-memories`
memories through `remember_many` in batches of 100 (an import's write load, with the events
it publishes reaching the window). Reported per condition: switches, p50 / p95 / max wall
ms, and the GUI thread's own CPU p95 (what a loaded machine cannot inflate). Targets (issue
29): p95 ≤ 150 ms idle, ≤ 300 ms during an import.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_SCALE_FACTOR", "1")

import argparse
import asyncio
import statistics
import sys
import tempfile
import threading
from pathlib import Path

from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

from screenshots import live_daemon, open_window, settle, settle_workers
from window_tour import QUIET_S, light_app_and_loop, switch

from signet_desktop.domain.memory import Actor
from signet_desktop.service.memories.service import RememberRequest
from signet_desktop.ui.main_window import MainWindow
from signet_desktop.ui.style import LIGHT

SIZE = (1280, 800)
BATCH = 100


def rounds_of_switches(
    app: QApplication, loop: asyncio.AbstractEventLoop, window: MainWindow, rounds: int,
    settle_between: bool,
) -> list[tuple[float, float]]:  # fmt: skip
    """(wall ms, GUI CPU ms) of every switch, every pane by its shortcut, `rounds` times."""
    timings = []
    for _ in range(rounds):
        for spec in window.specs:
            sequence = window.shortcuts.get(spec.key)
            if not sequence or spec.key == "map":  # the map starts a UMAP child on each show
                continue
            timings.append(switch(app, window, spec.key, sequence))
            if settle_between:
                settle(loop, window, 10.0, QUIET_S)
            else:
                QTest.qWait(50)
    return timings


def writer(service: object, count: int, done: threading.Event) -> threading.Thread:
    """A thread that writes `count` memories in batches, as an import does."""

    def run() -> None:
        memories = service.memories  # type: ignore[attr-defined]
        for start in range(0, count, BATCH):
            batch = [
                RememberRequest(f"Imported note {n}: the build on branch b{n % 37} took {n % 90} s")
                for n in range(start, min(count, start + BATCH))
            ]
            memories.remember_many(batch, Actor("bench", "user"))
        done.set()

    thread = threading.Thread(target=run, name="bench-import", daemon=True)
    thread.start()
    return thread


def row(name: str, timings: list[tuple[float, float]]) -> str:
    walls = sorted(t[0] for t in timings)
    cpus = sorted(t[1] for t in timings)
    p95 = walls[int(0.95 * (len(walls) - 1))]
    cpu95 = cpus[int(0.95 * (len(cpus) - 1))]
    return (f"| {name} | {len(walls)} | {statistics.median(walls):.0f} | {p95:.0f} "
            f"| {walls[-1]:.0f} | {cpu95:.0f} |")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--import-memories", type=int, default=3000)
    parser.add_argument("--embedder", choices=("native", "hash", "none"), default="none")
    args = parser.parse_args(argv)
    app, loop = light_app_and_loop()
    with (
        tempfile.TemporaryDirectory(prefix="signet-bench-") as tmp,
        live_daemon(Path(tmp) / "demo", 300, args.embedder) as demo,
    ):
        settle_workers(loop)
        window = open_window(demo, LIGHT, SIZE, Path(tmp))
        try:
            QTest.qWaitForWindowExposed(window)
            window.activateWindow()  # the key presses go to the active window
            rounds_of_switches(app, loop, window, 1, True)  # every pane built once: warm
            idle = rounds_of_switches(app, loop, window, args.rounds, True)
            done = threading.Event()
            thread = writer(demo.service, args.import_memories, done)
            busy: list[tuple[float, float]] = []
            while not done.is_set():
                busy += rounds_of_switches(app, loop, window, 1, False)
            thread.join()
        finally:
            window.shutdown()
            window.deleteLater()
            app.processEvents()
    loop.close()
    print(f"platform {app.platformName()}, window {SIZE[0]}×{SIZE[1]}, {args.embedder} embedder")
    print("| condition | switches | p50 ms | p95 ms | max ms | GUI CPU p95 ms |")
    print("|---|---|---|---|---|---|")
    print(row("idle", idle))
    print(row(f"during an import ({args.import_memories:,} memories)", busy))
    return 0


if __name__ == "__main__":
    sys.exit(main())
