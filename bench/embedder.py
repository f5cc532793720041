"""Embedder throughput and latency: prints a table (a benchmark, not a test).

    uv run python bench/embedder.py [--sentences 1000] [--queries 200] [--repeats 3]

Each variant runs in a fresh subprocess so BLAS threading can differ per row: native MiniLM
with numpy's default BLAS threads or one BLAS thread (OPENBLAS_NUM_THREADS=1), each with one or
two batch workers, and the hash embedder as a floor. Columns: cold load time, sentences/s on
1,000 short sentences (best and median of --repeats runs), sentences per CPU-second (robust to
other load on the machine; spinning BLAS threads lower it), and single-query latency p50/p95
(one text per call).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ONE_BLAS_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
VARIANTS: dict[str, tuple[str, int, dict[str, str]]] = {
    "native, BLAS default threads": ("native", 1, {}),
    "native, BLAS default, workers=2": ("native", 2, {}),
    "native, 1 BLAS thread": ("native", 1, ONE_BLAS_THREAD),
    "native, 1 BLAS thread, workers=2": ("native", 2, ONE_BLAS_THREAD),
    "hash (floor)": ("hash", 1, {}),
}
_SUBJECTS = ["The user", "Our team", "The daemon", "Alice", "The build", "This project", "Bob"]
_VERBS = ["prefers", "needs", "switched to", "avoids", "documented", "benchmarked", "deployed"]
_OBJECTS = [
    "dark mode in the editor",
    "SQLite in WAL mode",
    "the staging database on port 5433",
    "a nightly backup job",
    "uv for dependency management",
    "short commit messages",
    "the Ollama embedding server",
    "type hints everywhere",
]
_TAILS = ["", " last week", " for the release", " since March", " after the outage", " again"]


def sentences(n: int, seed: int = 7) -> list[str]:
    """`n` short, varied, deterministic sentences (about 8 to 16 tokens each)."""
    rng = random.Random(seed)
    return [
        f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)}"
        f"{rng.choice(_TAILS)} (note {i})."
        for i in range(n)
    ]


def measure(provider: str, workers: int, n: int, queries: int, repeats: int) -> dict[str, float]:
    """Run in the child process: load, throughput and latency for one provider."""
    sys.path.insert(0, str(ROOT))
    from signet_desktop.embedding.hashing import HashEmbedder
    from signet_desktop.embedding.native import NativeMiniLM

    texts = sentences(n)
    started = time.perf_counter()
    embedder = NativeMiniLM(workers=workers) if provider == "native" else HashEmbedder()
    if isinstance(embedder, NativeMiniLM):
        embedder.load()
    load_s = time.perf_counter() - started
    embedder.embed(texts[:64])  # warm caches and BLAS threads
    rates, cpu_rates = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        embedder.embed(texts)
        rates.append(n / (time.perf_counter() - t0))
        cpu_rates.append(n / (time.process_time() - c0))
    latencies = []
    for text in texts[:queries]:
        t0 = time.perf_counter()
        embedder.embed([text])
        latencies.append((time.perf_counter() - t0) * 1000.0)
    latencies.sort()
    return {
        "load_s": load_s,
        "best_rate": max(rates),
        "median_rate": statistics.median(rates),
        "cpu_rate": statistics.median(cpu_rates),
        "p50_ms": latencies[len(latencies) // 2],
        "p95_ms": latencies[min(len(latencies) - 1, int(len(latencies) * 0.95))],
    }


def run_variant(
    provider: str, workers: int, env: dict[str, str], args: argparse.Namespace
) -> dict[str, float]:
    """Measure one variant in a subprocess with `env` added to the environment."""
    cmd = [
        sys.executable,
        __file__,
        f"--child={provider}:{workers}",
        f"--sentences={args.sentences}",
        f"--queries={args.queries}",
        f"--repeats={args.repeats}",
    ]
    out = subprocess.run(
        cmd, env={**os.environ, **env}, capture_output=True, text=True, check=True, cwd=ROOT
    )
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        provider, workers = args.child.split(":")
        result = measure(provider, int(workers), args.sentences, args.queries, args.repeats)
        print(json.dumps(result))
        return
    print(f"embedder benchmark: {args.sentences} short sentences, {args.queries} single queries,")
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start\n")
    header = (
        f"{'variant':<34} {'load s':>7} {'sent/s best':>11} {'median':>8} {'per cpu-s':>9} "
        f"{'p50 ms':>7} {'p95 ms':>7}"
    )
    print(header)
    print("-" * len(header))
    for label, (provider, workers, env) in VARIANTS.items():
        r = run_variant(provider, workers, env, args)
        print(
            f"{label:<34} {r['load_s']:>7.2f} {r['best_rate']:>11.0f} {r['median_rate']:>8.0f} "
            f"{r['cpu_rate']:>9.0f} {r['p50_ms']:>7.1f} {r['p95_ms']:>7.1f}"
        )
    print(f"\nload average {os.getloadavg()[0]:.2f} at end (other work on the machine skews rows)")


if __name__ == "__main__":
    main()
