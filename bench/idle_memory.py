"""Resident memory of an idle `signet-desktop --headless` on an empty workspace.

The daemon is started, its warm-up (the embedding model) awaited through `/api/status`, one
memory remembered and recalled (so the embedder, the vector batcher and recall have all run),
then after a short settle its RSS is read from /proc. Target: <= 250 MB.

    uv run python bench/idle_memory.py [--runs 3] [--baseline-dir /tmp/prev]

`--baseline-dir` points at another checkout with its own `.venv` (e.g. a `git worktree` of
the previous build after `uv sync`); it is measured in the same run, side by side.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import httpx

REPO_ROOT = Path(__file__).resolve().parents[1]
PREFIX = "Signet Desktop listening on "
SETTLE_S = 2.0
TIMEOUT_S = 60.0


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def _url(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if PREFIX in line:
            return line.split(PREFIX, 1)[1].split()[0].rstrip("/")
    raise RuntimeError("the daemon never said where it listens")


def _await_warm(client: httpx.Client, url: str) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        startup = client.get(f"{url}/api/status").json().get("startup", {})
        states = [t.get("state") for t in startup.values() if isinstance(t, dict)]
        if states and all(s not in ("pending", "running") for s in states):
            return
        time.sleep(0.2)
    raise RuntimeError("warm-up did not finish")


def one_run(checkout: Path) -> float:
    """RSS in MB of an idle daemon run from `checkout` (its own .venv)."""
    python = checkout / ".venv" / "bin" / "python"
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNET_")}
        env.update(HOME=tmp, PYTHONUNBUFFERED="1")
        command = [str(python), "-m", "signet_desktop.main", "--headless"]
        command += ["--workspace", f"{tmp}/ws", "--port", "0", "--log-level", "warning"]
        proc = subprocess.Popen(command, cwd=checkout, env=env, stdout=subprocess.PIPE, text=True)
        try:
            url = _url(proc)
            with httpx.Client(timeout=30) as client:
                _await_warm(client, url)
                remember = {"content": "billing runs on Postgres 16"}
                client.post(f"{url}/api/memory/remember", json=remember).raise_for_status()
                time.sleep(0.5)  # the vector follows in a micro-batch
                client.get(f"{url}/api/memory/search", params={"q": "billing"}).raise_for_status()
            time.sleep(SETTLE_S)
            return _rss_mb(proc.pid)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline-dir", type=Path, default=None)
    args = parser.parse_args()
    builds = [("this build", REPO_ROOT)]
    if args.baseline_dir is not None:
        builds.insert(0, ("previous build", args.baseline_dir.resolve()))
    print(f"idle headless daemon, empty workspace, RSS after warm-up + 1 remember + 1 recall "
          f"({args.runs} runs)\n")  # fmt: skip
    print("| build | median MB | max MB |")
    print("| --- | ---: | ---: |")
    for name, checkout in builds:
        samples = [one_run(checkout) for _ in range(args.runs)]
        print(f"| {name} | {statistics.median(samples):.0f} | {max(samples):.0f} |")
    print("\ntarget: <= 250 MB")


if __name__ == "__main__":
    main()
