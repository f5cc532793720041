"""A scripted tour of the real window, as a person uses it, while agents and an import work.

    QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1600x1000x24" \
        uv run python bench/tour.py [--minutes 10] [--embedder none|hash|native]

Builds the demo workspace of `scripts/demo_workspace.py` in a temporary directory (workers on
threads, the daemon's logging: `scripts/screenshots.py live_daemon`) and opens the real main
window. For `--minutes` it does what a person does, with real key and mouse events on the
window (`QTest`): every pane by its shortcut and by a click on the rail; in Recall it types
queries, clicks a hit, reads "why this ranked" and opens the memory; it filters Memories and
opens rows; in Transcripts it searches, opens a hit, goes back and opens a session; it types
into the Ctrl+K palette and picks a row; it clicks through Documents, Entities, Proposals,
Queue, Health, Dreaming (Details on and off), Map, Settings (every section scrolled into view,
nothing written) and Overview; it resizes the window between 1024×640 and 1600×1000.

Meanwhile, as on a user's machine: an "agent" thread runs Claude Code's hook calls through the
service (session start, prompts with their recall, memories remembered by the hook, session
end with its transcript), an "import" thread writes Claude Code session files (the layout of
`tests/support/history_files.py`) and imports them as the Transcripts pane's import does, and
documents are ingested by the document worker.

Captured: every log record at WARNING or above (the app's loggers, which do not propagate to
the root, and the root), Qt's own warnings (`qInstallMessageHandler`), uncaught exceptions
(`sys.excepthook`, which PySide's slots report to, `threading.excepthook`, the asyncio loop),
and tracebacks in the workspace's log files. Reported as a markdown table: minutes, actions,
panes visited, tracebacks, warnings, the slowest pane show (ms, input to on screen) and the
process RSS at start and end. Exit 1 if any traceback or uncaught exception was seen.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "xcb")
os.environ.setdefault("QT_SCALE_FACTOR", "1")

import argparse
import asyncio
import faulthandler
import gc
import logging
import random
import signal
import sys
import tempfile
import threading
import time
import traceback
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from PySide6.QtCore import (
    QMessageLogContext,
    QObject,
    QPoint,
    Qt,
    QtMsgType,
    qInstallMessageHandler,
)
from PySide6.QtGui import QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QHeaderView,
    QLineEdit,
    QScrollArea,
    QWidget,
)
from screenshots import live_daemon, open_window, settle_workers
from support.history_files import write_claude_project
from window_tour import app_loggers, light_app_and_loop

from signet_desktop.config import WorkspacePaths
from signet_desktop.domain.documents import DocumentRequest
from signet_desktop.domain.memory import Actor
from signet_desktop.domain.sessions import Turn
from signet_desktop.service.hooks.service import HookContext
from signet_desktop.service.memories.service import RememberRequest
from signet_desktop.ui.main_window import MainWindow
from signet_desktop.ui.style import LIGHT

SIZES = ((1024, 640), (1600, 1000))
SHOW_TIMEOUT_S = 10.0
STUCK_S = 90.0  # a scene this long is stuck: every thread's stack is dumped
TRACEBACK = "Traceback (most recent call last)"
QUERIES = (
    "which database does billing use?",
    "who owns search",
    "deploy on friday",
    "idempotency keys",
    "redis failover",
    "zxqv wibble",
)
PALETTE_TEXTS = ("billing", "queue", "postgres", "health", "alice")
TRANSCRIPT_QUERIES = ("Question", "billing", "proj")
PROMPTS = (
    "What database does billing run on?",
    "Who do I ask before changing the auth schema?",
    "How do we deploy the web app?",
    "Why did the ledger replication lag?",
)
BROWSED = ("documents", "entities", "proposals", "queue", "health")
HOOK = Actor(changed_by="claude-code", actor_type="hook")


# -- what went wrong ------------------------------------------------------------------------


@dataclass
class Watch:
    """Everything worth a look that happened while the tour ran."""

    warnings: list[str] = field(default_factory=list)  # WARNING+ records and Qt warnings
    tracebacks: list[str] = field(default_factory=list)  # logged with exc_info, or uncaught
    lock: threading.Lock = field(default_factory=threading.Lock)

    def warn(self, text: str) -> None:
        with self.lock:
            self.warnings.append(text)

    def traceback(self, text: str) -> None:
        with self.lock:
            self.tracebacks.append(text)
        print(f"TRACEBACK {text}", file=sys.stderr, flush=True)


class WatchHandler(logging.Handler):
    def __init__(self, watch: Watch) -> None:
        super().__init__(logging.WARNING)
        self.watch = watch

    def emit(self, record: logging.LogRecord) -> None:
        line = f"{record.levelname} {record.name}: {record.getMessage()}"
        if record.exc_info and record.exc_info[0] is not None:
            self.watch.traceback(
                line + "\n" + "".join(traceback.format_exception(*record.exc_info))
            )
        else:
            self.watch.warn(line)


@contextmanager
def watching(watch: Watch, loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    """Route log records, Qt messages and uncaught exceptions (any thread) into `watch`."""
    handler = WatchHandler(watch)
    loggers = app_loggers()  # the app's do not propagate to the root: each gets the handler
    for logger in loggers:
        logger.addHandler(handler)

    def on_qt(kind: QtMsgType, _context: QMessageLogContext, message: str) -> None:
        if kind in (QtMsgType.QtWarningMsg, QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg):
            watch.warn(f"Qt {kind.name}: {message}")

    def on_uncaught(
        kind: type[BaseException], exc: BaseException, tb: TracebackType | None
    ) -> None:
        watch.traceback("uncaught: " + "".join(traceback.format_exception(kind, exc, tb)))

    def on_thread(args: threading.ExceptHookArgs) -> None:
        text = "".join(
            traceback.format_exception(args.exc_type, args.exc_value, args.exc_traceback)
        )
        watch.traceback(f"uncaught in thread {args.thread and args.thread.name}: {text}")

    def on_loop(_loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        text = "".join(traceback.format_exception(exc)) if exc else ""
        watch.traceback(f"asyncio: {context.get('message')}\n{text}")

    previous_qt = qInstallMessageHandler(on_qt)
    previous_hook, previous_thread_hook = sys.excepthook, threading.excepthook
    sys.excepthook, threading.excepthook = on_uncaught, on_thread
    loop.set_exception_handler(on_loop)
    try:
        yield
    finally:
        sys.excepthook, threading.excepthook = previous_hook, previous_thread_hook
        qInstallMessageHandler(previous_qt)
        for logger in loggers:
            logger.removeHandler(handler)


def log_file_tracebacks(logs_dir: Path) -> list[str]:
    """Each traceback in the workspace's log files, with the line above it."""
    found = []
    for path in sorted(logs_dir.glob("*.log*")):
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        found += [
            f"{path.name}: {lines[n - 1] if n else ''}"
            for n, line in enumerate(lines)
            if TRACEBACK in line
        ]
    return found


def held(window: QWidget) -> tuple[float, int, Counter[str]]:
    """RSS MB, Python objects the collector tracks, Qt objects under the window by class (a
    leak grows one of them pass after pass)."""
    gc.collect()
    qt = Counter(f"(window) {type(child).__name__}" for child in window.findChildren(QObject))
    for key, pane in getattr(window, "panes", {}).items():  # the panes' own, by pane
        inside = Counter(f"{key} {type(child).__name__}" for child in pane.findChildren(QObject))
        qt.update(inside)
        qt.subtract(Counter({f"(window) {name.split(' ', 1)[1]}": n for name, n in inside.items()}))
    return rss_mb(), len(gc.get_objects()), +qt


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


# -- the work a user's machine does meanwhile -----------------------------------------------


class Background:
    """An agent's hooks, a growing Claude Code history being imported, documents ingested."""

    def __init__(self, service: Any, history: Path, watch: Watch, seed: int) -> None:
        self.service, self.history, self.watch = service, history, watch
        self.stop = threading.Event()
        self.rng = random.Random(seed)
        self.counts: Counter[str] = Counter()
        self.threads = [
            threading.Thread(target=self._guard, args=(self._agent,), name="tour-agent"),
            threading.Thread(target=self._guard, args=(self._imports,), name="tour-import"),
        ]

    def start(self) -> None:
        for thread in self.threads:
            thread.start()

    def close(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(60)

    def _guard(self, work: Callable[[], None]) -> None:
        while not self.stop.is_set():
            try:
                work()
            except Exception:
                self.watch.traceback(f"background {work.__name__}: {traceback.format_exc()}")
                self.stop.wait(5)

    def _agent(self) -> None:
        """One Claude Code session through the hooks, as the harness calls them."""
        hooks, key = self.service.hooks, f"tour-{uuid.uuid4()}"
        ctx = HookContext("default", "claude-code", key, project="billing", actor=HOOK)
        hooks.session_start(ctx)
        self.counts["hook calls"] += 1
        turns = []
        for n in range(self.rng.randrange(2, 5)):
            if self.stop.wait(self.rng.uniform(1.0, 3.0)):
                break
            prompt = self.rng.choice(PROMPTS)
            hooks.user_prompt_submit(ctx, prompt)
            turns += [Turn(f"u{n}", "user", prompt), Turn(f"a{n}", "assistant", f"Answer {n}.")]
            remembered = f"session {key[5:13]} step {n}: {prompt.lower()} (checked by the agent)"
            self.service.memories.remember(
                RememberRequest(remembered, tags=("tour",), session_id=key, source_type="hook"),
                HOOK,
            )
            self.counts["hook calls"] += 1
            self.counts["memories remembered"] += 1
        hooks.session_end(ctx, turns=turns)
        self.counts["hook calls"] += 1
        self.counts["sessions ended"] += 1

    def _imports(self) -> None:
        """More Claude Code sessions appear on disk; import them; now and then a document."""
        batch = self.counts["import runs"]
        write_claude_project(self.history, 8, 12, cwd=f"/home/dev/tour{batch}")
        ticket = self.service.imports.start("default", "claude-code", str(self.history), wait=True)
        run = self.service.imports.run("default", ticket.run_id)
        self.counts["import runs"] += 1
        self.counts["sessions imported"] += run.counts.records_imported
        documents = getattr(self.service, "documents", None)
        if documents is not None:
            text = "\n\n".join(
                f"Note {batch}.{n}: the {self.rng.choice(('billing', 'search', 'auth'))} team "
                f"agreed on change {self.rng.randrange(10_000)} after review."
                for n in range(30)
            )
            documents.submit(
                "default", DocumentRequest("text", content=text, title=f"Notes {batch}")
            )
            self.counts["documents submitted"] += 1
        self.stop.wait(45)


# -- the person -----------------------------------------------------------------------------


class Person:
    """Real input on the real window: keys, clicks, typing; what it did and how long panes took.

    Every step runs inside the running qasync loop, as the app's own slots do (a task a pane
    starts needs that loop)."""

    def __init__(self, window: MainWindow, seed: int) -> None:
        self.window = window
        self.rng = random.Random(seed)
        self.actions = 0
        self.visits: Counter[str] = Counter()
        self.slowest: tuple[float, str] = (0.0, "")  # any show, a pane's first (its build) too
        self.slowest_warm: tuple[float, str] = (0.0, "")  # a pane shown before
        self.size_index = 0
        self.did: Counter[str] = Counter()  # the notable things done, by name
        self.after_first_pass: tuple[float, int, Counter[str]] | None = None  # `held` then

    # the hands

    async def input(self, press: Callable[..., object], *args: object) -> None:
        """Deliver an input event from the event loop itself, as the window system's arrive:
        not inside this tour's task (a task a slot starts could not be entered meanwhile)."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def deliver() -> None:
            try:
                press(*args)
            except Exception as exc:
                done.set_exception(exc)
            else:
                done.set_result(None)

        asyncio.get_running_loop().call_soon(deliver)
        await done

    async def wait(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    async def keys(self, sequence: str, target: QWidget | None = None) -> None:
        if target is None:
            await self.input(QTest.keySequence, self.window.windowHandle(), QKeySequence(sequence))
        else:
            await self.input(QTest.keySequence, target, QKeySequence(sequence))
        self.actions += 1
        await self.wait(0.05)

    async def click(self, widget: QWidget, pos: QPoint | None = None) -> None:
        if not widget.isVisible():
            return
        where = pos if pos is not None else widget.rect().center()
        await self.input(
            QTest.mouseClick,
            widget,
            Qt.MouseButton.LeftButton,
            Qt.KeyboardModifier.NoModifier,
            where,
        )
        self.actions += 1
        await self.wait(0.05)

    async def type_into(self, box: QLineEdit, text: str, enter: bool = True) -> None:
        """Click the box, select what is there, type over it (one key event per character)."""
        await self.click(box)
        await self.input(QTest.keySequence, box, QKeySequence(QKeySequence.StandardKey.SelectAll))
        for char in text:
            await self.input(QTest.keyClicks, box, char)
            await self.wait(0.03)
        if enter:
            await self.input(QTest.keyClick, box, Qt.Key.Key_Return)
        self.actions += 1

    async def click_row(self, view: QAbstractItemView, row: int = 0) -> bool:
        model = view.model()
        if model is None or not view.isVisible() or model.rowCount() <= row:
            return False
        view.scrollTo(model.index(row, 0), QAbstractItemView.ScrollHint.EnsureVisible)
        rect = view.visualRect(model.index(row, 0))
        if rect.isEmpty():
            return False
        await self.click(view.viewport(), rect.center())
        return True

    # getting around

    async def go(self, key: str, how: str | None = None) -> None:
        """Show pane `key` by its shortcut or a click on the rail; time it until on screen
        (the pane already shown too: a person does press its key again)."""
        how = how or self.rng.choice(("shortcut", "rail"))
        started = time.perf_counter()
        if how == "shortcut":
            await self.input(
                QTest.keySequence,
                self.window.windowHandle(),
                QKeySequence(self.window.shortcuts[key]),
            )
        else:
            rail = self.window.rail
            row = next(n for n, spec in enumerate(self.window.specs) if spec.key == key)
            where = rail.visualItemRect(rail.item(row)).center()
            await self.input(QTest.mouseClick, rail.viewport(), Qt.MouseButton.LeftButton,
                             Qt.KeyboardModifier.NoModifier, where)  # fmt: skip
        while time.perf_counter() - started < SHOW_TIMEOUT_S:
            pane = self.window.stack.currentWidget()
            if self.window.current_key == key and pane is not None and pane.isVisible():
                break
            await asyncio.sleep(0.002)
        await asyncio.sleep(0)  # the loop runs once more: what the pane painted is on screen
        shown_ms = (time.perf_counter() - started) * 1000
        self.actions += 1
        if shown_ms > self.slowest[0]:
            self.slowest = (shown_ms, f"{key} by {how}")
        if self.visits[key] and shown_ms > self.slowest_warm[0]:
            self.slowest_warm = (shown_ms, f"{key} by {how}")
        self.visits[key] += 1
        if self.window.current_key != key:
            raise AssertionError(f"{how} did not show {key} (shown: {self.window.current_key})")
        await self.wait(self.rng.uniform(0.3, 0.8))

    def pane(self) -> Any:
        return self.window.stack.currentWidget()

    async def resize(self) -> None:
        self.size_index = (self.size_index + 1) % len(SIZES)
        self.window.resize(*SIZES[self.size_index])
        self.actions += 1
        await self.wait(0.5)

    def opened(self, what: str) -> None:
        """A click navigated (a hit opened, a palette row chosen): a pane visited."""
        self.visits[str(self.window.current_key)] += 1
        self.did[what] += 1

    # scenes: one thing a person does, each

    async def recall(self) -> None:
        await self.go("recall")
        pane = self.pane()
        await self.type_into(pane.query_box, self.rng.choice(QUERIES))
        await self.wait(1.5)
        if await self.click_row(pane.results, self.rng.randrange(3)):
            await self.wait(0.6)
            pane.explanation.text()  # what "why this ranked" says, read
            chance = self.rng.random()
            if pane.explanation.open_button.isEnabled() and chance < 0.6:
                await self.click(pane.explanation.open_button)
                self.opened("hit opened")
                await self.wait(1.0)
            elif pane.explanation.map_button.isEnabled() and chance < 0.75:
                await self.click(pane.explanation.map_button)  # "Show on map"
                self.opened("hit shown on the map")
                await self.wait(3.0)

    async def memories(self) -> None:
        await self.go("memories")
        pane = self.pane()
        if self.rng.random() < 0.4:
            await self.type_into(pane.text_filter, self.rng.choice(("billing", "deploy", "alice")))
            await self.wait(1.0)
        await self.click_row(pane.table, self.rng.randrange(5))
        await self.wait(1.0)
        if self.rng.random() < 0.5:
            await self.keys("Down", pane.table)
            await self.wait(0.6)
        chance, pin = self.rng.random(), pane.detail.pin_button
        if chance < 0.25 and pin.isVisible() and pin.isEnabled():
            await self.click(pin)  # pinned (a temp workspace), then as it was
            await self.wait(1.0)
            await self.click(pin)
            await self.wait(1.0)
            self.did["pinned and unpinned"] += 1
        elif (
            chance < 0.4
            and pane.detail.session_button.isVisible()
            and pane.detail.session_button.isEnabled()
        ):
            await self.click(pane.detail.session_button)  # "Open session", when it has one
            self.opened("memory's session opened")
            await self.wait(1.0)
            return
        if pane.text_filter.text():
            await self.click(pane.clear_button)
            await self.wait(0.5)

    async def transcripts(self) -> None:
        await self.go("transcripts")
        pane = self.pane()
        await self.type_into(pane.search_box, self.rng.choice(TRANSCRIPT_QUERIES))
        await self.wait(1.5)
        if await self.click_row(pane.results, 0):
            await self.wait(1.0)
        back = pane.findChild(QAbstractButton, "searchBack")
        if back is not None:
            await self.click(back)
            await self.wait(0.5)
        await self.click_row(pane.sessions, self.rng.randrange(3))
        await self.wait(1.0)

    async def palette(self) -> None:
        await self.keys("Ctrl+K")
        palette = self.window.command_palette
        await self.wait(0.3)
        if not palette.isVisible():
            raise AssertionError("Ctrl+K did not open the palette")
        for char in self.rng.choice(PALETTE_TEXTS):
            await self.input(QTest.keyClicks, palette.input, char)
            await self.wait(0.05)
        self.actions += 1
        await self.wait(0.8)
        if palette.isVisible() and self.rng.random() < 0.5:
            await self.input(QTest.keyClick, palette.input, Qt.Key.Key_Down)
            await self.input(QTest.keyClick, palette.input, Qt.Key.Key_Return)
            self.actions += 1
            self.opened("palette row chosen")
        elif palette.isVisible():
            await self.input(QTest.keyClick, palette.input, Qt.Key.Key_Escape)
            self.actions += 1
        await self.wait(1.0)

    async def browse(self, key: str) -> None:
        """Documents, Entities, Proposals, Queue, Health: click a row or two of what it lists."""
        await self.go(key)
        await self.wait(1.0)
        views = [
            view
            for view in self.pane().findChildren(QAbstractItemView)
            if view.isVisible() and not isinstance(view, QHeaderView)
        ]
        for view in self.rng.sample(views, min(2, len(views))):
            if await self.click_row(view, self.rng.randrange(2)):
                await self.wait(0.8)

    async def dreaming(self) -> None:
        await self.go("dreaming")
        pane = self.pane()
        await self.click_row(pane.list, 0)
        await self.wait(0.8)
        details = pane.findChild(QAbstractButton, "dreamDetails")
        if details is not None and details.isVisible():
            await self.click(details)
            await self.wait(0.6)
            await self.click(details)
            await self.wait(0.4)

    async def map(self) -> None:
        await self.go("map")
        await self.wait(6.0)  # the projection runs in a child process; a person watches it

    async def settings(self) -> None:
        """Every section of Settings scrolled into view with the scroll bar; nothing changed."""
        await self.go("settings")
        await self.wait(1.0)
        scroll = self.pane().findChild(QScrollArea, "settingsScroll")
        if scroll is None:
            return
        bar = scroll.verticalScrollBar()
        for _ in range(12):
            if not bar.isVisible() or bar.value() >= bar.maximum():
                break
            await self.click(bar, QPoint(bar.width() // 2, bar.height() - 25))  # a page down
            await self.wait(0.4)
        for _ in range(12):
            if not bar.isVisible() or bar.value() <= bar.minimum():
                break
            await self.click(bar, QPoint(bar.width() // 2, 25))  # and back up
            await self.wait(0.2)

    async def overview(self) -> None:
        await self.go("overview")
        await self.wait(1.5)

    async def every_pane(self) -> None:
        """The whole rail, in order, one way of getting there (the map has its own scene)."""
        how = self.rng.choice(("shortcut", "rail"))
        for spec in self.window.specs:
            if spec.key != "map":
                await self.go(spec.key, how)

    def unvisited(self) -> set[str]:
        """The panes not shown yet."""
        return {spec.key for spec in self.window.specs} - set(self.visits)

    def scenes(self) -> list[Callable[[], Awaitable[None]]]:
        """The whole rail first, then the map (the one pane the rail scene leaves out)."""
        found = {spec.key for spec in self.window.specs}
        scenes: list[Callable[[], Awaitable[None]]] = [self.every_pane]
        scenes += [self.map] if "map" in found else []
        scenes += [self.palette, self.resize]
        named = {
            "recall": self.recall,
            "memories": self.memories,
            "transcripts": self.transcripts,
            "dreaming": self.dreaming,
            "settings": self.settings,
            "overview": self.overview,
        }
        scenes += [scene for key, scene in named.items() if key in found]
        scenes += [partial(self.browse, key) for key in BROWSED if key in found]
        return scenes


async def exposed(window: QWidget) -> None:
    """Wait (in the running loop, as the app does) until the window server shows the window."""
    handle = window.windowHandle()
    for _ in range(500):
        if handle is not None and handle.isExposed():
            return
        await asyncio.sleep(0.01)
        handle = window.windowHandle()


UNVISITED_GRACE_S = 120.0  # how long past its time the tour may go on to reach every pane


async def tour(person: Person, minutes: float, verbose: bool = False) -> None:
    """Every scene once (in order), then scenes in random order until the time is up; on a
    loaded machine, past the time until every pane has been shown once."""
    scenes = person.scenes()
    deadline = time.monotonic() + minutes * 60
    order = list(scenes)
    while time.monotonic() < deadline or (
        person.unvisited() and time.monotonic() < deadline + UNVISITED_GRACE_S
    ):
        if not order:
            person.after_first_pass = person.after_first_pass or held(person.window)
            order = person.rng.sample(scenes, len(scenes))
        scene = order.pop(0)
        name = getattr(scene, "__name__", None) or f"browse {scene.args[0]}"  # type: ignore[attr-defined]
        if verbose:
            elapsed = time.monotonic() - deadline + minutes * 60
            print(f"  {elapsed:6.1f}s {rss_mb():4.0f} MB  {name}", flush=True)
        faulthandler.dump_traceback_later(STUCK_S)  # a scene that hangs says where
        await scene()
        faulthandler.cancel_dump_traceback_later()
        person.window.activateWindow()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--count", type=int, default=300, help="demo memories")
    parser.add_argument("--embedder", choices=("native", "hash", "none"), default="none")
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--verbose", action="store_true", help="print each scene as it starts")
    args = parser.parse_args(argv)
    faulthandler.register(signal.SIGUSR1)  # kill -USR1: every thread's stack, now
    faulthandler.dump_traceback_later(STUCK_S)  # a start-up that hangs says where
    app, loop = light_app_and_loop()
    watch = Watch()
    print(f"platform: {app.platformName()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="signet-tour-") as tmp:
        history = Path(tmp) / "claude" / "projects"
        history.mkdir(parents=True)
        os.environ["CLAUDE_CONFIG_DIR"] = str(history.parent)  # the import may read it
        root = Path(tmp) / "demo"
        with live_daemon(root, args.count, args.embedder) as demo, watching(watch, loop):
            settle_workers(loop)
            rss_start = rss_mb()
            window = open_window(demo, LIGHT, SIZES[0], Path(tmp))
            background = Background(demo.service, history, watch, args.seed)
            person = Person(window, args.seed)
            started = time.monotonic()
            try:
                loop.run_until_complete(exposed(window))
                window.activateWindow()
                background.start()
                loop.run_until_complete(tour(person, args.minutes, args.verbose))
            except Exception:
                watch.traceback(f"the tour stopped: {traceback.format_exc()}")
            finally:
                minutes = (time.monotonic() - started) / 60
                background.close()
                loop.run_until_complete(asyncio.sleep(1.0))
                rss_end = rss_mb()
                at_end = held(window)
                window.shutdown()
                window.deleteLater()
                app.processEvents()
        logged = log_file_tracebacks(WorkspacePaths.for_root(root).logs_dir)
    loop.close()
    tracebacks = len(watch.tracebacks) + len(logged)
    slowest_ms, slowest_what = person.slowest
    print(f"platform {app.platformName()}, {args.embedder} embedder, {args.count} demo memories; "
          f"background: {dict(background.counts)}")  # fmt: skip
    print("| minutes | actions | panes (visits) | tracebacks | warnings | slowest pane ms "
          "| RSS MB start → end |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    visits = sum(person.visits.values())
    print(f"| {minutes:.1f} | {person.actions} | {len(person.visits)} ({visits}) "
          f"| {tracebacks} | {len(watch.warnings)} | {slowest_ms:.0f} ({slowest_what}) "
          f"| {rss_start:.0f} → {rss_end:.0f} |")  # fmt: skip
    if person.after_first_pass is not None:
        (rss_a, py_a, qt_a), (rss_b, py_b, qt_b) = person.after_first_pass, at_end
        grew = ", ".join(f"{name} +{n}" for name, n in (qt_b - qt_a).most_common(6))
        print(f"after the first pass → at the end: RSS {rss_a:.0f} → {rss_b:.0f} MB, "
              f"Python objects {py_a:,} → {py_b:,}, Qt objects {qt_a.total():,} → "
              f"{qt_b.total():,} ({grew or 'none grew'})")  # fmt: skip
    warm_ms, warm_what = person.slowest_warm
    print(f"slowest show of a pane already built: {warm_ms:.0f} ms ({warm_what})")
    for text, n in Counter(watch.warnings).most_common():
        print(f"WARNING ×{n} {text}")
    for text in watch.tracebacks + [f"in the log file {line}" for line in logged]:
        print(f"TRACEBACK {text}")
    print(f"visits: {dict(sorted(person.visits.items()))}")
    print(f"done: {dict(sorted(person.did.items()))}")
    print("tour: ok" if not tracebacks else f"tour: {tracebacks} tracebacks")
    return 1 if tracebacks else 0


if __name__ == "__main__":
    sys.exit(main())
