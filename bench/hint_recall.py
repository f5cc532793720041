"""What the `hint` recall channel costs: recall with and without it, no hints and 5 per memory.

Run: uv run python bench/hint_recall.py [--sizes 10000] [--queries 200]
Synthetic Zipf corpus (bench/corpus.py); each memory gets 5 hints of 5 words drawn from its
own text (what an LLM's questions share with the memory). Lexical-only recall (the facade
engine with one channel) against lexical + hint, ms per `recall` call, then `hint_search`
alone. No LLM is involved: hints are written through `storage/hints.py: insert_hints`.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import zipf_queries, zipf_sentences

from signet_desktop.domain.memory import Actor
from signet_desktop.domain.recall import RecallFilters, RecallQuery
from signet_desktop.recall.engine import RecallEngine
from signet_desktop.recall.hints import HintChannel, hint_search
from signet_desktop.recall.lexical import LexicalChannel
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.storage import hints as hint_rows
from signet_desktop.storage.database import Database, open_database

BATCH = 2000
HINTS_PER_MEMORY = 5


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def timed(engine: RecallEngine, queries: list[str]) -> tuple[float, float]:
    engine.recall(RecallQuery(query=queries[0]))  # warm
    samples = []
    for query in queries:
        started = time.perf_counter()
        engine.recall(RecallQuery(query=query))
        samples.append((time.perf_counter() - started) * 1000)
    return percentile(samples, 50), percentile(samples, 95)


def add_hints(db: Database, rng: random.Random) -> int:
    rows = db.reader().execute("SELECT id, content FROM memories").fetchall()
    written = 0
    for start in range(0, len(rows), BATCH):
        with db.write() as conn:
            for row in rows[start : start + BATCH]:
                words = row["content"].split()
                hints = [" ".join(rng.choices(words, k=5)) for _ in range(HINTS_PER_MEMORY)]
                written += hint_rows.insert_hints(conn, "default", row["id"], hints)
    return written


def run(size: int, query_count: int) -> None:
    rng = random.Random(17)
    with tempfile.TemporaryDirectory() as tmp:
        db = open_database(Path(tmp) / "memories.db")
        texts = zipf_sentences(size)
        service = MemoryService(db)
        for start in range(0, size, BATCH):
            batch = [RememberRequest(content=t) for t in texts[start : start + BATCH]]
            service.remember_many(batch, Actor())
        queries = zipf_queries(texts, query_count)
        lexical = RecallEngine(db, channels=(LexicalChannel(),), weights={"lexical": 1.0})
        both = RecallEngine(
            db,
            channels=(LexicalChannel(), HintChannel()),
            weights={"lexical": 1.0, "hint": 0.3},
        )
        for label in ("no hints", f"{HINTS_PER_MEMORY} hints a memory"):
            if label != "no hints":
                add_hints(db, rng)
            lp50, lp95 = timed(lexical, queries)
            hp50, hp95 = timed(both, queries)
            started = time.perf_counter()
            for query in queries:
                hint_search(db.reader(), query, "default", RecallFilters())
            alone = (time.perf_counter() - started) * 1000 / len(queries)
            print(
                f"| {size:,} | {label} | {lp50:.1f} | {lp95:.1f} | {hp50:.1f} | {hp95:.1f} "
                f"| {alone:.2f} |"
            )
        lexical.close()
        both.close()
        db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="10000")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    print("| memories | hints | lexical p50 | p95 | lexical+hint p50 | p95 | hint_search ms |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    for size in (int(s) for s in args.sizes.split(",")):
        run(size, args.queries)


if __name__ == "__main__":
    main()
