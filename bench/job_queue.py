"""Queue throughput: lease + complete with concurrent workers on a 10k-job queue (prints a table).

    uv run python bench/job_queue.py [--jobs 10000] [--workers 2]

Two rows on a fresh database each: `jobs.lease` + `jobs.complete`, each in its own write
transaction (p50/p95 per operation), and the generic `QueueWorker.run_once()` with a no-op
handler (the whole step: lease, JobLeased event, handler, complete, JobCompleted event).
Throughput is jobs finished per second of wall time across all workers; target >= 1,000/s.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from signet_desktop.queue import jobs  # noqa: E402
from signet_desktop.queue.worker import QueueWorker, WorkerSettings  # noqa: E402
from signet_desktop.service.events import EventBus  # noqa: E402
from signet_desktop.storage.database import Database, open_database  # noqa: E402

JOB = "bench_job"


def fill(db: Database, count: int) -> None:
    with db.write() as conn:
        for index in range(count):
            jobs.enqueue(conn, JOB, agent_id="default", payload={"n": index})


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else 0.0


def raw_worker(db: Database, lease_ms: list[float], complete_ms: list[float]) -> None:
    while True:
        t0 = time.perf_counter()
        with db.write() as conn:
            leased = jobs.lease(conn, JOB)
        t1 = time.perf_counter()
        if not leased:
            return
        with db.write() as conn:
            assert jobs.complete(conn, leased[0], {"ok": True})
        t2 = time.perf_counter()
        lease_ms.append((t1 - t0) * 1000)
        complete_ms.append((t2 - t1) * 1000)


def queue_worker(db: Database, bus: EventBus, step_ms: list[float]) -> None:
    worker = QueueWorker(
        db,
        name="bench",
        job_types=(JOB,),
        handler=lambda job: None,
        events=bus,
        settings=WorkerSettings(stale_check_s=3600),
    )
    while True:
        t0 = time.perf_counter()
        if not worker.run_once():
            return
        step_ms.append((time.perf_counter() - t0) * 1000)


def run(kind: str, count: int, workers: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        db = open_database(Path(tmp) / "queue.db", with_vec=False)
        try:
            fill(db, count)
            first: list[float] = []
            second: list[float] = []
            bus = EventBus()
            targets = {
                "raw": lambda: raw_worker(db, first, second),
                "worker": lambda: queue_worker(db, bus, first),
            }
            threads = [threading.Thread(target=targets[kind]) for _ in range(workers)]
            started = time.perf_counter()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            elapsed = time.perf_counter() - started
            done = jobs.counts(db.reader(), JOB)["completed"]
            assert done == count, f"{done} of {count} completed"
        finally:
            db.close()
    return {
        "rate": count / elapsed,
        "p50_a": percentile(first, 0.5),
        "p95_a": percentile(first, 0.95),
        "p50_b": percentile(second, 0.5),
        "p95_b": percentile(second, 0.95),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    print(f"queue benchmark: {args.jobs} jobs, {args.workers} concurrent workers,")
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start\n")
    header = (
        f"{'variant':<34} {'jobs/s':>8} {'lease p50':>9} {'p95 ms':>7} "
        f"{'complete p50':>12} {'p95 ms':>7}"
    )
    print(header)
    print("-" * len(header))
    raw = run("raw", args.jobs, args.workers)
    print(
        f"{'lease + complete (two tx each)':<34} {raw['rate']:>8.0f} {raw['p50_a']:>9.3f} "
        f"{raw['p95_a']:>7.3f} {raw['p50_b']:>12.3f} {raw['p95_b']:>7.3f}"
    )
    step = run("worker", args.jobs, args.workers)
    print(
        f"{'QueueWorker.run_once (whole step)':<34} {step['rate']:>8.0f} "
        f"{step['p50_a']:>9.3f} {step['p95_a']:>7.3f} {'-':>12} {'-':>7}"
    )
    print("\n(the worker row's p50/p95 is the whole step: lease, events, handler, complete)")
    print(f"load average {os.getloadavg()[0]:.2f} at end (other work on the machine skews rows)")


if __name__ == "__main__":
    main()
