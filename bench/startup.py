"""Start-up latency of `signet-desktop --headless`: process spawn to `/health` answering 200.

Two cases, N runs each: a *first run* (empty workspace: directories, migrations) and a
*restart* (existing workspace and database). Prints p50/p95/max in ms for the listening line
and for the first healthy `/health`. The target on a 2-core machine is /health within 2 s.

    uv run python bench/startup.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO_ROOT = Path(__file__).resolve().parents[1]
PREFIX = "Signet Desktop listening on "
TIMEOUT_S = 30.0


def one_start(workspace: Path, home: Path) -> tuple[float, float]:
    """(ms to the listening line, ms to the first 200 from /health) for one process."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNET_")}
    env.update(HOME=str(home), PYTHONUNBUFFERED="1")
    command = [sys.executable, "-m", "signet_desktop.main", "--headless"]
    command += ["--workspace", str(workspace), "--port", "0", "--log-level", "warning"]
    started = time.perf_counter()
    proc = subprocess.Popen(
        command,
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        listening = (time.perf_counter() - started) * 1000
        if not line.startswith(PREFIX):
            raise RuntimeError(f"daemon did not start (exit {proc.wait(TIMEOUT_S)})")
        url = line.removeprefix(PREFIX).split(" ")[0]
        healthy = _first_health(url, started)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(TIMEOUT_S)
        if proc.stdout is not None:
            proc.stdout.close()
    return listening, healthy


def _first_health(url: str, started: float) -> float:
    deadline = started + TIMEOUT_S
    with httpx.Client(timeout=5) as client:
        while time.perf_counter() < deadline:
            try:
                if client.get(f"{url}/health").status_code == 200:
                    return (time.perf_counter() - started) * 1000
            except httpx.TransportError:
                pass
            time.sleep(0.005)
    raise RuntimeError("/health never answered 200")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def row(name: str, values: list[float]) -> str:
    p50, p95 = statistics.median(values), percentile(values, 0.95)
    return f"| {name:<28} | {p50:>8.0f} | {p95:>8.0f} | {max(values):>8.0f} |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    results: dict[str, tuple[list[float], list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="signet-bench-") as tmp:
        root = Path(tmp)
        first: tuple[list[float], list[float]] = ([], [])
        again: tuple[list[float], list[float]] = ([], [])
        for number in range(runs):
            workspace = root / f"ws{number}"
            for bucket in (first, again):  # a first run, then a restart of the same workspace
                listening, healthy = one_start(workspace, root)
                bucket[0].append(listening)
                bucket[1].append(healthy)
        results = {"first run": first, "restart": again}
    print(f"signet-desktop --headless start-up, {runs} runs each (ms from spawn)")
    print("| measure                      |      p50 |      p95 |      max |")
    print("|------------------------------|----------|----------|----------|")
    for case, (listening, healthy) in results.items():
        print(row(f"{case}: listening line", listening))
        print(row(f"{case}: /health 200", healthy))
    return 0


if __name__ == "__main__":
    sys.exit(main())
