"""Launch of the real desktop app: exec to the main window's first paint, and settled RSS.

    uv run python bench/launch.py [--runs 3] [--baseline-dir /tmp/prev] [--memories 2000]
        [--sessions 600] [--settle 20] [--xcb] [--precisions float32,int8]

Each run starts `signet-desktop --workspace <fresh copy> --port 0` (the desktop shell, not
--headless) with `QT_QPA_PLATFORM=offscreen` (or the xcb platform under `xvfb-run -a` with
--xcb) and a fresh HOME (no remembered window state: the first pane opens). The process is the
checkout's own `.venv/bin/python` running a small probe (`PROBE` below) that installs an
application-wide event filter and then calls `signet_desktop.main.main`; the probe works for
any build, so the previous one (`--baseline-dir`, another checkout with its own `.venv`) is
measured by the same code. At the first paint of a widget in a QMainWindow it prints one line:
the wall clock, the process's CPU seconds, `len(sys.modules)` and which heavy modules are
loaded. Then, `--settle` seconds later, VmRSS, RssAnon and VmHWM (the peak) are read from /proc.

Cases: an empty workspace, and (when --memories or --sessions > 0) one with that many
memories (written through the facade, embedded inline by the native model, so the launched app
has nothing to backfill) and imported Claude Code sessions (6 exchanges each). Builds alternate
within each run (A B, B A, ...) so the machine's load hits both alike. Reported: medians, and
the max of the wall times.

Bytecode: each build gets its own `PYTHONPYCACHEPREFIX` under the bench's temp directory, filled
by one unmeasured launch first, so runs see what a user sees from the second launch on (nothing
is written into the checkouts). `--cold-bytecode` keeps `PYTHONDONTWRITEBYTECODE` and no cache:
every launch compiles every module it imports (this machine's sessions set that variable).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
MARK = "LAUNCH-PROBE "
TIMEOUT_S = 120.0
HEAVY = ("numpy", "onnxruntime", "tokenizers", "httpx", "fastapi", "uvicorn", "pyqtgraph")

PROBE = f"""
import importlib.abc, importlib.util, resource, sys, time

def _cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime

def _patch(QtCore, QtWidgets):
    class _Probe(QtCore.QObject):
        def eventFilter(self, obj, event):
            if (event.type() == QtCore.QEvent.Type.Paint and obj.isWidgetType()
                    and isinstance(obj.window(), QtWidgets.QMainWindow)):
                QtWidgets.QApplication.instance().removeEventFilter(self)
                heavy = ",".join(m for m in {HEAVY!r} if m in sys.modules) or "-"
                line = f"{{time.time():.6f}} {{_cpu():.3f}} {{len(sys.modules)}} {{heavy}}"
                sys.stderr.write(f"{MARK}{{line}}\\n")
                sys.stderr.flush()
            return False

    class _App(QtWidgets.QApplication):
        def __init__(self, *args):
            super().__init__(*args)
            self._probe = _Probe()
            self.installEventFilter(self._probe)

    QtWidgets.QApplication = _App

class _Loader(importlib.abc.Loader):
    def __init__(self, inner):
        self.inner = inner
    def create_module(self, spec):
        return self.inner.create_module(spec)
    def exec_module(self, module):
        self.inner.exec_module(module)
        _patch(sys.modules["PySide6.QtCore"], module)

class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "PySide6.QtWidgets":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        spec.loader = _Loader(spec.loader)
        return spec

# PySide6 is imported when the app imports it, not before: once it is loaded, every later
# import pays its __feature__ check, so importing it early would distort what is measured.
sys.meta_path.insert(0, _Finder())
from signet_desktop.main import main
sys.exit(main(sys.argv[1:]))
"""


@dataclass(frozen=True, slots=True)
class Sample:
    window_s: float  # exec -> first paint, wall clock
    cpu_s: float  # the process's CPU seconds at first paint
    modules: int
    heavy: str
    rss_mb: float
    anon_mb: float  # of rss_mb: the heap and other private memory (the rest: mapped files)
    peak_mb: float


def _status_mb(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field}")


def _read_marks(stream: object, found: list[str], seen: threading.Event) -> None:
    for line in stream:  # type: ignore[attr-defined]
        if line.startswith(MARK) and not seen.is_set():
            found.append(line[len(MARK) :].strip())
            seen.set()


def one_launch(
    checkout: Path, workspace: Path, home: Path, settle: float, xcb: bool, pycache: Path | None
) -> Sample:
    """Launch the app from `checkout` on `workspace`; measure it; stop it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SIGNET_", "QT_"))}
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    env.update(HOME=str(home), PYTHONUNBUFFERED="1", XDG_CONFIG_HOME=str(home / ".config"))
    env["QT_QPA_PLATFORM"] = "xcb" if xcb else "offscreen"
    python = str(checkout / ".venv" / "bin" / "python")
    command = [python, "-c", PROBE, "--workspace", str(workspace), "--port", "0"]
    command += ["--log-level", "warning"]
    if xcb:
        command = ["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24", *command]
    found: list[str] = []
    seen = threading.Event()
    started = time.time()
    proc = subprocess.Popen(
        command,
        cwd=checkout,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    reader = threading.Thread(target=_read_marks, args=(proc.stderr, found, seen), daemon=True)
    reader.start()
    try:
        if not seen.wait(TIMEOUT_S):
            raise RuntimeError(f"no window within {TIMEOUT_S} s (exit {proc.poll()})")
        stamp, cpu, modules, heavy = found[0].split()
        time.sleep(settle)
        pid = _app_pid(proc.pid) if xcb else proc.pid
        rss, anon = _status_mb(pid, "VmRSS"), _status_mb(pid, "RssAnon")
        peak = _status_mb(pid, "VmHWM")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(TIMEOUT_S)
        reader.join(5)
    return Sample(float(stamp) - started, float(cpu), int(modules), heavy, rss, anon, peak)


def _app_pid(root: int) -> int:
    """The python process under xvfb-run (a shell script that also starts Xvfb)."""
    pending = [root]
    while pending:
        pid = pending.pop()
        if "python" in Path(f"/proc/{pid}/comm").read_text():
            return pid
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        pending.extend(int(child) for child in children)
    raise RuntimeError("the app's process was not found under xvfb-run")


REAL_VECTORS = 5_000  # beyond this many memories, the fixture's vectors are recycled


class RecyclingMiniLM:
    """The native model for the first `real` texts, then their vectors again in turn.

    RSS does not depend on what the vectors say, only that every memory has one of the native
    generation; embedding 100k sentences on two cores would take most of an hour.
    """

    def __init__(self, real: int, precision: str) -> None:
        from signet_desktop.embedding.graphs import PRECISIONS
        from signet_desktop.embedding.native import NativeMiniLM

        self._native = NativeMiniLM(graph=PRECISIONS[precision])
        self.name, self.model = self._native.name, self._native.model
        self.dimensions = self._native.dimensions
        self._real = real
        self._seen: list[object] = []

    def embed(self, texts: Sequence[str]) -> object:
        import numpy as np

        if len(self._seen) < self._real:
            vectors = self._native.embed(texts)
            self._seen.extend(vectors)
            return vectors
        start = len(self._seen)
        self._seen.extend(self._seen[(start + i) % self._real] for i in range(len(texts)))
        return np.stack(self._seen[start:])  # type: ignore[call-overload]


def cached_fixture(
    cache: Path | None, root: Path, memories: int, sessions: int, precision: str
) -> Path:
    """`make_fixture`'s workspace, built once per (memories, sessions, precision) under `cache`
    if given (the float32 one without a suffix: the previous builds' only graph)."""
    if cache is None:
        return make_fixture(root / precision, memories, sessions, precision)
    suffix = "" if precision == "float32" else f"-{precision}"
    built = cache / f"launch-{memories}-memories-{sessions}-sessions{suffix}"
    if not built.is_dir():  # built beside it, then renamed: a killed build is never reused
        partial = built.with_name(built.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        make_fixture(partial, memories, sessions, precision)
        partial.rename(built)
    return built / "fixture"


def settle_backlog(paths: Any) -> None:
    """What the running daemon's workers would have done by now: every content-safety
    decision (the fixture is written without workers; a launch would start with a backlog)."""
    from signet_desktop.config import SignetConfig
    from signet_desktop.service.container import BuildOptions, build_service

    service = build_service(paths, SignetConfig(), BuildOptions(no_embedder=True))
    try:
        while service.safety.scan_pending(None, 10_000):
            pass
    finally:
        service.close()


def make_fixture(root: Path, memories: int, sessions: int, precision: str) -> Path:
    """A workspace with `memories` memories (with vectors) and `sessions` imported sessions."""
    sys.path.insert(0, str(REPO_ROOT))
    sys.path.insert(0, str(REPO_ROOT / "tests"))
    from support.history_files import write_claude_project

    from bench.corpus import sentences
    from signet_desktop.config import SignetConfig, WorkspacePaths
    from signet_desktop.domain.memory import Actor
    from signet_desktop.service.container import BuildOptions, build_service
    from signet_desktop.service.imports.harness import claude_code_importer
    from signet_desktop.service.imports.service import ImportService
    from signet_desktop.service.memories.service import RememberRequest
    from signet_desktop.service.transcripts.service import TranscriptService
    from signet_desktop.storage.database import open_database

    workspace = root / "fixture"
    paths = WorkspacePaths.for_root(workspace)
    paths.ensure()
    # The native model embeds inline, so the launched app has nothing to backfill: settled.
    native = BuildOptions(embedder=RecyclingMiniLM(REAL_VECTORS, precision), inline_vectors=True)
    config = SignetConfig.model_validate({"embedding": {"precision": precision}})
    service = build_service(paths, config, native)
    try:
        texts = sentences(memories)
        for start in range(0, memories, 500):
            batch = [
                RememberRequest(text, who="bench", session_id=f"bench-{(start + i) // 40}")
                for i, text in enumerate(texts[start : start + 500])
            ]
            service.memories.remember_many(batch, Actor("bench", "system"))
    finally:
        service.close()
    if sessions:
        history = root / "history"
        write_claude_project(history, sessions, 6)
        db = open_database(paths.db_path)
        try:
            transcripts = TranscriptService(db, workspace)
            importer = claude_code_importer()
            imports = ImportService(
                db, workspace, transcripts, importers=[importer], allowed_roots=[history]
            )
            imports.start("default", "claude-code", str(history), wait=True)
        finally:
            db.close()
    settle_backlog(paths)
    return workspace


def summarise(name: str, case: str, samples: list[Sample]) -> str:
    windows = [s.window_s for s in samples]
    med = statistics.median
    return (
        f"| {case} | {name} | {med(windows):.2f} | {max(windows):.2f} "
        f"| {med([s.cpu_s for s in samples]):.2f} | {med([s.modules for s in samples]):.0f} "
        f"| {med([s.rss_mb for s in samples]):.0f} | {med([s.anon_mb for s in samples]):.0f} "
        f"| {med([s.peak_mb for s in samples]):.0f} "
        f"| {samples[-1].heavy} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline-dir", type=Path, default=None)
    parser.add_argument("--memories", type=int, default=0)
    parser.add_argument("--sessions", type=int, default=0)
    parser.add_argument("--settle", type=float, default=20.0)
    parser.add_argument("--xcb", action="store_true", help="xcb under xvfb-run, not offscreen")
    parser.add_argument(
        "--fixture-cache", type=Path, default=None, help="build the fixture once, keep it here"
    )
    parser.add_argument("--cold-bytecode", action="store_true", help="compile at every launch")
    parser.add_argument(
        "--precisions",
        help="comma-separated embedding.precision values: this build once per value (each "
        "workspace gets an agent.yaml saying it), instead of one default row",
    )
    args = parser.parse_args()
    # (name, checkout, precision written to agent.yaml, precision of its fixture's vectors)
    builds: list[tuple[str, Path, str | None, str]] = [("this build", REPO_ROOT, None, "int8")]
    if args.precisions:
        builds = [(f"this build, {p}", REPO_ROOT, p, p) for p in args.precisions.split(",")]
    if args.baseline_dir is not None:  # builds before the int8 default had only float32
        builds.insert(0, ("previous build", args.baseline_dir.resolve(), None, "float32"))
    load = os.getloadavg()[0]
    rows: list[str] = []
    with tempfile.TemporaryDirectory(prefix="signet-launch-") as tmp:
        root = Path(tmp)
        caches: dict[str, Path | None] = {name: None for name, *_ in builds}
        if not args.cold_bytecode:
            for number, (name, checkout, *_) in enumerate(builds):
                caches[name] = root / f"pycache-{number}"
                where = root / f"warm-{number}"
                one_launch(checkout, where / "ws", where, 0.0, args.xcb, caches[name])
        cases: list[tuple[str, dict[str, Path]]] = [("empty", {})]
        if args.memories or args.sessions:
            label = f"{args.memories} memories, {args.sessions} sessions"
            made = {
                vectors: cached_fixture(
                    args.fixture_cache, root, args.memories, args.sessions, vectors
                )
                for vectors in {b[3] for b in builds}
            }
            cases.append((label, made))
        for number, (case, fixtures) in enumerate(cases):
            samples: dict[str, list[Sample]] = {name: [] for name, *_ in builds}
            for run in range(args.runs):
                order = builds if run % 2 == 0 else builds[::-1]  # A B, B A, ...
                for name, checkout, precision, vectors in order:
                    where = root / f"case-{number}-run-{run}-{name.replace(' ', '-')}"
                    workspace = where / "ws"
                    if vectors in fixtures:
                        shutil.copytree(fixtures[vectors], workspace)
                    if precision is not None:
                        workspace.mkdir(parents=True, exist_ok=True)
                        config = f"embedding:\n  precision: {precision}\n"
                        (workspace / "agent.yaml").write_text(config, encoding="utf-8")
                    samples[name].append(
                        one_launch(checkout, workspace, where, args.settle, args.xcb, caches[name])
                    )
            rows += [summarise(name, case, samples[name]) for name, *_ in builds]
    platform = "xcb under Xvfb" if args.xcb else "offscreen"
    platform += ", no bytecode cache" if args.cold_bytecode else ", bytecode cached"
    print(f"signet-desktop launch ({platform}), {args.runs} runs per build, interleaved; "
          f"load {load:.1f} at start; RSS {args.settle:.0f} s after the first paint\n")  # fmt: skip
    print("| workspace | build | window s (median) | window s (max) | CPU s to window "
          "| modules at window | RSS MiB | anon MiB | peak MiB "
          "| heavy modules at window |")  # fmt: skip
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for row in rows:
        print(row)
    print("\ntargets: window <= 1.5 s (quiet machine), settled RSS <= 300 MiB")


if __name__ == "__main__":
    main()
