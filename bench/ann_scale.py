"""The HNSW index at up to 1M vectors: build, agreement, latency, RSS and cold open.

    nice -n 5 uv run python bench/ann_scale.py --corpus /tmp/ann-corpus --total 1000000

The index level only (no memories rows: filling 1M memories with FTS and the vec0 mirror is
most of an hour on this machine): every vector is a canonical `embeddings` row in a real
database, the index is `recall/ann.py`'s own (built by `AnnIndexes` from that table), and each
query's candidates are rescored exactly from their canonical blobs read back from SQLite, as
the channel does. Beside it, in the same run: exact search (one float32 matrix product over
every vector, as `recall/matrix.py`) and the binary prefilter (sign bits, Hamming, the best
2,000 rescored exactly; a numpy replica of `recall/codes.py`).

Vectors: the real MiniLM vectors of `bench/ann_corpus.py` first, then — to reach `--total` —
SYNTHETIC rows: blends of two real vectors (weights 0.5-0.8) plus N(0, 0.01) noise,
renormalised. Queries are real questions. Agreement on such a mix says how the graph behaves
on a crowded space, not what a user's 1M real memories would give; the real-only rows of
`bench/ann_index.py` are the evidence for the 0.98 gate.
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
from pathlib import Path

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import ann_corpus  # noqa: E402
from ann_index import percentile, status_kb, synthetic  # noqa: E402

from signet_desktop.embedding.generations import Generation  # noqa: E402
from signet_desktop.embedding.index import VectorIndex  # noqa: E402
from signet_desktop.recall.ann import AnnIndexes  # noqa: E402
from signet_desktop.recall.ann_file import (  # noqa: E402
    index_directory,
    partition_paths,
    usearch_index,
)
from signet_desktop.storage.connect import Connection  # noqa: E402
from signet_desktop.storage.database import open_database  # noqa: E402

K = 10
PREFILTER = 2000
INSERT = """
INSERT INTO embeddings (agent_id, generation_id, source_type, source_id, content_hash, model,
                        dimensions, vector, chunk_text, created_at)
VALUES ('default', :generation_id, 'memory', :source_id, 'bench', :model, 384, :vector, NULL,
        '2026-12-07T00:00:00.000Z')
"""
BLOBS = "SELECT id, vector FROM embeddings WHERE id IN (SELECT value FROM json_each(:ids))"


def fill(path: Path, vectors: npt.NDArray[np.float32], model: str) -> None:
    db = open_database(path)
    generation = VectorIndex(db).ensure_generation(provider="native", model=model, dimensions=384)
    for start in range(0, len(vectors), 20_000):
        block = vectors[start : start + 20_000]
        with db.write() as conn:
            conn.executemany(
                INSERT,
                [
                    {
                        "generation_id": generation.id,
                        "source_id": f"bench-{start + i}",
                        "model": model,
                        "vector": v.tobytes(),
                    }
                    for i, v in enumerate(block)
                ],
            )
    db.close()


def rescored(conn: Connection, ids: list[int], query: npt.NDArray[np.float32]) -> list[int]:
    """The channel's step: candidates' canonical blobs from SQLite, exact cosine, top k."""
    rows = conn.execute(BLOBS, {"ids": json.dumps(ids)}).fetchall()
    matrix = np.frombuffer(b"".join(bytes(r[1]) for r in rows), np.float32).reshape(len(rows), -1)
    order = np.argsort(-(matrix @ query))[:K]
    return [int(rows[i][0]) for i in order]


def ann_answers(
    ann: AnnIndexes, conn: Connection, generation: Generation, queries: npt.NDArray[np.float32],
    count: int, total: int,
) -> tuple[list[list[int]], list[float]]:  # fmt: skip
    answers, times = [], []
    for query in queries:
        started = time.perf_counter()
        found = ann.search(conn, generation, "default", query, count, total)
        assert found is not None
        answers.append(rescored(conn, [i for i, _ in found], query))
        times.append((time.perf_counter() - started) * 1000)
    return answers, times


def cold_open(path: Path, queries_path: Path, count: int, total: int) -> None:
    """Child process: open the database and the index, answer the first query, then all."""
    queries = np.load(queries_path)
    usearch_index()
    before = {f: status_kb(f) for f in ("RssAnon", "RssFile")}
    started = time.perf_counter()
    db = open_database(path)
    generation = VectorIndex(db).generation()
    ann = AnnIndexes(index_directory(path), db.reader)
    ann_answers(ann, db.reader(), generation, queries[:1], count, total)
    first_ms = (time.perf_counter() - started) * 1000
    _, times = ann_answers(ann, db.reader(), generation, queries, count, total)
    after = {f: status_kb(f) for f in ("RssAnon", "RssFile")}
    print(json.dumps({
        "first_ms": first_ms, "p50": statistics.median(times), "p95": percentile(times, 95),
        "anon_mb": (after["RssAnon"] - before["RssAnon"]) / 1024,
        "file_mb": (after["RssFile"] - before["RssFile"]) / 1024,
    }))  # fmt: skip


def exact_and_prefilter(
    vectors: npt.NDArray[np.float32], queries: npt.NDArray[np.float32]
) -> tuple[list[list[int]], list[float], list[list[int]], list[float]]:
    """Exact top-10 (row + 1 = embedding id) and the binary prefilter's, with timings."""
    codes = np.packbits(vectors > 0, axis=1)
    exact, exact_ms, pre, pre_ms = [], [], [], []
    for query in queries:
        started = time.perf_counter()
        sims = vectors @ query
        top = np.argpartition(-sims, K)[:K]
        exact.append([int(i) + 1 for i in top[np.argsort(-sims[top])]])
        exact_ms.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        distance = np.bitwise_count(codes ^ np.packbits(query > 0)).sum(axis=1)
        chosen = np.argpartition(distance, PREFILTER)[:PREFILTER]
        best = chosen[np.argsort(-(vectors[chosen] @ query))[:K]]
        pre.append([int(i) + 1 for i in best])
        pre_ms.append((time.perf_counter() - started) * 1000)
    return exact, exact_ms, pre, pre_ms


def agreement(found: list[list[int]], exact: list[list[int]]) -> str:
    """Mean top-10 overlap over all queries (questions / held-out texts when there are some)."""

    def mean(a: list[list[int]], b: list[list[int]]) -> float:
        return statistics.mean(len(set(x) & set(y)) / K for x, y in zip(a, b, strict=True))

    whole = f"{mean(found, exact):.3f}"
    if not HELD_OUT:
        return whole
    split = len(found) - HELD_OUT[0]
    parts = mean(found[:split], exact[:split]), mean(found[split:], exact[split:])
    return f"{whole} (questions {parts[0]:.3f}, held-out texts {parts[1]:.3f})"


HELD_OUT: list[int] = []  # how many queries at the end are held-out corpus texts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=Path("/tmp/ann-corpus"))
    parser.add_argument("--total", type=int, default=1_000_000)
    parser.add_argument("--candidates", default="100,200")
    parser.add_argument("--build-threads", type=int, default=2)
    parser.add_argument("--cold-open", type=Path)
    parser.add_argument("--queries-file", type=Path)
    parser.add_argument(
        "--held-out", type=int, default=0,
        help="real corpus texts taken out of the index and asked as extra queries",
    )  # fmt: skip
    args = parser.parse_args()
    counts = [int(c) for c in str(args.candidates).split(",")]
    if args.cold_open:
        cold_open(args.cold_open, args.queries_file, counts[0], args.total)
        return 0
    real, queries, _ = ann_corpus.load(args.corpus)
    if args.held_out:
        chosen = np.random.default_rng(7).choice(len(real), args.held_out, replace=False)
        queries = np.vstack([queries, real[chosen]])
        real = np.delete(real, chosen, axis=0)
        HELD_OUT.append(args.held_out)
    model = (args.corpus / "model.txt").read_text().strip()
    vectors = np.vstack([real, synthetic(real, max(0, args.total - len(real)))])[: args.total]
    print(f"{len(real):,} real + {len(vectors) - len(real):,} SYNTHETIC vectors", flush=True)
    with tempfile.TemporaryDirectory(prefix="ann-scale-") as tmp:
        path = Path(tmp) / "memories.db"
        started = time.perf_counter()
        fill(path, vectors, model)
        print(f"filled in {time.perf_counter() - started:.0f} s", flush=True)
        exact, exact_ms, pre, pre_ms = exact_and_prefilter(vectors, queries)
        lines = [f"| exact (float32 product) | 1.000 | {statistics.median(exact_ms):.1f} | "
                 f"{percentile(exact_ms, 95):.1f} |",
                 f"| binary prefilter, 2,000 | {agreement(pre, exact)} | "
                 f"{statistics.median(pre_ms):.1f} | {percentile(pre_ms, 95):.1f} |"]  # fmt: skip
        print("\n".join(lines), flush=True)
        db = open_database(path)
        generation = VectorIndex(db).generation()
        ann = AnnIndexes(index_directory(path), db.reader, build_threads=args.build_threads)
        started = time.perf_counter()
        ann.search(db.reader(), generation, "default", queries[0], K, len(vectors))
        ann.wait(timeout=24 * 3600)
        build_s = time.perf_counter() - started
        size_mb = partition_paths(index_directory(path), generation.id, "default")[0]
        lines.append(
            f"| HNSW build | {build_s:.0f} s | file {size_mb.stat().st_size / 2**20:.0f} MiB |"
        )
        for count in counts:
            answers, times = ann_answers(ann, db.reader(), generation, queries, count, len(vectors))
            agreed, p50, p95 = (
                agreement(answers, exact),
                statistics.median(times),
                percentile(times, 95),
            )
            lines.append(
                f"| HNSW, {count} candidates, rescored | {agreed} | {p50:.1f} | {p95:.1f} |"
            )
            print(lines[-1], flush=True)
        db.close()
        np.save(Path(tmp) / "queries.npy", queries)
        child = subprocess.run(
            [sys.executable, __file__, "--cold-open", str(path), "--queries-file",
             str(Path(tmp) / "queries.npy"), "--candidates", str(counts[0]),
             "--total", str(len(vectors))],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        cold = json.loads(child.stdout.strip().splitlines()[-1])
        lines.append(
            f"| cold open -> first answer | {cold['first_ms']:.0f} ms | RSS +{cold['file_mb']:.0f}"
            f" MiB file-backed, +{cold['anon_mb']:.0f} MiB anon | p50 {cold['p50']:.1f}, "
            f"p95 {cold['p95']:.1f} |"
        )
    print(
        f"{len(real):,} real + {len(vectors) - len(real):,} SYNTHETIC vectors; "
        f"{len(queries)} queries"
    )
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
