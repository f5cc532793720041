"""Recall latency at 10k and 100k memories: lexical, vector and hybrid, query embedding included.

Run: uv run python bench/recall_latency.py [--sizes 10000,100000] [--queries 200]
     [--corpus zipf|templated] [--pool 5000] [--precision int8|float32]

Every timing is a full `SignetService.recall` call through the facade (validation, query
embedding with the native all-MiniLM-L6-v2 on a worker thread, BM25, vec0 KNN, fusion,
context signals, hydration), limit 10. The graph is the daemon's default (int8); earlier
sections' rows used float32 (`--precision float32`). "hybrid, previous build" runs the same
engine with the semantic channel as it was before the in-memory matrix (vec0 exact KNN up to
20,000 vectors, the binary prefilter above), on the same database in the same run. The
corpus is written in bulk through `db.write()` (setup, not timed), in sessions of 40 memories
with three `who` values.

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from corpus import queries, sentences, zipf_queries, zipf_sentences

from signet_desktop.config.models import EmbeddingConfig, SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.memory import NewMemory
from signet_desktop.domain.recall import RecallQuery, RecallResult
from signet_desktop.embedding.graphs import PRECISIONS
from signet_desktop.embedding.index import VectorIndex
from signet_desktop.embedding.native import NativeMiniLM
from signet_desktop.embedding.vectors import VectorWrite
from signet_desktop.recall.context import ContextWeights
from signet_desktop.recall.engine import RecallEngine
from signet_desktop.recall.vector import SemanticChannel
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from signet_desktop.storage.database import open_database
from signet_desktop.storage.handle import DatabaseHandle
from signet_desktop.storage.memories import insert_memory

BATCH = 2000
LIMIT = 10
PREFILTER_SIZES = (1000, 2000, 4000)
PREVIOUS_EXACT_MAX_ROWS = 20_000  # the build before the in-memory matrix
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
    fill_database(db, texts, matrix, model)
    db.close()


def fill_database(
    db: DatabaseHandle, texts: list[str], matrix: npt.NDArray[np.float32], model: str
) -> None:
    """`fill` into an open database of either backend (bench/pg_recall_latency.py)."""
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


def previous_engine(service: SignetService, embedder: NativeMiniLM) -> RecallEngine:
    """The hybrid engine as configured by default, with the previous build's vector channel."""
    search = SignetConfig().search
    return RecallEngine(
        service._db,  # the bench compares strategies underneath the facade
        min_score=search.min_score,
        semantic=SemanticChannel(
            embedder,
            vec_available=True,
            exact_max_rows=PREVIOUS_EXACT_MAX_ROWS,
            in_memory=False,
        ),
        alpha=search.alpha,
        context=ContextWeights(search.who_boost, search.session_weight),
        depth=search.top_k,
    )


def time_engine(engine: RecallEngine, qs: list[str]) -> list[float]:
    samples: list[float] = []
    for q in qs:
        _timed(engine.recall, RecallQuery(query=q, limit=LIMIT), samples)
    return samples


def rss_mb() -> float:
    """Resident set size of this process now (Linux /proc)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def stage_medians(service: SignetService, qs: list[str]) -> dict[str, float]:
    per_stage: dict[str, list[float]] = {}
    for q in qs:
        result = service.recall.search(RecallQuery(query=q, limit=LIMIT))
        for stage in result.timings:
            per_stage.setdefault(stage.name, []).append(stage.duration_ms)
    return {name: statistics.median(v) for name, v in per_stage.items()}


@dataclass(frozen=True)
class Agreement:
    """Top-10 overlap with the in-memory exact search, and each strategy's latency."""

    prefilter: float
    vec0: float
    matrix_ms: list[float]
    vec0_ms: list[float]
    prefilter_ms: list[float]


def prefilter_agreement(
    service: SignetService, embedder: NativeMiniLM, qs: list[str], candidates: int
) -> Agreement:
    """Top-10 overlap of the binary prefilter and of vec0 KNN with the in-memory exact search."""
    db = service._db  # the bench seeds rows underneath the facade
    exact = RecallEngine(
        db,
        semantic=SemanticChannel(embedder, vec_available=True, exact_max_rows=10**12),
        min_score=0.0,
    )
    vec0 = RecallEngine(
        db,
        semantic=SemanticChannel(
            embedder, vec_available=True, exact_max_rows=10**12, in_memory=False
        ),
        min_score=0.0,
    )
    fast = RecallEngine(
        db,
        semantic=SemanticChannel(
            embedder, vec_available=True, exact_max_rows=0, prefilter_candidates=candidates
        ),
        min_score=0.0,
    )
    overlap: list[float] = []
    vec0_overlap: list[float] = []
    exact_ms: list[float] = []
    vec0_ms: list[float] = []
    fast_ms: list[float] = []
    for q in qs:
        query = RecallQuery(query=q, limit=LIMIT, channels=("semantic",))
        a = _timed(exact.recall, query, exact_ms)
        b = _timed(fast.recall, query, fast_ms)
        c = _timed(vec0.recall, query, vec0_ms)
        ids_a = {h.memory.id for h in a.hits}
        overlap.append(len(ids_a & {h.memory.id for h in b.hits}) / max(1, len(ids_a)))
        vec0_overlap.append(len(ids_a & {h.memory.id for h in c.hits}) / max(1, len(ids_a)))
    for engine in (exact, vec0, fast):
        engine.close()
    return Agreement(
        statistics.mean(overlap), statistics.mean(vec0_overlap), exact_ms, vec0_ms, fast_ms
    )


def _timed(
    fn: Callable[[RecallQuery], RecallResult], query: RecallQuery, into: list[float]
) -> RecallResult:
    started = time.perf_counter()
    value = fn(query)
    into.append((time.perf_counter() - started) * 1000)
    return value


def _p50_p95(samples: list[float]) -> tuple[float, float]:
    return statistics.median(samples), percentile(samples, 95)


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
        before = rss_mb()
        started = time.perf_counter()
        service.recall.search(RecallQuery(query="first query after opening", limit=LIMIT))
        out["first_recall_ms"] = (time.perf_counter() - started) * 1000
        out["rss_delta_mb"] = rss_mb() - before
        time_recall(service, qs[:20], RANKERS["hybrid"])  # warm caches, model and threads
        for name, ranker in RANKERS.items():
            samples = time_recall(service, qs, ranker)
            out[name] = (statistics.median(samples), percentile(samples, 95))
        previous = previous_engine(service, embedder)
        time_engine(previous, qs[:20])
        samples = time_engine(previous, qs)
        out["previous hybrid"] = (statistics.median(samples), percentile(samples, 95))
        previous.close()
        out["stages"] = stage_medians(service, qs[:100])
        out["prefilter"] = []
        for candidates in PREFILTER_SIZES:
            agreement = prefilter_agreement(service, embedder, qs[:100], candidates)
            out["matrix"] = _p50_p95(agreement.matrix_ms)
            out["vec0"] = (*_p50_p95(agreement.vec0_ms), agreement.vec0)
            out["prefilter"].append(
                (candidates, *_p50_p95(agreement.prefilter_ms), agreement.prefilter)
            )
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
    parser.add_argument(
        "--precision",
        default=EmbeddingConfig().precision,
        choices=sorted(PRECISIONS),
        help="the native graph for the corpus and the queries (default: the daemon's)",
    )
    args = parser.parse_args()
    embedder = NativeMiniLM(graph=PRECISIONS[args.precision])
    embedder.load()
    rows = [
        run(int(s), args.corpus, args.pool, args.queries, embedder) for s in args.sizes.split(",")
    ]
    print(
        f"\ncorpus {args.corpus}; {args.precision} graph; {args.queries} queries; limit {LIMIT}; "
        "ms per recall call"
    )
    print("\n| memories | lexical p50 | p95 | vector p50 | p95 | fusion only p50 | p95 "
          "| hybrid p50 | p95 | hybrid, previous build p50 | p95 "
          "| hybrid, no sqlite-vec (recent-window) p50 | p95 |")  # fmt: skip
    print("| ---: |" + " ---: |" * 12)
    for r in rows:
        cells = [*r["lexical"], *r["vector"], *r["fusion only"], *r["hybrid"]]
        cells += [*r["previous hybrid"], *r["fallback_hybrid"]]
        print(f"| {r['size']:,} | " + " | ".join(f"{c:.1f}" for c in cells) + " |")
    print("\nhybrid stage medians (ms):")
    for r in rows:
        stages = ", ".join(f"{k} {v:.2f}" for k, v in r["stages"].items())
        print(f"- {r['size']:,}: {stages}")
    print("\nsemantic-only recall by strategy (ms) and top-10 agreement with exact:\n")
    print("| memories | strategy | p50 | p95 | top-10 agreement |")
    print("| ---: | --- | ---: | ---: | ---: |")
    for r in rows:
        p50, p95 = r["matrix"]
        print(f"| {r['size']:,} | exact, in-memory matrix (now) | {p50:.1f} | {p95:.1f} | 1.000 |")
        p50, p95, agreement = r["vec0"]
        print(
            f"| {r['size']:,} | exact float KNN (vec0) | {p50:.1f} | {p95:.1f} | {agreement:.3f} |"
        )
        for candidates, p50, p95, agreement in r["prefilter"]:
            print(
                f"| {r['size']:,} | binary prefilter, {candidates} candidates, exact rescore "
                f"| {p50:.1f} | {p95:.1f} | {agreement:.3f} |"
            )
    print("\nsetup, first recall after opening, memory:")
    for r in rows:
        rate, fill_s = r["pool_rate"], r["fill_s"]
        print(
            f"- {r['size']:,}: pool embedded at {rate:.0f} texts/s; bulk fill {fill_s:.1f} s; "
            f"first recall {r['first_recall_ms']:.0f} ms (loads the matrix); "
            f"RSS +{r['rss_delta_mb']:.0f} MB after it"
        )
    print("\ntarget: hybrid p95 <= 20 ms at 100k")


if __name__ == "__main__":
    main()
