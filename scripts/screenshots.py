"""Capture every inspector pane over a demo workspace into docs/screenshots/.

    QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1440x900x24" \
        uv run python scripts/screenshots.py                   # light and dark, 1280×800
    uv run python scripts/screenshots.py --themes light --size 1440x900 --out /tmp/shots

Builds the demo workspace of `scripts/demo_workspace.py` in a temporary directory (native
vectors), hosts its workers on threads and installs the daemon's logging (so the Health pane
and the status bar show a live daemon), then opens the real main window with whatever panes
`discover_panes()` finds, shows each in turn (with a realistic `reveal`: a recall query, a
memory with history), lets it settle and saves the window — on a real X display as the server
shows it (`QScreen.grabWindow`), offscreen a `QWidget.grab()` render — as `<pane>.png` and
`<pane>-dark.png`, printing what the window cuts off (`ui/clipping.py`). A pane that fails to
build shows as the shell shows it (its banner).
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_SCALE_FACTOR", "1")

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import qasync
from PySide6.QtWidgets import QApplication, QProgressBar, QWidget

sys.path.insert(0, str(Path(__file__).resolve().parent))

from demo_workspace import Demo, build

from signet_desktop.config import WorkspacePaths
from signet_desktop.daemon import daemonlog
from signet_desktop.daemon.startup import StartupTasks
from signet_desktop.daemon.workers import WorkerThreads
from signet_desktop.ui.clipping import clipped
from signet_desktop.ui.event_bridge import EventBridge
from signet_desktop.ui.main_window import MainWindow
from signet_desktop.ui.pane import discover_panes
from signet_desktop.ui.settings import ShellSettings
from signet_desktop.ui.style import DARK, LIGHT, Theme, apply_style, palette_of

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "docs" / "screenshots"
URL = "http://127.0.0.1:3850"
QUERY = "which database does billing use?"
DETAIL = "billing runs on Postgres 16"  # pinned, retagged: a history worth showing
SETTLE_S = 1.5  # quiet time after the last task before the grab
PANE_TIMEOUT_S = {"map": 45.0}  # the map's UMAP runs in a child process
DEFAULT_TIMEOUT_S = 15.0


# Documents the demo ingests through the live document worker (the Documents and Queue panes).
DEMO_DOCUMENTS = (
    ("Billing database runbook", "# Billing database runbook\n\nBilling runs on Postgres 16 "
     "with logical replication to the analytics replica. max_wal_senders must stay at 10: at 4 "
     "the replica waits and invoices lag.\n\n## Failover\n\nPromote the replica with "
     "`pg_ctl promote`, then point PGBOUNCER_HOST at it. Page alice before and after.\n\n"
     "## Backups\n\nNightly base backups go to the billing-backups bucket; WAL is archived "
     "every minute. Restores are tested on the first Monday of each month."),
    ("Search indexing design", "# Search indexing\n\nDocuments are chunked at paragraph "
     "boundaries, embedded in batches and written in one short transaction per batch. "
     "Re-indexing a document only rewrites its changed chunks.\n\nThe ranking blends BM25 "
     "with vector similarity; the weights live in recall/fusion.py and are tuned on the "
     "LoCoMo benchmark.\n\nOpen question: should tombstoned chunks be purged on the next "
     "sweep, or after the recovery window like memories?"),
    ("Deploy checklist", "Deploys run on Tuesdays and Thursdays before 15:00.\n\n1. Green CI "
     "on main. 2. Release notes in #releases. 3. Canary at 5% for 20 minutes, watching p99 "
     "latency and the error budget. 4. Full rollout. 5. Tag the release.\n\nNever deploy "
     "billing during the invoice run (the first working day of the month)."),
)  # fmt: skip
INCIDENTS = (
    ("2026-10-02", "billing", "invoices lagged 40 minutes", "max_wal_senders dropped to 4"),
    ("2026-10-19", "search", "recall latency tripled", "the vector index was rebuilt at noon"),
    ("2026-11-03", "deploys", "a canary went to 100% at once", "the rollout flag was inverted"),
    ("2026-11-14", "billing", "card retries doubled charges", "an idempotency key was dropped"),
    ("2026-11-27", "ingest", "documents stuck in queued", "the worker was paused and forgotten"),
)
DEMO_REVIEW = "# Incident reviews, autumn 2026\n\n" + "\n\n".join(
    f"## {day}: {service}\n\nWhat happened: {what}. Cause: {cause}. We found it from the "
    f"dashboards within minutes, but the fix took longer than it should have because the "
    f"runbook for {service} did not say who owns the change. Follow-ups: write the owner into "
    f"the runbook, add an alert on the symptom, and add a test that would have caught the "
    f"cause before it shipped. The {service} team reviewed this summary and agreed to the "
    f"follow-ups; each has an owner and a date in the tracker."
    for day, service, what, cause in INCIDENTS
)
DEMO_BAD_URL = "https://docs.internal.invalid/design-doc.pdf"
DEMO_SETTLE_S = 20.0


def add_demo_work(demo: Demo) -> None:
    """Documents through the real worker (done, and one URL that cannot be fetched and
    waits to retry), plus the queue history a daemon that ran for a while has: completed
    backfills and a dead job from an embedder outage (written as those workers leave them)."""
    from signet_desktop.domain.documents import DocumentRequest
    from signet_desktop.queue import jobs

    service = demo.service
    documents = getattr(service, "documents", None)
    if documents is not None:
        for title, text in (*DEMO_DOCUMENTS, ("Incident reviews, autumn 2026", DEMO_REVIEW)):
            documents.submit("default", DocumentRequest("text", content=text, title=title))
        documents.submit("default", DocumentRequest("url", url=DEMO_BAD_URL))
    db = service._db  # demo history, reached the way tests/support/db.py does
    memory_ids = list(demo.ids.values())
    with db.write() as conn:
        for memory_id in memory_ids[:6]:
            jobs.enqueue(conn, "embedding_backfill", agent_id="default", memory_id=memory_id,
                         payload={"reason": "refused batch"})  # fmt: skip
            [leased] = jobs.lease(conn, "embedding_backfill", lease_ms=60_000)
            jobs.complete(conn, leased, {"embedded": 1})
        jobs.enqueue(conn, "embedding_backfill", agent_id="default", memory_id=memory_ids[7],
                     max_attempts=1, payload={"reason": "refused batch"})  # fmt: skip
        [leased] = jobs.lease(conn, "embedding_backfill", lease_ms=60_000)
        jobs.fail(conn, leased, "embedder unavailable: connection refused (127.0.0.1:11434)")
    deadline = time.monotonic() + DEMO_SETTLE_S
    while documents is not None and time.monotonic() < deadline and not settled(documents):
        time.sleep(0.2)


def settled(documents: Any) -> bool:
    """Every demo document is done, failed, or waiting for its retry."""
    for listed in documents.list("default"):
        document = documents.get("default", listed.id)
        job = document.job
        waiting = job is not None and job.status == "pending" and job.attempts > 0
        if document.status not in ("done", "failed") and not waiting:
            return False
    return True


def reveals(demo: Demo) -> dict[str, dict[str, Any]]:
    """What each pane is asked to show (panes that do not know a key ignore it)."""
    detail = demo.ids.get(DETAIL, "")
    return {
        "recall": {"query": QUERY},
        "memories": {"memory_id": detail},
        "map": {"highlight": [detail]},
        "transcripts": {"session_key": demo.sessions[0]} if demo.sessions else {},
        "documents": {"document_id": document_of(demo, "Incident reviews, autumn 2026")},
        "entities": {"entity_id": entity_of(demo, "billing")},
    }


def entity_of(demo: Demo, name: str) -> str:
    """The id of the demo entity called `name` ("" without the knowledge capability)."""
    knowledge = getattr(demo.service, "knowledge", None)
    found = knowledge.list_entities("default", query=name).items if knowledge else ()
    return next((e.id for e in found if e.name == name), "")


def document_of(demo: Demo, title: str) -> str:
    """The id of the demo document with `title` ("" without the documents capability)."""
    documents = getattr(demo.service, "documents", None)
    found = [d.id for d in documents.list("default") if d.title == title] if documents else []
    return found[0] if found else ""


@contextmanager
def live_daemon(root: Path, count: int, embedder: str) -> Iterator[Demo]:
    """The demo workspace with logging, start-up tasks and workers as the daemon runs them."""
    paths = WorkspacePaths.for_root(root)
    paths.ensure()
    logs = daemonlog.install(paths.logs_dir, "info", stderr=False)
    started = time.perf_counter()
    demo = build(root, count=count, embedder=embedder)
    print(f"demo workspace: {root} ({time.perf_counter() - started:.1f}s)", flush=True)
    service = demo.service
    tasks = StartupTasks(service.status_board)
    for declaration in service.pipeline.workers:
        if declaration.warm_up is not None:
            tasks.add(declaration.warm_up.name, declaration.warm_up.run)
    tasks.start()
    host = WorkerThreads(service.pipeline.workers, service.events)
    service.pipeline.attach(host)
    host.start()
    try:
        add_demo_work(demo)
        yield demo
    finally:
        host.stop(5)
        service.pipeline.detach()
        service.close()
        logs.close()


def busy(window: MainWindow) -> bool:
    """A task is pending, or a visible progress bar is still short of its end (the map's UMAP)."""
    if window.tasks.pending:
        return True
    pane = window.stack.currentWidget()
    if pane is None:
        return False
    return any(
        bar.isVisible() and bar.maximum() > 0 and bar.value() < bar.maximum()
        for bar in pane.findChildren(QProgressBar)
    )


def settle(
    loop: asyncio.AbstractEventLoop, window: MainWindow, timeout: float, quiet: float = SETTLE_S
) -> None:
    """Run the loop until the pane has been idle for `quiet` s (or `timeout` passes)."""

    async def run() -> None:
        deadline = loop.time() + timeout
        quiet_since: float | None = None
        while loop.time() < deadline:
            await asyncio.sleep(0.05)
            if busy(window):
                quiet_since = None
            elif quiet_since is None:
                quiet_since = loop.time()
            elif loop.time() - quiet_since >= quiet:
                return

    loop.run_until_complete(run())


def open_window(demo: Demo, theme: Theme, size: tuple[int, int], settings: Path) -> MainWindow:
    bridge = EventBridge(demo.service.events)
    window = MainWindow(
        demo.service,
        events=bridge,
        settings=ShellSettings.at(settings / f"shell-{theme.name}.ini"),
        url=URL,
        workspace=demo.root,
    )
    window.destroyed.connect(bridge.close)
    window.resize(*size)
    window.show()
    window.start_refreshing()
    return window


def shoot(
    app: QApplication,
    loop: asyncio.AbstractEventLoop,
    demo: Demo,
    theme: Theme,
    size: tuple[int, int],
    out: Path,
    settings_dir: Path,
    only: set[str] | None = None,
) -> list[Path]:
    """One fresh window per pane: the stack's minimum size is the widest pane built so far,
    so a wide pane would otherwise widen every later screenshot."""
    app.setPalette(palette_of(theme))
    applied = apply_style(app)
    assert applied.name == theme.name, f"the shell chose {applied.name} for a {theme.name} palette"
    suffix = "" if theme is LIGHT else f"-{theme.name}"
    wanted = reveals(demo)
    saved = []
    for spec in discover_panes():
        if only and spec.key not in only:
            continue
        window = open_window(demo, theme, size, settings_dir)
        try:
            window.show_pane(spec.key, **wanted.get(spec.key, {}))
            settle(loop, window, PANE_TIMEOUT_S.get(spec.key, DEFAULT_TIMEOUT_S))
            image = grab(window)
            for problem in clipped(window):  # what this display's fonts cut off
                print(f"    clipped: {problem}", flush=True)
            path = out / f"{spec.key}{suffix}.png"
            if not image.save(str(path)):
                raise SystemExit(f"could not write {path}")
        finally:
            window.shutdown()
            window.deleteLater()
        saved.append(path)
        shown = path.relative_to(REPO) if path.is_relative_to(REPO) else path
        wider = "" if image.width() == size[0] else f" (the window grew to {image.width()} wide)"
        print(f"  {shown}{wider}", flush=True)
    return saved


def grab(window: QWidget) -> Any:
    """On a real display (xcb) the window as the X server shows it; offscreen, a render."""
    app = QApplication.instance()
    assert app is not None
    app.processEvents()
    if QApplication.platformName() == "xcb":
        return window.screen().grabWindow(window.winId())
    return window.grab()


def parse_size(text: str) -> tuple[int, int]:
    width, height = text.lower().split("x")
    return int(width), int(height)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--size", type=parse_size, default=(1280, 800), help="WIDTHxHEIGHT")
    parser.add_argument("--themes", default="light,dark", help="light, dark or light,dark")
    parser.add_argument("--count", type=int, default=300, help="demo memories")
    parser.add_argument("--embedder", choices=("native", "hash", "none"), default="native")
    parser.add_argument("--panes", default="", help="only these pane keys (comma-separated)")
    args = parser.parse_args(argv)
    themes = [{"light": LIGHT, "dark": DARK}[name.strip()] for name in args.themes.split(",")]
    args.out.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setStyle("Fusion")  # the same widgets on every platform the script runs on
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with (
        tempfile.TemporaryDirectory(prefix="signet-shots-") as tmp,
        live_daemon(Path(tmp) / "demo", args.count, args.embedder) as demo,
    ):
        settle_workers(loop)
        for theme in themes:
            print(f"{theme.name}:", flush=True)
            only = {key.strip() for key in args.panes.split(",") if key.strip()}
            shoot(app, loop, demo, theme, args.size, args.out, Path(tmp), only)
    loop.close()
    return 0


def settle_workers(loop: asyncio.AbstractEventLoop, seconds: float = 1.0) -> None:
    """Give the hosted workers a moment to report `running` (their first worker.state)."""
    loop.run_until_complete(asyncio.sleep(seconds))


if __name__ == "__main__":
    sys.exit(main())
