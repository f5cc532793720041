"""Drive the real inspector window through every pane, at each size, as a person would.

    xvfb-run -a -s "-screen 0 1600x1000x24" uv run python scripts/window_tour.py
    uv run python scripts/window_tour.py --sizes 1024x640 --embedder native

Builds the demo workspace (`scripts/demo_workspace.py`, workers on threads, the daemon's
logging) and opens the real main window on the display Qt is given (xcb under Xvfb: real
fonts, a real window manager-less X server). At each size it presses every pane's own
shortcut with real key events (`QTest.keySequence` on the window) and reports, per pane:
- how long the switch took until the pane was on screen, wall time and the GUI thread's own
  CPU time (the part a loaded machine cannot inflate; `--max-show-ms` judges that one);
- whether the window still has the asked size and what it cuts off (`ui/clipping.py`).
Once it also lists every keyboard shortcut of the window and fails on a clash, and it fails
on any traceback or error logged while it ran. Exit 0: nothing found; 1: the problems, listed.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "xcb")
os.environ.setdefault("QT_SCALE_FACTOR", "1")

import argparse
import asyncio
import logging
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import qasync
from PySide6.QtCore import QSize
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

sys.path.insert(0, str(Path(__file__).resolve().parent))

from screenshots import live_daemon, open_window, parse_size, settle, settle_workers

from signet_desktop.ui.clipping import clipped
from signet_desktop.ui.main_window import MainWindow
from signet_desktop.ui.style import LIGHT, apply_style, palette_of

DEFAULT_SIZES = "1024x640,1600x1000"
MAX_SHOW_MS = 500.0
PANE_SETTLE_S = {"map": 45.0}  # the map's UMAP runs in a child process
DEFAULT_SETTLE_S = 15.0
QUIET_S = 0.3  # idle this long after the switch: its reads are done (a grab waits longer)


class ErrorLog(logging.Handler):
    """Keeps every record at ERROR or above, and any record carrying a traceback."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.found: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR or record.exc_info:
            self.found.append(f"{record.levelname} {record.name}: {record.getMessage()}")


def light_app_and_loop() -> tuple[QApplication, qasync.QEventLoop]:
    """The QApplication in the light Fusion style, and a qasync loop on it (set as current)."""
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setStyle("Fusion")
    app.setPalette(palette_of(LIGHT))
    apply_style(app)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    return app, loop


def app_loggers() -> list[logging.Logger]:
    """The root logger and every logger that does not propagate to it: the daemon's logging
    (`daemon/daemonlog.py`) keeps `signet_desktop` and `uvicorn` records off the root, so a
    handler that wants them all goes on each of these."""
    return [logging.getLogger()] + [
        logger
        for logger in logging.root.manager.loggerDict.values()
        if isinstance(logger, logging.Logger) and not logger.propagate
    ]


def shortcut_clashes(window: MainWindow) -> list[str]:
    """Key sequences that two of the window's actions or shortcuts both claim."""
    keys: Counter[str] = Counter()
    for action in window.findChildren(QAction):
        for sequence in action.shortcuts():
            keys[sequence.toString()] += 1
    for shortcut in window.findChildren(QShortcut):
        keys[shortcut.key().toString()] += 1
    return [f"the shortcut {key} is claimed {n} times" for key, n in keys.items() if key and n > 1]


def switch(app: QApplication, window: MainWindow, key: str, sequence: str) -> tuple[float, float]:
    """Press `sequence` on the window; wall and GUI-thread CPU milliseconds until `key` shows."""
    wall, cpu = time.perf_counter(), time.thread_time()
    QTest.keySequence(window.windowHandle(), QKeySequence(sequence))
    deadline = wall + 10.0
    while time.perf_counter() < deadline:
        app.processEvents()
        pane = window.stack.currentWidget()
        if window.current_key == key and pane is not None and pane.isVisible():
            break
    app.processEvents()
    return (time.perf_counter() - wall) * 1000, (time.thread_time() - cpu) * 1000


def tour_size(
    app: QApplication,
    loop: asyncio.AbstractEventLoop,
    window: MainWindow,
    size: tuple[int, int],
    max_show_ms: float,
) -> list[str]:
    """Every pane by its shortcut at `size`; the problems found, in words."""
    problems: list[str] = []
    print(f"{size[0]}×{size[1]}:", flush=True)
    print(f"  {'pane':<12} {'shortcut':<14} {'wall ms':>8} {'cpu ms':>7}  found", flush=True)
    for spec in window.specs:
        sequence = window.shortcuts.get(spec.key) or ""
        if not sequence:
            problems.append(f"{spec.key}: no keyboard shortcut reaches it")
            continue
        window.resize(*size)
        wall_ms, cpu_ms = switch(app, window, spec.key, sequence)
        settle(loop, window, PANE_SETTLE_S.get(spec.key, DEFAULT_SETTLE_S), QUIET_S)
        found = []
        if window.current_key != spec.key:
            found.append(f"{sequence} did not show it (shown: {window.current_key})")
        if cpu_ms > max_show_ms:
            found.append(f"showing it took {cpu_ms:.0f} ms of the GUI thread")
        if window.size() != QSize(*size):
            found.append(f"the window became {window.width()}×{window.height()}")
        found += clipped(window)
        print(f"  {spec.key:<12} {sequence:<14} {wall_ms:>8.0f} {cpu_ms:>7.0f}  "
              f"{'; '.join(found) or 'ok'}", flush=True)  # fmt: skip
        problems += [f"{size[0]}×{size[1]} {spec.key}: {text}" for text in found]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=DEFAULT_SIZES, help="WIDTHxHEIGHT,… (comma-separated)")
    parser.add_argument("--count", type=int, default=120, help="demo memories")
    parser.add_argument("--embedder", choices=("native", "hash", "none"), default="none")
    parser.add_argument("--max-show-ms", type=float, default=MAX_SHOW_MS,
                        help="GUI-thread CPU a pane switch may take")  # fmt: skip
    args = parser.parse_args(argv)
    sizes = [parse_size(text) for text in args.sizes.split(",") if text.strip()]
    errors = ErrorLog()
    app, loop = light_app_and_loop()
    problems: list[str] = []
    print(f"platform: {app.platformName()}", flush=True)
    with (
        tempfile.TemporaryDirectory(prefix="signet-tour-") as tmp,
        live_daemon(Path(tmp) / "demo", args.count, args.embedder) as demo,
    ):
        settle_workers(loop)
        for logger in app_loggers():
            logger.addHandler(errors)
        window = open_window(demo, LIGHT, sizes[0], Path(tmp))
        try:
            QTest.qWaitForWindowExposed(window)
            window.activateWindow()
            problems += shortcut_clashes(window)
            for size in sizes:
                problems += tour_size(app, loop, window, size, args.max_show_ms)
        finally:
            window.shutdown()
            window.deleteLater()
            app.processEvents()
    loop.close()
    problems += [f"logged: {line}" for line in errors.found]
    for problem in problems:
        print(f"PROBLEM {problem}", flush=True)
    print("tour: ok" if not problems else f"tour: {len(problems)} problems", flush=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
