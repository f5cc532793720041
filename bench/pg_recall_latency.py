"""Recall latency through the facade on PostgreSQL beside SQLite, at 10k and 100k memories.

Run: uv run python bench/pg_recall_latency.py [--sizes 10000,100000] [--queries 200]
     [--precision float32|int8]

The same corpus, vectors and queries as bench/recall_latency.py (zipf sentences in sessions of
40 with three `who` values; the first 5,000 embedded with the native all-MiniLM-L6-v2, the rest
blends of those — speed, not relevance), written in bulk (setup, not timed) into each backend:
the workspace's SQLite file, and a database on the embedded PostgreSQL 18 + pgvector the tests
use (tests/support/postgres_server.py: loopback, fsync off; the HNSW index is built once after
the vectors are in, then VACUUM ANALYZE, as autovacuum does to a table after a bulk insert:
without it the measured queries set every row's hint bits as they first read it), with
`shared_buffers` raised from the tests' 32 MB to SHARED_BUFFERS, as docs/TEAM.md asks of a
server: at 32 MB the 100k table (159 MB) and its indexes are read from the OS cache page by
page on every search. Every timing is one
`SignetService.recall.search` call, limit 10, query embedding included (`--precision`:
the graph, float32 unless told; the daemon's default is int8): lexical, vector, fusion only
and hybrid (the default). Issue 31 asks hybrid p95 <= 50 ms at 100k on PostgreSQL.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # see bench/locomo.py

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from corpus import zipf_queries, zipf_sentences
from recall_latency import (
    LIMIT,
    RANKERS,
    corpus_vectors,
    embedded_pool,
    fill,
    fill_database,
    percentile,
    time_recall,
)
from support.postgres_server import RunningPostgres, start_postgres

from signet_desktop.config.models import SignetConfig, StorageConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.recall import RecallQuery
from signet_desktop.embedding.generations import create_vec_table, drop_vec_table
from signet_desktop.embedding.graphs import PRECISIONS
from signet_desktop.embedding.index import VectorIndex
from signet_desktop.embedding.native import NativeMiniLM
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.storage.postgres.connect import connect_postgres
from signet_desktop.storage.store import open_store

BACKENDS = ("sqlite", "postgresql")
SHARED_BUFFERS = "1GB"  # the whole 100k database fits (~600 MB: embeddings + HNSW 415 of it)


def fill_postgres(url: str, texts: list[str], matrix: Any, model: str) -> None:
    """The bulk fill with the generation's HNSW index dropped, built once afterwards."""
    db = open_store(StorageConfig(url=url), Path("unused.db"))
    index = VectorIndex(db)
    generation = index.ensure_generation(provider="native", model=model, dimensions=384)
    with db.write() as conn:
        drop_vec_table(conn, generation)
    fill_database(db, texts, matrix, model)
    with db.write() as conn:
        conn.execute("SET LOCAL maintenance_work_mem = '1GB'")
        create_vec_table(conn, generation)
    db.close()
    conn = connect_postgres(url)
    conn.execute("VACUUM ANALYZE")
    conn.close()


def measure(service: Any, qs: list[str]) -> dict[str, tuple[float, float]]:
    service.recall.search(RecallQuery(query="first query after opening", limit=LIMIT))
    time_recall(service, qs[:20], RANKERS["hybrid"])  # warm caches, model and threads
    out = {}
    for name, ranker in RANKERS.items():
        samples = time_recall(service, qs, ranker)
        out[name] = (statistics.median(samples), percentile(samples, 95))
    return out


def run(
    size: int, query_count: int, embedder: NativeMiniLM, server: RunningPostgres
) -> dict[str, Any]:
    texts = zipf_sentences(size)
    qs = zipf_queries(texts, query_count)
    pool, _ = embedded_pool(embedder, "zipf", texts, 5000)
    matrix = corpus_vectors(pool, size)
    out: dict[str, Any] = {"size": size}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        fill(root, texts, matrix, embedder.model)
        out["sqlite_fill_s"] = time.perf_counter() - started
        service = build_service(
            WorkspacePaths.for_root(root), SignetConfig(), BuildOptions(embedder=embedder)
        )
        out["sqlite"] = measure(service, qs)
        service.close()
    name = f"recall_{size}"
    admin = connect_postgres(server.url())
    admin.execute(f"CREATE DATABASE {name}")
    admin.close()
    url = server.url(name)
    started = time.perf_counter()
    fill_postgres(url, texts, matrix, embedder.model)
    out["postgresql_fill_s"] = time.perf_counter() - started
    config = SignetConfig().model_copy(update={"storage": StorageConfig(url=url)})
    with tempfile.TemporaryDirectory() as tmp:
        service = build_service(
            WorkspacePaths.for_root(Path(tmp)), config, BuildOptions(embedder=embedder)
        )
        out["postgresql"] = measure(service, qs)
        service.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--precision",
        default="float32",
        choices=sorted(PRECISIONS),
        help="the native graph for the corpus and the queries (default float32, as in the "
        "rows before; the daemon's default is int8)",
    )
    args = parser.parse_args()
    embedder = NativeMiniLM(graph=PRECISIONS[args.precision])
    embedder.load()
    server = start_postgres({"shared_buffers": SHARED_BUFFERS})
    try:
        rows = [run(int(s), args.queries, embedder, server) for s in args.sizes.split(",")]
    finally:
        server.stop()
    print(
        f"\nzipf corpus; {args.precision} graph; {args.queries} queries; limit {LIMIT}; ms per call"
    )
    print("\n| memories | backend | lexical p50 | p95 | vector p50 | p95 "
          "| fusion only p50 | p95 | hybrid p50 | p95 | bulk fill s |")  # fmt: skip
    print("| ---: | --- |" + " ---: |" * 9)
    for r in rows:
        for backend in BACKENDS:
            timings = r[backend]
            cells = [c for name in RANKERS for c in timings[name]]
            print(
                f"| {r['size']:,} | {backend} | "
                + " | ".join(f"{c:.1f}" for c in cells)
                + f" | {r[backend + '_fill_s']:.0f} |"
            )
    print(f"\nPostgreSQL shared_buffers {SHARED_BUFFERS}; issue 31: hybrid p95 <= 50 ms at 100k")


if __name__ == "__main__":
    main()
