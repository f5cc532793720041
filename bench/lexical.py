"""Remember throughput and lexical recall latency at 10k and 100k memories.

Run: uv run python bench/lexical.py [--sizes 10000,100000] [--queries 300] [--corpus zipf]
Prints a table; the baseline column is raw FTS5 BM25 SQL with no scoping, filters or hydration.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import queries, sentences, zipf_queries, zipf_sentences

from signet_desktop.domain.memory import Actor, NewMemory
from signet_desktop.domain.recall import RecallQuery
from signet_desktop.recall.engine import RecallEngine
from signet_desktop.recall.sanitize import fts_match_expression
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.storage.database import Database, open_database
from signet_desktop.storage.memories import insert_memory

REMEMBER_SAMPLE = 3000
BULK_BATCH = 2000


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def remember_throughput(db: Database, texts: list[str]) -> float:
    """Memories/s through the facade's remember (one transaction each, lexical only)."""
    service = MemoryService(db)
    started = time.perf_counter()
    for text in texts:
        service.remember(RememberRequest(content=text), Actor())
    return len(texts) / (time.perf_counter() - started)


def bulk_fill(db: Database, texts: list[str]) -> None:
    """Fill the rest of the corpus in large transactions (setup, not measured)."""
    for start in range(0, len(texts), BULK_BATCH):
        with db.write() as conn:
            for text in texts[start : start + BULK_BATCH]:
                insert_memory(
                    conn, str(uuid.uuid4()), NewMemory("default", text), actor="bench",
                    embedding_model=None,
                )  # fmt: skip


def time_calls(fn: object, items: list[str]) -> list[float]:
    samples = []
    for item in items:
        started = time.perf_counter()
        fn(item)  # type: ignore[operator]
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def run(size: int, query_count: int, kind: str) -> dict[str, float | str]:
    with tempfile.TemporaryDirectory() as tmp:
        db = open_database(Path(tmp) / "bench.db", with_vec=False)
        texts = zipf_sentences(size) if kind == "zipf" else sentences(size)
        rate = remember_throughput(db, texts[:REMEMBER_SAMPLE])
        bulk_fill(db, texts[REMEMBER_SAMPLE:])
        engine = RecallEngine(db)
        qs = zipf_queries(texts, query_count) if kind == "zipf" else queries(query_count)
        reader = db.reader()

        def engine_call(q: str) -> None:
            engine.recall(RecallQuery(query=q, limit=10, channels=("lexical",)))

        def baseline_call(q: str) -> None:
            reader.execute(
                "SELECT rowid, bm25(memories_fts) AS s FROM memories_fts "
                "WHERE memories_fts MATCH ? ORDER BY s LIMIT 10",
                (fts_match_expression(q),),
            ).fetchall()

        time_calls(engine_call, qs[:20])  # warm caches
        engine_ms = time_calls(engine_call, qs)
        baseline_ms = time_calls(baseline_call, qs)
        db.close()
    return {
        "corpus": kind,
        "size": size,
        "remember_per_s": rate,
        "p50": statistics.median(engine_ms),
        "p95": percentile(engine_ms, 95),
        "base_p50": statistics.median(baseline_ms),
        "base_p95": percentile(baseline_ms, 95),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument(
        "--corpus",
        default="zipf,templated",
        help="zipf: natural-text-like word frequencies; templated: few repeated phrases, every "
        "query matches ~14%% of memories (a worst case for BM25)",
    )
    args = parser.parse_args()
    rows = [
        run(int(size), args.queries, kind)
        for kind in args.corpus.split(",")
        for size in args.sizes.split(",")
    ]
    print()
    print("| corpus | memories | remember/s (facade) | lexical recall p50 ms | p95 ms "
          "| baseline raw BM25 p50 ms | p95 ms |")  # fmt: skip
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(
            f"| {r['corpus']} | {r['size']:,} | {r['remember_per_s']:,.0f} "
            f"| {r['p50']:.2f} | {r['p95']:.2f} | {r['base_p50']:.2f} | {r['base_p95']:.2f} |"
        )
    print("\ntargets: lexical recall p95 <= 10 ms at 100k; remember >= 500/s without embeddings")


if __name__ == "__main__":
    main()
