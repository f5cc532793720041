"""The HNSW index (recall/ann.py) side by side with exact search and the binary prefilter.

    nice -n 5 uv run python bench/ann_index.py --corpus /tmp/ann-corpus --sizes 10000,all
        [--candidates 50,100,200] [--synthetic-to 0] [--build-threads 2]

Vectors: real all-MiniLM-L6-v2 vectors (the project's own embedder, the graph named in
`<corpus>/model.txt`) of real text, made by `bench/ann_corpus.py` (LoCoMo dev turns,
LongMemEval-S sentence windows and turns); queries: the LoCoMo dev and LongMemEval-S questions
embedded with the same model. Each memory's content is its real text. `--synthetic-to N`
extends the corpus to N rows with blends of two real vectors plus noise (labelled SYNTHETIC in
the table: speed and memory only, never agreement evidence).

Per size, on one database filled in bulk (setup, not timed), the semantic channel's own
`search` (candidates joined to live memories, exact float32 rescoring) runs every query with:
exact in memory (the path up to 200k), the binary prefilter (2,000 candidates, the previous
build's path above 200k) and the HNSW index at each `--candidates`. Agreement = mean share
of exact search's top-10 memory ids found in the strategy's top 10. Build = first search to
index on disk. Then a fresh process opens the workspace cold: time to the first answer (stamp
and CRC check, memory map, first search) and the RSS that index adds (file-backed vs
anonymous, /proc/self/status).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import ann_corpus  # noqa: E402

from signet_desktop.domain.memory import NewMemory  # noqa: E402
from signet_desktop.domain.recall import RecallFilters  # noqa: E402
from signet_desktop.embedding.generations import Generation  # noqa: E402
from signet_desktop.embedding.index import VectorIndex  # noqa: E402
from signet_desktop.embedding.vectors import VectorWrite  # noqa: E402
from signet_desktop.recall.ann import AnnIndexes  # noqa: E402
from signet_desktop.recall.ann_file import (  # noqa: E402
    index_directory,
    partition_paths,
    usearch_index,
)
from signet_desktop.recall.vector import SemanticChannel  # noqa: E402
from signet_desktop.storage.database import Database, open_database  # noqa: E402
from signet_desktop.storage.memories import insert_memory  # noqa: E402

BATCH = 2000
K = 10


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def synthetic(pool: npt.NDArray[np.float32], extra: int, seed: int = 1) -> npt.NDArray[np.float32]:
    """SYNTHETIC rows: blends of two real vectors (weights 0.5-0.8) plus N(0, 0.01) noise."""
    rng = np.random.default_rng(seed)
    i, j = rng.integers(0, len(pool), extra), rng.integers(0, len(pool), extra)
    w = rng.uniform(0.5, 0.8, extra)[:, None].astype(np.float32)
    rows = w * pool[i] + (1 - w) * pool[j] + rng.normal(0, 0.01, (extra, pool.shape[1]))
    rows = rows.astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows


def fill(path: Path, texts: list[str], vectors: npt.NDArray[np.float32], model: str) -> None:
    """Memories (real text), canonical vectors and the vec0/bits mirror, in bulk."""
    db = open_database(path)
    index = VectorIndex(db)
    generation = index.ensure_generation(provider="native", model=model, dimensions=384)
    for start in range(0, len(vectors), BATCH):
        rows = [
            (str(uuid.uuid4()), NewMemory("default", texts[i % len(texts)] + f" #{i}"), vectors[i])
            for i in range(start, min(len(vectors), start + BATCH))
        ]
        with db.write() as conn:
            for memory_id, new, _ in rows:
                insert_memory(conn, memory_id, new, actor="bench", embedding_model=model)
            hashes = {
                r[0]: r[1]
                for r in conn.execute(
                    "SELECT id, content_hash FROM memories WHERE id IN "
                    "(SELECT value FROM json_each(:ids))",
                    {"ids": json.dumps([r[0] for r in rows])},
                )
            }
            writes = [VectorWrite("default", m, hashes[m], v.tobytes()) for m, _, v in rows]
            index.store(conn, generation, writes)
    db.close()


def run_queries(
    db: Database, generation: Generation, channel: SemanticChannel, queries: npt.NDArray[np.float32]
) -> tuple[list[list[str]], list[float], str | None]:
    """Top-10 memory ids per query, latencies (ms) and the index the channel reported."""
    conn, filters = db.reader(), RecallFilters()
    ids, times, strategy = [], [], None
    for query in queries:
        started = time.perf_counter()
        outcome = channel.search(conn, generation, query, "default", filters, K)
        times.append((time.perf_counter() - started) * 1000)
        ids.append([h.memory_id for h in outcome.hits])
        strategy = outcome.strategy
    return ids, times, strategy


def agreement(found: list[list[str]], exact: list[list[str]]) -> float:
    return statistics.mean(
        len(set(a) & set(b)) / max(1, len(b)) for a, b in zip(found, exact, strict=True)
    )


def status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def cold_open(path: Path, queries_path: Path, candidates: int) -> None:
    """Child process: open the workspace, time the first answer, measure the index's RSS."""
    queries = np.load(queries_path)
    usearch_index()  # libraries loaded before the baseline: the RSS is the data's
    before = {f: status_kb(f) for f in ("RssAnon", "RssFile")}
    started = time.perf_counter()
    db = open_database(path)
    generation = VectorIndex(db).generation()
    ann = AnnIndexes(index_directory(path), db.reader)
    channel = SemanticChannel(
        None, vec_available=True, exact_max_rows=0, ann=ann, ann_candidates=candidates
    )
    conn = db.reader()
    first = channel.search(conn, generation, queries[0], "default", RecallFilters(), K)
    first_ms = (time.perf_counter() - started) * 1000
    times = []
    for query in queries:
        t0 = time.perf_counter()
        channel.search(conn, generation, query, "default", RecallFilters(), K)
        times.append((time.perf_counter() - t0) * 1000)
    after = {f: status_kb(f) for f in ("RssAnon", "RssFile")}
    print(
        json.dumps(
            {
                "strategy": first.strategy,
                "first_ms": first_ms,
                "p50": statistics.median(times),
                "p95": percentile(times, 95),
                "anon_mb": (after["RssAnon"] - before["RssAnon"]) / 1024,
                "file_mb": (after["RssFile"] - before["RssFile"]) / 1024,
            }
        )
    )


def bench_size(
    size: int, label: str, vectors: npt.NDArray[np.float32], texts: list[str], model: str,
    queries: npt.NDArray[np.float32], args: argparse.Namespace,
) -> list[str]:  # fmt: skip
    lines = []
    with tempfile.TemporaryDirectory(prefix="ann-bench-") as tmp:
        path = Path(tmp) / "memories.db"
        started = time.perf_counter()
        fill(path, texts, vectors[:size], model)
        print(f"[{label}] filled {size} rows in {time.perf_counter() - started:.0f} s", flush=True)
        db = open_database(path)
        generation = VectorIndex(db).generation()
        exact = SemanticChannel(None, vec_available=True, exact_max_rows=10**12)
        exact_ids, exact_ms, _ = run_queries(db, generation, exact, queries[:5])  # load
        exact_ids, exact_ms, kind = run_queries(db, generation, exact, queries)
        lines.append(row(label, size, "exact in memory", kind, 1.0, exact_ms))
        prefilter = SemanticChannel(None, vec_available=True, exact_max_rows=0)
        run_queries(db, generation, prefilter, queries[:5])
        ids, times, kind = run_queries(db, generation, prefilter, queries)
        lines.append(
            row(label, size, "binary prefilter, 2,000", kind, agreement(ids, exact_ids), times)
        )
        ann = AnnIndexes(index_directory(path), db.reader, build_threads=args.build_threads)
        channel = SemanticChannel(None, vec_available=True, exact_max_rows=0, ann=ann)
        started = time.perf_counter()
        channel.search(db.reader(), generation, queries[0], "default", RecallFilters(), K)
        ann.wait(timeout=24 * 3600)
        build_s = time.perf_counter() - started
        index_file, _ = partition_paths(index_directory(path), generation.id, "default")
        file_mb = index_file.stat().st_size / 2**20
        how = f"HNSW build (i8, M=16, ef_add=128, {args.build_threads} threads)"
        lines.append(
            f"| {label} | {size:,} | {how} | {build_s:.1f} s | file {file_mb:.0f} MiB | | |"
        )
        for count in args.candidates:
            channel = SemanticChannel(
                None, vec_available=True, exact_max_rows=0, ann=ann, ann_candidates=count
            )
            run_queries(db, generation, channel, queries[:5])
            ids, times, kind = run_queries(db, generation, channel, queries)
            lines.append(
                row(
                    label, size, f"HNSW, {count} candidates", kind, agreement(ids, exact_ids), times
                )
            )
        db.close()
        np.save(Path(tmp) / "queries.npy", queries)
        child = subprocess.run(
            [sys.executable, __file__, "--cold-open", str(path), "--queries-file",
             str(Path(tmp) / "queries.npy"), "--candidates", str(args.candidates[0])],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        cold = json.loads(child.stdout.strip().splitlines()[-1])
        lines.append(
            f"| {label} | {size:,} | cold open -> first answer ({cold['strategy']}) | "
            f"{cold['first_ms']:.0f} ms | RSS +{cold['file_mb']:.0f} MiB file-backed, "
            f"+{cold['anon_mb']:.0f} MiB anon | {cold['p50']:.2f} | {cold['p95']:.2f} |"
        )
    return lines


def row(label: str, size: int, name: str, kind: str | None, agree: float, ms: list[float]) -> str:
    p50, p95 = statistics.median(ms), percentile(ms, 95)
    agreed = f"top-10 agreement {agree:.3f}"
    return f"| {label} | {size:,} | {name} [{kind}] | {agreed} | | {p50:.2f} | {p95:.2f} |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=Path("/tmp/ann-corpus"))
    parser.add_argument("--sizes", default="10000,all")
    parser.add_argument("--candidates", default="50,100,200")
    parser.add_argument("--synthetic-to", type=int, default=0)
    parser.add_argument("--build-threads", type=int, default=2)
    parser.add_argument("--cold-open", type=Path)
    parser.add_argument("--queries-file", type=Path)
    args = parser.parse_args()
    args.candidates = [int(c) for c in str(args.candidates).split(",")]
    if args.cold_open:
        cold_open(args.cold_open, args.queries_file, args.candidates[0])
        return 0
    vectors, queries, sources = ann_corpus.load(args.corpus)
    corpus, _ = ann_corpus.texts()
    texts = [t for _, t in corpus[: len(vectors)]]
    model = (args.corpus / "model.txt").read_text().strip()
    counts = {s: sources.count(s) for s in sorted(set(sources))}
    print(f"real vectors: {len(vectors):,} {counts}; queries: {len(queries)}; model {model}")
    lines = [
        "| corpus | vectors | strategy [vectorIndex] | agreement / build | size, RSS "
        "| p50 ms | p95 ms |",
        "| --- | ---: | --- | --- | --- | ---: | ---: |",
    ]
    for size in str(args.sizes).split(","):
        n = len(vectors) if size == "all" else min(int(size), len(vectors))
        lines += bench_size(n, "real", vectors, texts, model, queries, args)
        print("\n".join(lines), flush=True)
    if args.synthetic_to > len(vectors):
        extended = np.vstack([vectors, synthetic(vectors, args.synthetic_to - len(vectors))])
        lines += bench_size(
            args.synthetic_to, "SYNTHETIC extension", extended, texts, model, queries, args
        )
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
