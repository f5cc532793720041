"""The counts behind /api/status and the memory listing on a large store.

Run: uv run python bench/status_counts.py [--size 100000] [--runs 20]

The store (setup, not timed) is `size` memories written in 5,000-row transactions through
`storage/memories.py: insert_memory`, 1 in 97 pinned, 9 in 10 with a vector in the hash
embedder's generation (canonical + vec0 rows through `VectorIndex.store`), 2 % forgotten.
Timed, each on a warm read connection, the cached coverage cleared before every run:

- `memory_stats`: the listing's `stats` (total, with embeddings, pinned) for one agent;
- `coverage`: the embedding block of /api/status (live memories with a current vector);
- `browse_count`: the Memories pane's row count (the default, unfiltered browse);
- `job counts`: /api/pipeline/status's queue counts (`memory_jobs` per type and state);
- `/api/status`: the whole route through httpx's ASGI transport;
- `/api/memories`: the listing route (first page of 50 and its stats).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from corpus import sentences

from signet_desktop.api.http.app import create_app
from signet_desktop.api.http.settings import HttpSettings
from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.browse import BrowseQuery
from signet_desktop.domain.content import content_hash
from signet_desktop.domain.memory import NewMemory
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.embedding.index import VectorIndex
from signet_desktop.embedding.vectors import VectorWrite
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from signet_desktop.storage import memories as memory_rows
from signet_desktop.storage.database import open_database

BATCH = 5000
DIMENSIONS = 64


def fill(paths: WorkspacePaths, size: int) -> float:
    """The store described above; returns the seconds it took."""
    started = time.perf_counter()
    embedder = HashEmbedder(DIMENSIONS)
    db = open_database(paths.db_path)
    index = VectorIndex(db)
    generation = index.ensure_generation(
        provider=embedder.name, model=embedder.model, dimensions=DIMENSIONS
    )
    texts = sentences(size)
    rng = np.random.default_rng(7)
    for start in range(0, size, BATCH):
        with db.write() as conn:
            writes = []
            for n in range(start, min(size, start + BATCH)):
                memory_id = str(uuid.uuid4())
                new = NewMemory("default", f"{texts[n]} #{n}", pinned=n % 97 == 0)
                memory_rows.insert_memory(conn, memory_id, new, actor="bench", embedding_model=None)
                if n % 10:
                    vector = rng.normal(size=DIMENSIONS).astype(np.float32)
                    vector /= np.linalg.norm(vector)
                    digest = content_hash(new.content)
                    writes.append(VectorWrite("default", memory_id, digest, vector.tobytes()))
            index.store(conn, generation, writes)
    with db.write() as conn:
        forgotten = conn.execute("SELECT id FROM memories ORDER BY seq LIMIT :n", {"n": size // 50})
        for row in forgotten.fetchall():
            memory = memory_rows.get_memory(conn, "default", row[0])
            assert memory is not None
            memory_rows.set_deleted(conn, memory, deleted=True, reason="bench", actor="bench")
    db.close()
    return time.perf_counter() - started


def timed(runs: int, call: Callable[[], object], before: Callable[[], None]) -> list[float]:
    samples = []
    for _ in range(runs):
        before()
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def clear_coverage(service: SignetService) -> Callable[[], None]:
    def clear() -> None:
        tracker = service.embeddings.parts.tracker
        if tracker is not None:
            tracker._coverage = None  # the bench measures the uncached read

    return clear


def route_timings(service: SignetService, runs: int) -> dict[str, list[float]]:
    app = create_app(service, HttpSettings())
    clear = clear_coverage(service)

    async def run() -> dict[str, list[float]]:
        transport = httpx.ASGITransport(app=app)
        out: dict[str, list[float]] = {"/api/status": [], "/api/memories?limit=50": []}
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            for path in out:
                await client.get(path)
                for _ in range(runs):
                    clear()
                    started = time.perf_counter()
                    response = await client.get(path)
                    out[path].append((time.perf_counter() - started) * 1000)
                    assert response.status_code == 200, response.text
        return out

    return asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        paths = WorkspacePaths.for_root(Path(tmp))
        paths.db_path.parent.mkdir(parents=True, exist_ok=True)
        fill_s = fill(paths, args.size)
        options = BuildOptions(embedder=HashEmbedder(DIMENSIONS))
        service = build_service(paths, SignetConfig(), options)
        try:
            clear = clear_coverage(service)
            tracker = service.embeddings.parts.tracker
            assert tracker is not None
            results = {
                "memory_stats (listing stats)": timed(
                    args.runs, lambda: service.memories.list_page("default", 1), clear
                ),
                "coverage (status embedding block)": timed(
                    args.runs, lambda: tracker.coverage(fresh=True), clear
                ),
                "service.status()": timed(args.runs, service.status, clear),
                "browse_count (Memories pane rows)": timed(
                    args.runs,
                    lambda: service.memories.browse_count("default", BrowseQuery()),
                    clear,
                ),
                "pipeline.status() (job counts)": timed(args.runs, service.pipeline.status, clear),
            }
            results.update(route_timings(service, args.runs))
            page = service.memories.list_page("default", 1)
            coverage = tracker.coverage(fresh=True)
        finally:
            service.close()
    print(f"store: {args.size:,} memories, filled in {fill_s:.1f} s (not timed)")
    print(f"stats: {page.stats}; coverage: {coverage.embedded:,}/{coverage.total:,}")
    print()
    print(f"| {'read':<36} | {'p50 ms':>8} | {'p95 ms':>8} | {'max ms':>8} |")
    print(f"| {'-' * 36} | {'-' * 7}: | {'-' * 7}: | {'-' * 7}: |")
    for name, values in results.items():
        ordered = sorted(values)
        p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        p50 = statistics.median(values)
        print(f"| {name:<36} | {p50:>8.1f} | {p95:>8.1f} | {max(values):>8.1f} |")


if __name__ == "__main__":
    main()
