"""Recall latency at 10k and 100k memories: lexical, vector and hybrid, query embedding included.

Run: uv run python bench/recall_latency.py [--sizes 10000,100000] [--queries 200]
     [--corpus zipf|templated] [--pool 5000]

Every timing is a full `SignetService.recall` call through the facade (validation, query
embedding with the native all-MiniLM-L6-v2 on a worker thread, BM25, vec0 KNN, fusion,
context signals, hydration), limit 10. The corpus is written in bulk through `db.write()`
(setup, not timed), in sessions of 40 memories with three `who` values.

Vectors, honestly: the first `--pool` sentences are embedded with the real model; every other
row gets a blend of two random pool vectors (weights 0.5-0.8) plus N(0, 0.01) noise,
renormalised. That keeps the vector distribution realistic for KNN cost and for the binary
prefilter's agreement with exact search (reported), but those rows' vectors do not describe
their text, so this measures speed, not relevance (LoCoMo measures relevance).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # see bench/locomo.py

import argparse
import json
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from corpus import queries, sentences, zipf_queries, zipf_sentences

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.memory import NewMemory
from signet_desktop.domain.recall import RecallQuery, RecallResult
from signet_desktop.embedding.index import VectorIndex
from signet_desktop.embedding.native import NativeMiniLM
from signet_desktop.embedding.vectors import VectorWrite
from signet_desktop.recall.engine import RecallEngine
from signet_desktop.recall.vector import SemanticChannel
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from signet_desktop.storage.database import open_database
from signet_desktop.storage.memories import insert_memory

BATCH = 2000
LIMIT = 10
PREFILTER_SIZES = (1000, 2000, 4000)
SESSION_LENGTH = 40  # memories per session: the context stage looks up session neighbours
HARNESSES = ("claude-code", "codex", "opencode")  # who, so the who signal has work to do
HYBRID = ("lexical", "semantic")
# name -> (channels, context signals on); "fusion only" is the side-by-side baseline for hybrid
RANKERS: dict[str, tuple[tuple[str, ...], bool]] = {
    "lexical": (("lexical",), False),
    "vector": (("semantic",), False),
    "fusion only": (HYBRID, False),
    "hybrid": (HYBRID, True),
}


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def corpus_vectors(
    pool: npt.NDArray[np.float32], size: int, seed: int = 1
) -> npt.NDArray[np.float32]:
    """`size` unit vectors: the real pool first, then blends of two pool vectors plus noise."""
    rng = np.random.default_rng(seed)
    extra = max(0, size - len(pool))
    i, j = rng.integers(0, len(pool), extra), rng.integers(0, len(pool), extra)
    w = rng.uniform(0.5, 0.8, extra)[:, None].astype(np.float32)
    blends = w * pool[i] + (1 - w) * pool[j]
    blends += rng.normal(0.0, 0.01, blends.shape).astype(np.float32)
    matrix = np.vstack([pool[:size], blends]).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix


def fill(root: Path, texts: list[str], matrix: npt.NDArray[np.float32], model: str) -> None:
    """Memories, FTS rows, canonical vectors and vec0 rows, in large write transactions."""
    db = open_database(root / "memory" / "memories.db")
    index = VectorIndex(db)
    generation = index.ensure_generation(provider="native", model=model, dimensions=384)
    for start in range(0, len(texts), BATCH):
        rows = []
        for offset, text in enumerate(texts[start : start + BATCH]):
            memory_id = str(uuid.uuid4())
            index_ = start + offset
            new = NewMemory(
                "default",
                text,
                who=HARNESSES[index_ % len(HARNESSES)],
                session_id=f"bench-session-{index_ // SESSION_LENGTH}",
            )
            rows.append((memory_id, new, matrix[index_]))
        with db.write() as conn:
            for memory_id, new, _ in rows:
                insert_memory(conn, memory_id, new, actor="bench", embedding_model=model)
            content_hashes = {
                r["id"]: r["content_hash"]
                for r in conn.execute(
                    "SELECT id, content_hash FROM memories WHERE id IN "
                    "(SELECT value FROM json_each(:ids))",
                    {"ids": json.dumps([r[0] for r in rows])},
                )
            }
            writes = [
                VectorWrite("default", mid, content_hashes[mid], vec.tobytes())
                for mid, _, vec in rows
            ]
            index.store(conn, generation, writes)
    db.close()


def time_recall(
    service: SignetService, qs: list[str], ranker: tuple[tuple[str, ...], bool]
) -> list[float]:
    channels, context = ranker
    samples = []
    for q in qs:
        started = time.perf_counter()
        service.recall.search(RecallQuery(query=q, limit=LIMIT, channels=channels, context=context))
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def stage_medians(service: SignetService, qs: list[str]) -> dict[str, float]:
    per_stage: dict[str, list[float]] = {}
    for q in qs:
        result = service.recall.search(RecallQuery(query=q, limit=LIMIT))
        for stage in result.timings:
            per_stage.setdefault(stage.name, []).append(stage.duration_ms)
    return {name: statistics.median(v) for name, v in per_stage.items()}


def prefilter_agreement(
    service: SignetService, embedder: NativeMiniLM, qs: list[str], candidates: int
) -> tuple[float, list[float], list[float]]:
    """Top-10 overlap of the binary prefilter with exact KNN, and both strategies' latency."""
    db = service._db  # the bench seeds rows underneath the facade
    exact = RecallEngine(
        db,
        semantic=SemanticChannel(embedder, vec_available=True, exact_max_rows=10**12),
        min_score=0.0,
    )
    fast = RecallEngine(
        db,
        semantic=SemanticChannel(
            embedder, vec_available=True, exact_max_rows=0, prefilter_candidates=candidates
        ),
        min_score=0.0,
    )
    overlap, exact_ms, fast_ms = [], [], []
    for q in qs:
        query = RecallQuery(query=q, limit=LIMIT, channels=("semantic",))
        a = _timed(exact.recall, query, exact_ms)
        b = _timed(fast.recall, query, fast_ms)
        ids_a = {h.memory.id for h in a.hits}
        overlap.append(len(ids_a & {h.memory.id for h in b.hits}) / max(1, len(ids_a)))
    exact.close()
    fast.close()
    return statistics.mean(overlap), exact_ms, fast_ms


def _timed(
    fn: Callable[[RecallQuery], RecallResult], query: RecallQuery, into: list[float]
) -> RecallResult:
    started = time.perf_counter()
    value = fn(query)
    into.append((time.perf_counter() - started) * 1000)
    return value


_POOLS: dict[tuple[str, int], tuple[npt.NDArray[np.float32], float]] = {}


def embedded_pool(
    embedder: NativeMiniLM, kind: str, texts: list[str], pool_size: int
) -> tuple[npt.NDArray[np.float32], float]:
    """Real vectors of the corpus' first sentences (the corpora share them across sizes)."""
    key = (kind, min(pool_size, len(texts)))
    if key not in _POOLS:
        started = time.perf_counter()
        vectors = embedder.embed(texts[: key[1]])
        _POOLS[key] = (vectors, key[1] / (time.perf_counter() - started))
    return _POOLS[key]


def run(
    size: int, kind: str, pool_size: int, query_count: int, embedder: NativeMiniLM
) -> dict[str, Any]:
    texts = zipf_sentences(size) if kind == "zipf" else sentences(size)
    qs = zipf_queries(texts, query_count) if kind == "zipf" else queries(query_count)
    pool, rate = embedded_pool(embedder, kind, texts, pool_size)
    matrix = corpus_vectors(pool, size)
    out: dict[str, Any] = {"size": size, "corpus": kind, "pool_rate": rate}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        fill(root, texts, matrix, embedder.model)
        out["fill_s"] = time.perf_counter() - started
        options = BuildOptions(embedder=embedder)
        service = build_service(WorkspacePaths.for_root(root), SignetConfig(), options)
        time_recall(service, qs[:20], RANKERS["hybrid"])  # warm caches, model and threads
        for name, ranker in RANKERS.items():
            samples = time_recall(service, qs, ranker)
            out[name] = (statistics.median(samples), percentile(samples, 95))
        out["stages"] = stage_medians(service, qs[:100])
        out["prefilter"] = []
        for candidates in PREFILTER_SIZES:
            overlap, exact_ms, fast_ms = prefilter_agreement(
                service, embedder, qs[:100], candidates
            )
            out["exact_knn"] = (statistics.median(exact_ms), percentile(exact_ms, 95))
            fast = (statistics.median(fast_ms), percentile(fast_ms, 95))
            out["prefilter"].append((candidates, *fast, overlap))
        service.close()
        fallback = build_service(
            WorkspacePaths.for_root(root),
            SignetConfig(),
            BuildOptions(with_vec=False, embedder=embedder),
        )
        samples = time_recall(fallback, qs[:100], RANKERS["hybrid"])
        out["fallback_hybrid"] = (statistics.median(samples), percentile(samples, 95))
        fallback.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--corpus", default="zipf", choices=("zipf", "templated"))
    parser.add_argument("--pool", type=int, default=5000)
    args = parser.parse_args()
    embedder = NativeMiniLM()
    embedder.load()
    rows = [
        run(int(s), args.corpus, args.pool, args.queries, embedder) for s in args.sizes.split(",")
    ]
    print(f"\ncorpus {args.corpus}; {args.queries} queries; limit {LIMIT}; ms per recall call")
    print("\n| memories | lexical p50 | p95 | vector p50 | p95 | fusion only p50 | p95 "
          "| hybrid p50 | p95 | hybrid, no sqlite-vec (recent-window) p50 | p95 |")  # fmt: skip
    print("| ---: |" + " ---: |" * 10)
    for r in rows:
        cells = [*r["lexical"], *r["vector"], *r["fusion only"], *r["hybrid"]]
        cells += r["fallback_hybrid"]
        print(f"| {r['size']:,} | " + " | ".join(f"{c:.1f}" for c in cells) + " |")
    print("\nhybrid stage medians (ms):")
    for r in rows:
        stages = ", ".join(f"{k} {v:.2f}" for k, v in r["stages"].items())
        print(f"- {r['size']:,}: {stages}")
    print("\nsemantic-only recall by KNN strategy (ms) and top-10 agreement with exact:\n")
    print("| memories | strategy | p50 | p95 | top-10 agreement |")
    print("| ---: | --- | ---: | ---: | ---: |")
    for r in rows:
        p50, p95 = r["exact_knn"]
        print(f"| {r['size']:,} | exact float KNN (vec0) | {p50:.1f} | {p95:.1f} | 1.000 |")
        for candidates, p50, p95, agreement in r["prefilter"]:
            print(
                f"| {r['size']:,} | binary prefilter, {candidates} candidates, exact rescore "
                f"| {p50:.1f} | {p95:.1f} | {agreement:.3f} |"
            )
    print("\nsetup:")
    for r in rows:
        rate, fill_s = r["pool_rate"], r["fill_s"]
        print(f"- {r['size']:,}: pool embedded at {rate:.0f} texts/s; bulk fill {fill_s:.1f} s")
    print("\ntarget: hybrid p95 <= 50 ms at 100k")


if __name__ == "__main__":
    main()
