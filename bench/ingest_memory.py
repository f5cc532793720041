"""Resident memory of `signet-desktop --headless` after a 3,000-turn ingest, side by side.

Each build (this checkout, and `--base DIR`: the build before, a worktree with its own
`.venv`) runs as a real daemon on a fresh workspace with the native embedder. Every LoCoMo
dev turn (plus filler to `--turns`) is remembered over HTTP by 8 clients; the bench waits
until every memory has its vector, asks `--questions` recalls, lets the daemon settle and
reads /proc: RSS, its anonymous and file-backed parts (the file-backed part is the database
and model pages the kernel can drop), the peak (VmHWM), and `Private_Dirty` from
smaps_rollup. Target (issue 30): <= 250 MB after a 3,000-turn ingest.

    uv run python bench/ingest_memory.py [--base /tmp/wt_old] [--runs 1] [--turns 3000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "bench"))
from busy_vectors import Run, ask, ingest, load_locomo, missing  # noqa: E402
from remember import Build, Daemon, percentile  # noqa: E402

FIELDS = ("VmRSS", "RssAnon", "RssFile", "VmHWM")
SETTLE_S = 25.0  # the daemon checks its heap every 20 s
WAIT_S = 600.0


def proc_mb(pid: int) -> dict[str, float]:
    """The daemon's memory in MiB: /proc status fields and smaps_rollup's Private_Dirty."""
    values: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in FIELDS:
            values[key] = int(rest.split()[0]) / 1024
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key == "Private_Dirty":
            values[key] = int(rest.split()[0]) / 1024
    return values


def one_run(build: Build, turns: int, questions: int) -> dict[str, float]:
    """Memory after the ingest, the vectors and the recalls."""
    locomo_turns, asked = load_locomo(turns, questions)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        daemon = Daemon(build, root / "ws", root / "home")
        try:
            run = Run(build.name)
            started = time.monotonic()
            ids = ingest(daemon.url, locomo_turns, run)
            deadline = time.monotonic() + WAIT_S
            while missing(daemon.db_path) and time.monotonic() < deadline:
                time.sleep(0.5)
            if missing(daemon.db_path):
                raise RuntimeError(f"{build.name}: vectors still missing after {WAIT_S:.0f} s")
            vectors_s = time.monotonic() - started
            after_vectors = proc_mb(daemon.proc.pid)
            with httpx.Client(base_url=daemon.url, timeout=120) as client:
                latencies = [ask(client, question, ids)[1] for question in asked]
            time.sleep(SETTLE_S)
            values = proc_mb(daemon.proc.pid)
            values["VmRSS before recalls"] = after_vectors["VmRSS"]
            values["acks/s"] = len(locomo_turns) / run.ingest_s
            values["s to every vector"] = vectors_s
            values["recall p50 ms"] = percentile(latencies, 0.5)
            values["recall p95 ms"] = percentile(latencies, 0.95)
            return values
        finally:
            daemon.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, default=None, help="checkout of the build before")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--turns", type=int, default=3000)
    parser.add_argument("--questions", type=int, default=100)
    args = parser.parse_args()
    builds = [Build("this build", sys.executable, REPO_ROOT)]
    if args.base is not None:
        base = args.base.resolve()
        builds.insert(0, Build("build before", str(base / ".venv" / "bin" / "python"), base))
    samples: dict[str, list[dict[str, float]]] = {b.name: [] for b in builds}
    for _ in range(args.runs):  # builds alternate within each run
        for build in builds:
            samples[build.name].append(one_run(build, args.turns, args.questions))
    columns = ("acks/s", "s to every vector", "recall p50 ms", "recall p95 ms")
    columns += ("VmRSS before recalls", "VmRSS", "RssAnon", "RssFile", "Private_Dirty", "VmHWM")
    print(f"headless daemon after {args.turns:,} remembered turns (8 clients, native embedder),")
    print(f"every vector in, then {args.questions} recalls and {SETTLE_S:.0f} s; MiB, "
          f"medians of {args.runs}\n")  # fmt: skip
    print("| build | " + " | ".join(columns) + " |")
    print("| --- |" + " ---: |" * len(columns))
    for name, runs in samples.items():
        cells = [f"{statistics.median(r[c] for r in runs):.0f}" for c in columns]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("\ntarget: VmRSS <= 250 MiB after a 3,000-turn ingest")


if __name__ == "__main__":
    main()
