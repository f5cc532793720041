"""Quit latency of `signet-desktop --headless` while it works: SIGTERM to process exit.

Each run starts the daemon on a fresh workspace with the default (native) embedder, submits
one large text document and, once the document is `embedding`, a burst of remembers from a
few threads; then it sends SIGTERM and times the exit. Afterwards it counts tracebacks and
"database is closed" lines in the daemon's stderr, reads the document's state left in the
database, and restarts the daemon to check that the document resumes and ends `done` with
one memory per chunk. Target: exit <= 2 s, no traceback.

    uv run python bench/quit_latency.py [--runs 3] [--baseline-dir /tmp/prev] [--desktop]

`--desktop` runs the Qt app (offscreen platform; workers in QThreads) instead of --headless.

`--baseline-dir` points at another checkout with its own `.venv` (a `git worktree` or a
`git archive` of the previous build after `uv sync`); it is measured in the same run, side
by side.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import sqlean

REPO_ROOT = Path(__file__).resolve().parents[1]
PREFIX = "Signet Desktop listening on "
TIMEOUT_S = 120.0
PARAGRAPHS = 1500  # ~200 characters each: ~150 chunks of the default 2,000 characters
RESUME_TIMEOUT_S = 600.0  # the restarted daemon finishes the document (slow under load)
REMEMBERS = 60
REMEMBER_THREADS = 4


@dataclass(frozen=True, slots=True)
class Run:
    """One quit: seconds to exit, the exit code, stderr findings, the document's fate."""

    quit_s: float
    exit_code: int
    tracebacks: int
    closed_errors: int
    left_as: str
    resumed_as: str


def document_text() -> str:
    return "\n\n".join(
        f"Section {p}. The deploy runbook for service {p % 37} says to drain traffic, snapshot "
        f"the database, roll the canary and watch error rates for {p % 11 + 5} minutes."
        for p in range(PARAGRAPHS)
    )


DESKTOP = False  # --desktop: the Qt app, offscreen


def _start(checkout: Path, workspace: Path, home: Path, stderr: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNET_")}
    env.update(HOME=str(home), PYTHONUNBUFFERED="1")
    env.update(QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(home / ".config"))
    command = [str(checkout / ".venv" / "bin" / "python"), "-m", "signet_desktop.main"]
    command += [] if DESKTOP else ["--headless"]
    command += ["--workspace", str(workspace), "--port", "0"]
    with stderr.open("a") as err:
        return subprocess.Popen(
            command, cwd=checkout, env=env, stdout=subprocess.PIPE, stderr=err, text=True
        )


def _url(proc: subprocess.Popen[str], stderr: Path) -> str:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if PREFIX not in line:
        code = proc.wait(TIMEOUT_S)
        tail = stderr.read_text(errors="replace")[-2000:]
        raise RuntimeError(f"the daemon did not start (exit {code}):\n{tail}")
    return line.split(PREFIX, 1)[1].split()[0].rstrip("/")


def _wait_status(
    client: httpx.Client, doc_id: str, wanted: set[str], timeout: float = TIMEOUT_S
) -> dict[str, object]:
    """The document once its status is one of `wanted`, or as it stands at the timeout."""
    deadline = time.monotonic() + timeout
    while True:
        doc: dict[str, object] = client.get(f"/api/documents/{doc_id}").json()
        if doc["status"] in wanted or time.monotonic() > deadline:
            return doc
        time.sleep(0.2)


def _burst(url: str, started: threading.Event) -> None:
    with httpx.Client(base_url=url, timeout=30) as client:
        started.set()
        for n in range(REMEMBERS // REMEMBER_THREADS):
            try:
                client.post(
                    "/api/memory/remember", json={"content": f"burst fact {n} {id(client)}"}
                )
            except httpx.HTTPError:
                return  # the daemon is stopping: the burst ends with it


def _stored_status(db_path: Path, doc_id: str) -> str:
    conn = sqlean.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT status FROM documents WHERE id = ?", (doc_id,)).fetchone()
        return "missing" if row is None else str(row[0])
    finally:
        conn.close()


def _resumed(checkout: Path, workspace: Path, home: Path, stderr: Path, doc_id: str) -> str:
    proc = _start(checkout, workspace, home, stderr)
    try:
        with httpx.Client(base_url=_url(proc, stderr), timeout=30) as client:
            doc = _wait_status(client, doc_id, {"done", "failed"}, RESUME_TIMEOUT_S)
        ok = doc["status"] == "done" and doc["memory_count"] == doc["chunk_count"]
        return "done" if ok else f"{doc['status']} ({doc['memory_count']}/{doc['chunk_count']})"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(TIMEOUT_S)


def one_run(checkout: Path) -> Run:
    """Quit one daemon of `checkout` mid-ingest and mid-burst; then restart it once."""
    with tempfile.TemporaryDirectory() as tmp:
        workspace, home, stderr = Path(tmp, "ws"), Path(tmp, "home"), Path(tmp, "stderr.txt")
        home.mkdir()
        proc = _start(checkout, workspace, home, stderr)
        url = _url(proc, stderr)
        with httpx.Client(base_url=url, timeout=30) as client:
            body = {"source_type": "text", "content": document_text()}
            doc_id = str(client.post("/api/documents", json=body).json()["id"])
            if _wait_status(client, doc_id, {"embedding"})["status"] != "embedding":
                raise RuntimeError("the document never started embedding")
        time.sleep(1.0)  # into its first batches
        started = [threading.Event() for _ in range(REMEMBER_THREADS)]
        for event in started:
            threading.Thread(target=_burst, args=(url, event), daemon=True).start()
        for event in started:
            event.wait(TIMEOUT_S)
        time.sleep(0.3)  # the burst is in flight
        sent = time.perf_counter()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(TIMEOUT_S)
        quit_s = time.perf_counter() - sent
        if proc.stdout is not None:
            proc.stdout.close()
        text = stderr.read_text(errors="replace")
        left = _stored_status(workspace / "memory" / "memories.db", doc_id)
        resumed = _resumed(checkout, workspace, home, stderr, doc_id)
        return Run(
            quit_s,
            code,
            text.count("Traceback"),
            text.count("database is closed"),
            left,
            resumed,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline-dir", type=Path, default=None)
    parser.add_argument("--desktop", action="store_true", help="the Qt app, offscreen")
    args = parser.parse_args()
    global DESKTOP
    DESKTOP = args.desktop
    builds = [("this build", REPO_ROOT)]
    if args.baseline_dir is not None:
        builds.insert(0, ("previous build", args.baseline_dir.resolve()))
    load = os.getloadavg()[0]
    print(f"SIGTERM during a {PARAGRAPHS}-paragraph document ingest and a {REMEMBERS}-remember "
          f"burst, native embedder, {'Qt app' if DESKTOP else 'headless'} "
          f"({args.runs} runs, load {load:.1f})\n")  # fmt: skip
    print("| build | quit p50 s | quit max s | exit codes | tracebacks "
          "| 'database is closed' lines | left as | after restart |")  # fmt: skip
    print("| --- | ---: | ---: | --- | ---: | ---: | --- | --- |")
    for name, checkout in builds:
        runs = [one_run(checkout) for _ in range(args.runs)]
        quits = [r.quit_s for r in runs]
        print(
            f"| {name} | {statistics.median(quits):.2f} | {max(quits):.2f} "
            f"| {','.join(str(r.exit_code) for r in runs)} "
            f"| {sum(r.tracebacks for r in runs)} | {sum(r.closed_errors for r in runs)} "
            f"| {','.join(sorted({r.left_as for r in runs}))} "
            f"| {','.join(sorted({r.resumed_as for r in runs}))} |",
            flush=True,
        )
    print("\ntarget: quit <= 2 s, 0 tracebacks, the document resumes and ends done")


if __name__ == "__main__":
    main()
