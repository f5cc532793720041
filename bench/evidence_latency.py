"""What evidence stages cost per recall at 100k memories, side by side.

Run: uv run python bench/evidence_latency.py [--size 100000] [--queries 300] [--rounds 2]
         [--stage NAME ...]   (the stages measured; default `time` and `preference`)

`bench/recall_latency.py`'s store (Zipf corpus in sessions of 40, 5,000 real MiniLM vectors
and blends of them, written through `insert_memory`, so every row has its cues) and one
service. Every query is recalled through the facade (limit 10, query embedding included) twice
in a row, in alternating order: with every default stage ("this build") and with every default
stage but the measured ones (`--stage`; default `time` and `preference`) — the recall path of
the build before (nothing else in it changed). Two query sets: the corpus' own questions (some
hold a time: "... since March?"), and the same questions asked in the first person about a
time ("when did I ... last week?"), so the time and preference stages read the cues of their
top 50 on every query (the neighbours stage reads its top 5's session turns on every query).
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from corpus import zipf_queries, zipf_sentences
from recall_latency import corpus_vectors, embedded_pool, fill, percentile

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.recall import RecallQuery
from signet_desktop.embedding.native import NativeMiniLM
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService

LIMIT = 10
NEW_STAGES = ("time", "preference")  # the default `--stage`s


def timed(
    service: SignetService, text: str, stages: tuple[str, ...] | None
) -> tuple[float, dict[str, float]]:
    started = time.perf_counter()
    result = service.recall.search(RecallQuery(query=text, limit=LIMIT, stages=stages))
    elapsed = (time.perf_counter() - started) * 1000
    return elapsed, {t.name: t.duration_ms for t in result.timings}


def compare(
    service: SignetService, qs: list[str], rounds: int, new: tuple[str, ...]
) -> dict[str, list[float]]:
    engine = service.recall._engine  # the registered stage names, read underneath the facade
    before = tuple(name for name in engine.stage_names if name not in new)
    out: dict[str, list[float]] = {"before": [], "this build": [], **{n: [] for n in new}}
    for round_ in range(rounds):
        for i, q in enumerate(qs):
            order = [("this build", None), ("before", before)]
            if (i + round_) % 2:
                order.reverse()
            for name, stages in order:
                ms, stage_ms = timed(service, q, stages)
                out[name].append(ms)
                if stages is None:
                    for stage in new:
                        out[stage].append(stage_ms.get(stage, 0.0))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--stage", action="append", help="a stage to measure (repeatable)")
    args = parser.parse_args()
    new = tuple(args.stage or NEW_STAGES)
    embedder = NativeMiniLM()
    texts = zipf_sentences(args.size)
    plain = zipf_queries(texts, args.queries)
    personal = [f"when did I {q.rstrip('?')} last week?" for q in plain]
    pool, _ = embedded_pool(embedder, "zipf", texts, 5000)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        fill(root, texts, corpus_vectors(pool, args.size), embedder.model)
        print(f"{args.size:,} memories filled in {time.perf_counter() - started:.0f} s")
        service = build_service(
            WorkspacePaths.for_root(root), SignetConfig(), BuildOptions(embedder=embedder)
        )
        for q in plain[:20]:
            timed(service, q, None)  # warm caches, model and threads
        heads = "".join(f" {stage} stage p50 / p95 |" for stage in new)
        print(f"\n| queries | recall | p50 ms | p95 ms |{heads}")
        print("| --- | --- | ---: | ---: |" + " ---: |" * len(new))
        for label, qs in (("corpus questions", plain), ("first person + 'last week'", personal)):
            r = compare(service, qs, args.rounds, new)
            for name in ("before", "this build"):
                cells = f"{statistics.median(r[name]):.1f} | {percentile(r[name], 95):.1f}"
                extra = " |" + " |" * len(new)
                if name == "this build":
                    extra = " | " + "".join(
                        f"{statistics.median(r[s]):.2f} / {percentile(r[s], 95):.2f} | "
                        for s in new
                    )
                print(f"| {label} | {name} | {cells}{extra.rstrip()}")
            diff = percentile(r["this build"], 95) - percentile(r["before"], 95)
            print(f"| {label} | p95 difference | {diff:+.1f} ms |" + " |" * (len(new) + 1))
        service.close()


if __name__ == "__main__":
    main()
