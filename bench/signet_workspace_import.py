"""Signet-workspace import: a synthetic Signet `memories.db` (10k memories with history, some
deleted, 100 transcripts) brought into a fresh workspace through ImportService.

Rows timed: the first import (the whole run: memories with their history, then the
transcripts; memories/s = memories / run seconds), a rerun over the same source (every record
skipped), and a run resumed after a kill -9 halfway (the child is SIGKILLed after the middle
memory batch's commit; the resumed run's time and how many records it still imported).
Vectors are not made during the import (the embedding tracker's scan does that afterwards),
so no embedder is loaded here. Each run is a child process on one 2-core machine.

    uv run python bench/signet_workspace_import.py [--memories 10000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "bench"))
sys.path.insert(0, str(REPO_ROOT))
from corpus import sentences  # noqa: E402

from signet_desktop.service.imports.faults import ENV  # noqa: E402
from signet_desktop.service.imports.workspace import MEMORY_BATCH  # noqa: E402
from tests.support.signet_workspace import event, make_signet_db, memory, transcript  # noqa: E402

EVENTS = ("created", "modified", "modified")
RUN_SCRIPT = """
import json, sys, time
from pathlib import Path
from signet_desktop.service.imports.service import ImportService
from signet_desktop.service.transcripts.service import TranscriptService
from signet_desktop.service.imports.workspace import KIND, SignetWorkspaceImporter
from signet_desktop.storage.database import open_database

workspace, signet = Path(sys.argv[1]), sys.argv[2]
db = open_database(workspace / "memory" / "memories.db")
service = ImportService(db, workspace, TranscriptService(db, workspace),
    importers=[SignetWorkspaceImporter()], allowed_roots=[Path(signet).parent])
started = time.perf_counter()
ticket = service.start("default", KIND, signet, wait=True)
elapsed = time.perf_counter() - started
run = service.run("default", ticket.run_id)
print(json.dumps({"s": elapsed, "status": run.status, "imported": run.counts.records_imported,
                  "skipped": run.counts.records_skipped}))
db.close()
"""


def build_signet(root: Path, count: int) -> tuple[Path, int]:
    """The Signet workspace: `count` memories (1 in 20 deleted, 1-3 history events each)."""
    texts = sentences(count, seed=41)
    rows, trail = [], []
    for n, text in enumerate(texts):
        row = memory(n, content=text, tags=f"t{n % 13},bench", importance=(n % 10) / 10)
        if n % 20 == 0:
            row.update(is_deleted=1, deleted_at="2025-04-01T00:00:00.000Z")
        rows.append(row)
        trail += [event(row["id"], k, EVENTS[k]) for k in range(1 + n % 3)]
    sessions = [transcript(f"bench-session-{i}", turns=20) for i in range(100)]
    make_signet_db(root / "memory" / "memories.db", memories=rows, history=trail,
                   transcripts=sessions)  # fmt: skip
    return root, len(trail)


def run_import(workspace: Path, signet: Path, fault: str | None = None) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k != ENV}
    if fault:
        env[ENV] = fault
    done = subprocess.run(
        [sys.executable, "-c", RUN_SCRIPT, str(workspace), str(signet)],
        capture_output=True, text=True, env=env, cwd=REPO_ROOT, timeout=1800,
    )  # fmt: skip
    if fault:
        assert done.returncode == -9, done.stderr
        return {}
    assert done.returncode == 0, done.stderr
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    results: dict[str, list[float]] = {"first": [], "rerun": [], "resumed": []}
    resumed_imported: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        signet, events = build_signet(Path(tmp) / "signet", args.memories)
        print(f"Signet db: {args.memories} memories, {events} history events, 100 transcripts "
              f"(built in {time.perf_counter() - started:.1f} s)")  # fmt: skip
        middle = max(1, (args.memories // MEMORY_BATCH) // 2)
        for number in range(args.rounds):
            workspace = Path(tmp) / f"ws{number}"
            results["first"].append(run_import(workspace, signet)["s"])
            results["rerun"].append(run_import(workspace, signet)["s"])
            crashed = Path(tmp) / f"crash{number}"
            run_import(crashed, signet, fault=f"memories.batch_committed:{middle}")
            again = run_import(crashed, signet)
            results["resumed"].append(again["s"])
            resumed_imported.append(again["imported"])
    print()
    first, rerun, resumed = (statistics.median(results[k]) for k in ("first", "rerun", "resumed"))
    print(f"| run ({args.memories} memories, median of {args.rounds}) | s | rate |")
    print("| --- | ---: | ---: |")
    print(f"| first import (memories + history + transcripts) | {first:.2f} | "
          f"{args.memories / first:,.0f} memories/s |")  # fmt: skip
    print(f"| rerun, every record already done | {rerun:.2f} | "
          f"{(args.memories + 100) / rerun:,.0f} records skipped/s |")  # fmt: skip
    print(f"| resumed after kill -9 at batch {middle}'s commit | {resumed:.2f} | "
          f"{statistics.median(resumed_imported):,.0f} records still to import |")  # fmt: skip


if __name__ == "__main__":
    main()
