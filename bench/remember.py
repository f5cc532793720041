"""Remember throughput: HTTP against real daemons, and the facade's bulk path, two builds at once.

Each build (this checkout, and with `--base DIR` the build before, a worktree with its own
`.venv`) runs as a real `signet-desktop --headless` subprocess on a fresh workspace with the
native embedder; the rounds alternate builds so machine noise hits both alike. Scenarios:

- sequential: one client, N remembers one after another (ack latency p50/p95, remembers/s);
- concurrent: 8 clients (threads, keep-alive connections), throughput and ack p50/p95;
- backlog recall: right after the concurrent burst, sequential recalls (limit 10) while the
  burst's vectors are still being embedded (recall p50/p95; vectors pending at start and end);
- sustained: an open-loop 300/s for S seconds; ack latency, and the lag from a memory's row
  to its vector's row (both timestamps written by the daemon; read from the database);
- bulk: N memories through `service.memories.remember_many` in-process (a loop of
  `remember` on a build without it), memories/s with every vector stored.

    uv run python bench/remember.py [--base /tmp/base9] [--rounds 2] [--sustain-s 60]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import httpx
import sqlean

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "bench"))
from corpus import sentences  # noqa: E402

PREFIX = "Signet Desktop listening on "
TIMEOUT_S = 60.0
CLIENTS = 8
LAG_QUERY = """
SELECT m.created_at, MIN(e.created_at) FROM memories m
LEFT JOIN embeddings e ON e.source_id = m.id AND e.source_type = 'memory'
GROUP BY m.id
"""


@dataclass
class Build:
    name: str
    python: str
    root: Path


@dataclass
class Sample:
    latencies_ms: list[float] = field(default_factory=list)
    wall_s: float = 0.0
    extra: dict[str, float] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return len(self.latencies_ms) / self.wall_s if self.wall_s else 0.0


def percentile(values: list[float], fraction: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))]


class Daemon:
    """One build's daemon on a fresh workspace."""

    def __init__(self, build: Build, workspace: Path, home: Path) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SIGNET_", "VIRTUAL_"))}
        env.update(HOME=str(home), PYTHONUNBUFFERED="1")
        command = [build.python, "-m", "signet_desktop.main", "--headless"]
        command += ["--workspace", str(workspace), "--port", "0", "--log-level", "warning"]
        self.db_path = workspace / "memory" / "memories.db"
        self.proc = subprocess.Popen(
            command,
            cwd=build.root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith(PREFIX):
            raise RuntimeError(f"{build.name} daemon did not start (exit {self.proc.wait(30)})")
        self.url = line.removeprefix(PREFIX).split(" ")[0]
        warm(self.url)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(TIMEOUT_S)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def warm(url: str) -> None:
    """Load the model and start the workers before anything is timed."""
    with httpx.Client(base_url=url, timeout=TIMEOUT_S) as client:
        for index in range(20):
            client.post("/api/memory/remember", json={"content": f"warm-up note {index}"})
    time.sleep(2.0)


def post_all(url: str, texts: list[str], out: list[float], ids: list[str]) -> None:
    with httpx.Client(base_url=url, timeout=TIMEOUT_S) as client:
        for text in texts:
            started = time.perf_counter()
            reply = client.post("/api/memory/remember", json={"content": text})
            out.append((time.perf_counter() - started) * 1000)
            reply.raise_for_status()
            ids.append(reply.json()["id"])


def closed_loop(url: str, texts: list[str], clients: int) -> Sample:
    """`clients` threads each posting its share back to back."""
    shares = [texts[i::clients] for i in range(clients)]
    outs: list[list[float]] = [[] for _ in shares]
    ids: list[str] = []
    threads = [
        threading.Thread(target=post_all, args=(url, share, out, ids))
        for share, out in zip(shares, outs, strict=True)
    ]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return Sample([v for out in outs for v in out], time.perf_counter() - started)


def paced(url: str, texts: list[str], interval_s: float, start: float, out: list[float]) -> None:
    with httpx.Client(base_url=url, timeout=TIMEOUT_S) as client:
        for index, text in enumerate(texts):
            due = start + index * interval_s
            delay = due - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            sent = time.perf_counter()
            client.post("/api/memory/remember", json={"content": text}).raise_for_status()
            out.append((time.perf_counter() - sent) * 1000)


def recall_during_backlog(daemon: Daemon, queries: list[str]) -> Sample:
    """Sequential recalls right after a burst, while its vectors are still being embedded."""
    pending = vector_lags(daemon.db_path)[1]
    out: list[float] = []
    started = time.perf_counter()
    with httpx.Client(base_url=daemon.url, timeout=TIMEOUT_S) as client:
        for query in queries:
            sent = time.perf_counter()
            reply = client.post("/api/memory/recall", json={"query": query, "limit": 10})
            out.append((time.perf_counter() - sent) * 1000)
            reply.raise_for_status()
    sample = Sample(out, time.perf_counter() - started)
    sample.extra = {
        "pending": float(pending),
        "pending_after": float(vector_lags(daemon.db_path)[1]),
    }
    return sample


def sustained(daemon: Daemon, texts: list[str], rate: float) -> Sample:
    """Open loop at `rate`/s over CLIENTS threads; then every vector's lag behind its row."""
    before = len(vector_lags(daemon.db_path)[0])
    shares = [texts[i::CLIENTS] for i in range(CLIENTS)]
    outs: list[list[float]] = [[] for _ in shares]
    start = time.perf_counter() + 0.2
    threads = [
        threading.Thread(target=paced, args=(daemon.url, share, CLIENTS / rate, start, out))
        for share, out in zip(shares, outs, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    sample = Sample([v for out in outs for v in out], time.perf_counter() - start)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and vector_lags(daemon.db_path)[1]:
        time.sleep(0.5)
    lags, missing = vector_lags(daemon.db_path)
    lags = lags[before:]
    sample.extra = {
        "lag_p50": percentile(lags, 0.5),
        "lag_p95": percentile(lags, 0.95),
        "lag_p99": percentile(lags, 0.99),
        "lag_max": max(lags) if lags else float("nan"),
        "over_2s": sum(1 for lag in lags if lag > 2000),
        "missing": missing,
    }
    return sample


def vector_lags(db_path: Path) -> tuple[list[float], int]:
    """(ms from each memory's row to its first vector, in row order; memories without one)."""
    conn = sqlean.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        rows = conn.execute(LAG_QUERY + " ORDER BY MIN(m.seq)").fetchall()
    finally:
        conn.close()
    lags = [(_ts(vector) - _ts(created)) * 1000 for created, vector in rows if vector is not None]
    return lags, sum(1 for _, vector in rows if vector is None)


def _ts(value: str) -> float:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


BULK_SCRIPT = """
import json, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from corpus import sentences
from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.memory import Actor
from signet_desktop.service.container import build_service
from signet_desktop.service.memories.service import RememberRequest
count = int(sys.argv[2])
with tempfile.TemporaryDirectory() as tmp:
    service = build_service(WorkspacePaths.for_root(Path(tmp)), SignetConfig())
    actor = Actor(changed_by="bench")
    service.memories.remember(RememberRequest(content="warm-up"), actor)
    requests = [RememberRequest(content=t) for t in sentences(count, seed=99)]
    many = getattr(service.memories, "remember_many", None)
    started = time.perf_counter()
    if many is not None:
        outcomes = many(requests, actor)
    else:
        outcomes = [service.memories.remember(r, actor) for r in requests]
    wall = time.perf_counter() - started
    print(json.dumps({"wall": wall, "embedded": sum(o.embedded for o in outcomes),
                      "path": "remember_many" if many else "remember loop"}))
    service.close()
"""


def bulk(build: Build, count: int) -> Sample:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SIGNET_", "VIRTUAL_"))}
    command = [build.python, "-c", BULK_SCRIPT, str(REPO_ROOT / "bench"), str(count)]
    out = subprocess.run(command, cwd=build.root, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    sample = Sample([0.0] * count, float(result["wall"]))
    sample.extra = {"embedded": float(result["embedded"])}
    return sample


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, help="worktree of the build before (own .venv)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--sequential", type=int, default=300)
    parser.add_argument("--concurrent", type=int, default=1600)
    parser.add_argument("--rate", type=float, default=300.0)
    parser.add_argument("--sustain-s", type=float, default=60.0)
    parser.add_argument("--sustain-base", action="store_true", help="also sustain the base")
    parser.add_argument("--bulk", type=int, default=3000)
    parser.add_argument(
        "--backlog-recalls",
        type=int,
        default=100,
        help="recalls timed right after the concurrent burst, while its vectors embed (0: skip)",
    )
    args = parser.parse_args()
    builds = [Build("this build", sys.executable, REPO_ROOT)]
    if args.base:
        builds.insert(0, Build("build before", str(args.base / ".venv/bin/python"), args.base))
    results: dict[tuple[str, str], list[Sample]] = {}
    with tempfile.TemporaryDirectory(prefix="signet-remember-") as tmp:
        root = Path(tmp)
        for number in range(args.rounds):
            for build in builds if number % 2 == 0 else builds[::-1]:
                run_round(build, root / f"{number}-{build.name.replace(' ', '-')}", args, results)
    print_tables(builds, results, args)
    return 0


def run_round(
    build: Build, root: Path, args: argparse.Namespace, results: dict[tuple[str, str], list[Sample]]
) -> None:
    root.mkdir(parents=True)
    seed = len(results) + 1
    daemon = Daemon(build, root / "ws", root)
    try:
        seq = closed_loop(daemon.url, sentences(args.sequential, seed=seed), 1)
        results.setdefault((build.name, "sequential"), []).append(seq)
        conc = closed_loop(daemon.url, sentences(args.concurrent, seed=seed + 100), CLIENTS)
        results.setdefault((build.name, "concurrent"), []).append(conc)
        if args.backlog_recalls:
            queries = [" ".join(t.split()[:4]) for t in sentences(args.backlog_recalls, seed=seed)]
            results.setdefault((build.name, "backlog recall"), []).append(
                recall_during_backlog(daemon, queries)
            )
        if args.sustain_s and (build.root == REPO_ROOT or args.sustain_base):
            texts = sentences(int(args.rate * args.sustain_s), seed=seed + 200)
            results.setdefault((build.name, "sustained"), []).append(
                sustained(daemon, texts, args.rate)
            )
    finally:
        daemon.stop()
    if args.bulk:
        results.setdefault((build.name, "bulk"), []).append(bulk(build, args.bulk))
    print(f"  round done: {build.name} (load {os.getloadavg()[0]:.2f})", file=sys.stderr)


def print_tables(
    builds: list[Build], results: dict[tuple[str, str], list[Sample]], args: argparse.Namespace
) -> None:
    load = os.getloadavg()
    print(f"remember throughput; load average at the end {load[0]:.2f} / {load[1]:.2f}")
    print("\n| build | scenario | run | remembers/s | ack p50 ms | p95 ms |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for scenario in ("sequential", "concurrent", "sustained"):
        for build in builds:
            for number, s in enumerate(results.get((build.name, scenario), []), 1):
                p50, p95 = statistics.median(s.latencies_ms), percentile(s.latencies_ms, 0.95)
                print(
                    f"| {build.name} | {scenario} | {number} | {s.rate:,.0f} "
                    f"| {p50:.1f} | {p95:.1f} |"
                )
    if any(results.get((build.name, "sustained")) for build in builds):
        print_lag_table(builds, results)
    if any(results.get((build.name, "backlog recall")) for build in builds):
        print_backlog_table(builds, results)
    if any(results.get((build.name, "bulk")) for build in builds):
        print_bulk_table(builds, results)


def print_lag_table(builds: list[Build], results: dict[tuple[str, str], list[Sample]]) -> None:
    print("\n| build | run | vector lag p50 ms | p95 | p99 | max | > 2 s | never embedded |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for build in builds:
        for number, s in enumerate(results.get((build.name, "sustained"), []), 1):
            e = s.extra
            print(
                f"| {build.name} | {number} | {e['lag_p50']:.0f} | {e['lag_p95']:.0f} "
                f"| {e['lag_p99']:.0f} | {e['lag_max']:.0f} | {e['over_2s']:.0f} "
                f"| {e['missing']:.0f} |"
            )


def print_backlog_table(builds: list[Build], results: dict[tuple[str, str], list[Sample]]) -> None:
    print("\n| build | run | vectors pending at start / end | recall p50 ms | p95 ms |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for build in builds:
        for number, s in enumerate(results.get((build.name, "backlog recall"), []), 1):
            p50, p95 = statistics.median(s.latencies_ms), percentile(s.latencies_ms, 0.95)
            print(
                f"| {build.name} | {number} | {s.extra['pending']:,.0f} / "
                f"{s.extra['pending_after']:,.0f} | {p50:.1f} | {p95:.1f} |"
            )


def print_bulk_table(builds: list[Build], results: dict[tuple[str, str], list[Sample]]) -> None:
    print("\n| build | run | bulk memories | memories/s | with vectors |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for build in builds:
        for number, s in enumerate(results.get((build.name, "bulk"), []), 1):
            print(
                f"| {build.name} | {number} | {len(s.latencies_ms):,} | {s.rate:,.0f} "
                f"| {s.extra['embedded']:,.0f} |"
            )


if __name__ == "__main__":
    sys.exit(main())
