"""Single-query embedding latency, this build against another checkout, alternating in one run.

    uv run python bench/query_embedding.py [--base /tmp/base9] [--rounds 5] [--queries 300]

Each round runs one child process per build (the base with its own .venv), alternating, so both
see the same machine load. A child loads the native MiniLM as the daemon does (one BLAS thread,
set by `signet_desktop/__init__.py`), warms it, then times distinct short recall questions:

- `embed`: `NativeMiniLM.embed([text])`, the embedder alone, wall time and the calling thread's
  CPU time (`cpu`: both builds run the model on the calling thread, so it is what the wall
  time would be on an idle machine, and robust to other load);
- `embed_query stage`: what recall's semantic channel waits for, `pool.submit(channel._embed,
  text).result()` on a one-thread pool as the recall engine does (thread hop included);
- `batch sent/s`: 1,000 short sentences in one `embed` call (2 workers), so throughput is seen
  not to regress.

Prints per-round rows and the medians over rounds of p50/p95 (a benchmark, not a test).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WARMUP = 30


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def measure(root: Path, count: int) -> dict[str, float]:
    """In the child: load, time `embed`, the embed_query stage and batch throughput."""
    sys.path[:0] = [str(root), str(root / "bench")]
    from concurrent.futures import ThreadPoolExecutor

    from corpus import queries, sentences

    from signet_desktop.embedding.native import NativeMiniLM
    from signet_desktop.recall.vector import SemanticChannel

    qs = queries(count + 2 * WARMUP, seed=23)
    started = time.perf_counter()
    embedder = NativeMiniLM()
    embedder.load()
    load_s = time.perf_counter() - started
    channel = SemanticChannel(embedder, vec_available=True)
    embed_ms, cpu_ms, stage_ms = [], [], []
    with ThreadPoolExecutor(1, thread_name_prefix="recall") as pool:
        for i, text in enumerate(qs):
            c0, t0 = time.thread_time(), time.perf_counter()
            embedder.embed([text])
            t1, c1 = time.perf_counter(), time.thread_time()
            pool.submit(channel._embed, text + " ?").result()  # a different text: no reuse
            t2 = time.perf_counter()
            if i >= WARMUP:
                embed_ms.append((t1 - t0) * 1000)
                cpu_ms.append((c1 - c0) * 1000)
                stage_ms.append((t2 - t1) * 1000)
    texts = sentences(1000)
    embedder.embed(texts[:64])
    t0 = time.perf_counter()
    embedder.embed(texts)
    rate = len(texts) / (time.perf_counter() - t0)
    embedder.close()
    return {
        "load_s": load_s,
        "embed_p50": _pct(embed_ms, 0.5),
        "embed_p95": _pct(embed_ms, 0.95),
        "cpu_p50": _pct(cpu_ms, 0.5),
        "stage_p50": _pct(stage_ms, 0.5),
        "stage_p95": _pct(stage_ms, 0.95),
        "batch_rate": rate,
    }


def run_child(python: str, root: Path, count: int) -> dict[str, float]:
    """One measurement in a fresh process of `python` importing the tree at `root`."""
    cmd = [python, __file__, f"--child={root}", f"--queries={count}"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=root)
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


COLUMNS = ("load_s", "embed_p50", "embed_p95", "cpu_p50", "stage_p50", "stage_p95", "batch_rate")
HEADER = (
    f"{'build':<7} {'load s':>7} {'embed p50':>9} {'p95':>6} {'cpu p50':>7} "
    f"{'stage p50':>9} {'p95':>6} "
    f"{'batch sent/s':>12}"
)


def _row(label: str, r: dict[str, float]) -> str:
    return (
        f"{label:<7} {r['load_s']:>7.2f} {r['embed_p50']:>9.2f} {r['embed_p95']:>6.2f} "
        f"{r['cpu_p50']:>7.2f} {r['stage_p50']:>9.2f} {r['stage_p95']:>6.2f} "
        f"{r['batch_rate']:>12.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, default=Path("/tmp/base9"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args.queries)))
        return
    builds = {"base": (str(args.base / ".venv" / "bin" / "python"), args.base)}
    builds["this"] = (sys.executable, ROOT)
    print(f"query embedding: {args.queries} distinct short questions per round, ms")
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start\n")
    print(f"{'round':<6} {HEADER}")
    results: dict[str, list[dict[str, float]]] = {name: [] for name in builds}
    for i in range(args.rounds):
        for name, (python, root) in builds.items():
            r = run_child(python, root, args.queries)
            results[name].append(r)
            print(f"{i + 1:<6} {_row(name, r)}", flush=True)
    print(f"\nmedian over {args.rounds} rounds\n{HEADER}")
    for name, rows in results.items():
        print(_row(name, {c: statistics.median(r[c] for r in rows) for c in COLUMNS}))
    print(f"\nload average {os.getloadavg()[0]:.2f} at end")


if __name__ == "__main__":
    main()
