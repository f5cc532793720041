"""Vectors and recall on a busy machine: two builds side by side under the same CPU load.

Each build (this checkout, and `--base DIR`: the build before, a worktree with its own
`.venv`) runs as a real `signet-desktop --headless` daemon on a fresh workspace with the
native embedder, while `--burners` processes (`while 1: pass`, nice 0) keep both cores busy
for the whole run (load average printed per phase). Per build:

1. ingest: every LoCoMo dev turn (2,760, one agent per conversation, "<speaker>: <text>")
   and filler sentences up to `--turns`, over HTTP from 8 clients; ack p50 / p95;
2. lag: right after the last acknowledgement, the LoCoMo questions (categories 1-4 with
   evidence, `--questions` of them spread over the conversations) are asked one after another
   while vectors are still missing (stopping when none is), each with its
   `vectorCompleteness`; then the bench waits (at most `--wait-s`) until every memory has a
   vector: the lag of the last vector behind the last acknowledgement (daemon timestamps);
3. after: the same questions again. recall@10 during vs after, on the same questions.

    uv run python bench/busy_vectors.py --base /tmp/busy-base [--burners 4] [--rounds 1]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import httpx
import sqlean

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "bench"))
from corpus import sentences  # noqa: E402
from remember import Build, Daemon, percentile  # noqa: E402

DATA = REPO_ROOT.parent / "shared" / "data" / "locomo-dev.json"
CLIENTS = 8
TIMEOUT_S = 120.0
MISSING = """
SELECT COUNT(*) FROM memories m WHERE m.is_deleted = 0 AND NOT EXISTS (
    SELECT 1 FROM embeddings e WHERE e.source_type = 'memory' AND e.source_id = m.id
      AND e.content_hash = m.content_hash)
"""
LAST_VECTOR = "SELECT MAX(created_at) FROM embeddings WHERE source_type = 'memory'"


@dataclass(frozen=True)
class Turn:
    agent: str
    dia_id: str
    content: str
    who: str


@dataclass(frozen=True)
class Question:
    agent: str
    text: str
    evidence: frozenset[str]


@dataclass
class Run:
    build: str
    acks_ms: list[float] = field(default_factory=list)
    ingest_s: float = 0.0
    lag_s: float | None = None  # last vector behind the last ack; None: not within the wait
    missing_at_ack: int = 0
    missing_at_end: int = 0
    asked_during: int = 0
    recall_during: list[float] = field(default_factory=list)
    recall_after: list[float] = field(default_factory=list)
    latency_during_ms: list[float] = field(default_factory=list)
    latency_after_ms: list[float] = field(default_factory=list)
    states: Counter[str] = field(default_factory=Counter)
    stages_ms: dict[str, list[float]] = field(default_factory=dict)  # during the lag
    load: list[float] = field(default_factory=list)


def load_locomo(limit_turns: int, questions: int) -> tuple[list[Turn], list[Question]]:
    """Every turn (plus filler to `limit_turns`) and `questions` spread over conversations."""
    turns: list[Turn] = []
    asked: list[list[Question]] = []
    for sample in json.loads(DATA.read_text(encoding="utf-8")):
        agent = str(sample["sample_id"]).replace("_", "-")
        conv = sample["conversation"]
        sessions = sorted(
            (k for k in conv if k.startswith("session_") and isinstance(conv[k], list)),
            key=lambda k: int(k.split("_")[1]),
        )
        for key in sessions:
            for turn in conv[key]:
                text = f"{turn['speaker']}: {turn['text']}"
                turns.append(Turn(agent, str(turn["dia_id"]), text, str(turn["speaker"])))
        asked.append(
            [
                Question(agent, str(q["question"]), frozenset(map(str, q["evidence"])))
                for q in sample["qa"]
                if q.get("category") in (1, 2, 3, 4) and q.get("evidence")
            ]
        )
    filler = max(0, limit_turns - len(turns))
    turns += [Turn("default", f"filler-{i}", t, "") for i, t in enumerate(sentences(filler, 7))]
    chosen: list[Question] = []
    for index in range(max(len(a) for a in asked)):  # round-robin over conversations
        chosen += [a[index] for a in asked if index < len(a)]
    return turns, chosen[:questions]


def loadavg() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def start_burners(count: int) -> list[subprocess.Popen[bytes]]:
    code = "while 1: pass"
    return [subprocess.Popen([sys.executable, "-c", code]) for _ in range(count)]


def missing(db_path: Path) -> int:
    conn = sqlean.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        return int(conn.execute(MISSING).fetchone()[0])
    finally:
        conn.close()


def last_vector_at(db_path: Path) -> float:
    conn = sqlean.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        value = conn.execute(LAST_VECTOR).fetchone()[0]
    finally:
        conn.close()
    return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()


def ingest(url: str, turns: list[Turn], run: Run) -> dict[str, str]:
    """8 clients, each its share in order; memory id -> dia_id."""
    ids: dict[str, str] = {}
    lock = threading.Lock()

    def post(share: list[Turn], out: list[float]) -> None:
        with httpx.Client(base_url=url, timeout=TIMEOUT_S) as client:
            for turn in share:
                body = {"content": turn.content, "agentId": turn.agent}
                if turn.who:
                    body["who"] = turn.who
                sent = time.perf_counter()
                reply = client.post("/api/memory/remember", json=body)
                out.append((time.perf_counter() - sent) * 1000)
                reply.raise_for_status()
                with lock:
                    ids[reply.json()["id"]] = turn.dia_id

    shares = [turns[i::CLIENTS] for i in range(CLIENTS)]
    outs: list[list[float]] = [[] for _ in shares]
    threads = [threading.Thread(target=post, args=a) for a in zip(shares, outs, strict=True)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    run.ingest_s = time.perf_counter() - started
    run.acks_ms = [v for out in outs for v in out]
    return ids


def ask(
    client: httpx.Client, question: Question, ids: dict[str, str], run: Run | None = None
) -> tuple[float, float, str]:
    """recall@10 of the question's evidence turns, the latency (ms), vectorCompleteness;
    with `run`, the embedding stages' timings are kept."""
    sent = time.perf_counter()
    reply = client.post(
        "/api/memory/recall",
        json={"query": question.text, "limit": 10, "agentId": question.agent},
    )
    latency = (time.perf_counter() - sent) * 1000
    reply.raise_for_status()
    answer = reply.json()
    if run is not None:
        for stage in answer["meta"]["timings"]["stages"]:
            if stage["name"] in ("embed_query", "embed_candidates"):
                run.stages_ms.setdefault(stage["name"], []).append(stage["durationMs"])
    found = {ids.get(str(hit.get("id"))) for hit in answer["results"]}
    recall = len(question.evidence & found) / len(question.evidence)
    return recall, latency, str(answer.get("vectorCompleteness"))


def one_build(build: Build, turns: list[Turn], questions: list[Question], wait_s: float) -> Run:
    run = Run(build.name)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        daemon = Daemon(build, root / "ws", root / "home")
        try:
            run.load.append(loadavg())
            ids = ingest(daemon.url, turns, run)
            acked_at = time.time()
            run.load.append(loadavg())
            run.missing_at_ack = missing(daemon.db_path)
            asked: list[Question] = []
            with httpx.Client(base_url=daemon.url, timeout=TIMEOUT_S) as client:
                for index, question in enumerate(questions):
                    if index % 10 == 0 and not missing(daemon.db_path):
                        break
                    recall, latency, state = ask(client, question, ids, run)
                    asked.append(question)
                    run.recall_during.append(recall)
                    run.latency_during_ms.append(latency)
                    run.states[state] += 1
                run.asked_during = len(asked)
                deadline = time.monotonic() + wait_s
                while missing(daemon.db_path) and time.monotonic() < deadline:
                    time.sleep(0.5)
                run.missing_at_end = missing(daemon.db_path)
                if not run.missing_at_end:
                    run.lag_s = last_vector_at(daemon.db_path) - acked_at
                run.load.append(loadavg())
                for question in asked:
                    recall, latency, _ = ask(client, question, ids)
                    run.recall_after.append(recall)
                    run.latency_after_ms.append(latency)
        finally:
            daemon.stop()
    return run


def mean(values: list[float]) -> str:
    return f"{statistics.fmean(values):.3f}" if values else "-"


def _stage(run: Run, name: str) -> str:
    values = run.stages_ms.get(name)
    if not values:
        return "-"
    return f"{percentile(values, 0.5):.0f} / {percentile(values, 0.95):.0f} ({len(values)})"


def report(runs: list[Run], burners: int, turns: int) -> None:
    print(
        f"\n{turns} turns ingested by {CLIENTS} clients; {burners} burners at nice 0 on "
        f"{os.cpu_count()} cores (load average per phase: start, last ack, vectors done)"
    )
    rows = [
        ("load average", lambda r: " / ".join(f"{v:.1f}" for v in r.load)),
        ("ingest s · acks/s", lambda r: f"{r.ingest_s:.1f} · {len(r.acks_ms) / r.ingest_s:.0f}"),
        (
            "ack p50 / p95 ms",
            lambda r: f"{percentile(r.acks_ms, 0.5):.1f} / {percentile(r.acks_ms, 0.95):.1f}",
        ),
        ("without a vector at the last ack", lambda r: str(r.missing_at_ack)),
        (
            "last vector after the last ack s",
            lambda r: (
                f"{r.lag_s:.1f}"
                if r.lag_s is not None
                else f"> wait ({r.missing_at_end} still missing)"
            ),
        ),
        ("questions asked during the lag", lambda r: str(r.asked_during)),
        ("recall@10 during the lag", lambda r: mean(r.recall_during)),
        ("recall@10 after (same questions)", lambda r: mean(r.recall_after)),
        (
            "difference",
            lambda r: (
                f"{statistics.fmean(r.recall_after) - statistics.fmean(r.recall_during):+.3f}"
                if r.recall_during
                else "-"
            ),
        ),
        (
            "recall p50 / p95 ms during",
            lambda r: (
                f"{percentile(r.latency_during_ms, 0.5):.0f} / "
                f"{percentile(r.latency_during_ms, 0.95):.0f}"
            ),
        ),
        (
            "recall p50 / p95 ms after",
            lambda r: (
                f"{percentile(r.latency_after_ms, 0.5):.0f} / "
                f"{percentile(r.latency_after_ms, 0.95):.0f}"
            ),
        ),
        ("embed_query p50 / p95 ms during", lambda r: _stage(r, "embed_query")),
        ("embed_candidates p50 / p95 ms (recalls)", lambda r: _stage(r, "embed_candidates")),
        ("vectorCompleteness during", lambda r: ", ".join(f"{k} {v}" for k, v in r.states.items())),
    ]
    names = [r.build for r in runs]
    width = max(len(name) for name, _ in rows)
    print(f"| {'':<{width}} | " + " | ".join(names) + " |")
    print(f"| {'-' * width} | " + " | ".join("-" * len(n) for n in names) + " |")
    for name, cell in rows:
        print(f"| {name:<{width}} | " + " | ".join(cell(r) for r in runs) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", type=Path, help="a worktree of the build before, with .venv")
    parser.add_argument("--burners", type=int, default=4)
    parser.add_argument("--turns", type=int, default=3000)
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument("--wait-s", type=float, default=300.0)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    builds = [Build("this build", sys.executable, REPO_ROOT)]
    if args.base is not None:
        base = args.base.resolve()
        builds.insert(0, Build("build before", str(base / ".venv" / "bin" / "python"), base))
    turns, questions = load_locomo(args.turns, args.questions)
    burners = start_burners(args.burners)
    runs: list[Run] = []
    try:
        time.sleep(5.0)  # let the load average climb
        for round_ in range(args.rounds):
            order = builds if round_ % 2 == 0 else builds[::-1]
            for build in order:
                print(f"round {round_ + 1}: {build.name} ...", flush=True)
                runs.append(one_build(build, turns, questions, args.wait_s))
    finally:
        for proc in burners:
            proc.kill()
            proc.wait()
    report(runs, args.burners, len(turns))


if __name__ == "__main__":
    main()
