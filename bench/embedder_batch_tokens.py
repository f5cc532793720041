"""The native embedder's per-batch token limit: texts per CPU-second at each limit (a benchmark).

    uv run python bench/embedder_batch_tokens.py [--rounds 3] [--limits 256,512,1024,2048,4096]

`NativeMiniLM.embed` sorts a call's texts by length and runs them in batches bounded by a
count (32) and by padded tokens (`max_batch_tokens`). This runs the default graph with one
worker thread over two sets of texts at each limit, rounds interleaved: chunk-length texts
(the repository's docs chunked to the 256-token window, ~200 tokens each) and remember-length
sentences (~10-20 tokens). Texts per CPU-second (the process's CPU, every thread) is the
column to read on a shared machine; wall rates are printed beside it with the load average.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from signet_desktop.config.models import SignetConfig
from signet_desktop.embedding.native import NativeMiniLM
from signet_desktop.embedding.window import model_window
from signet_desktop.ingest.chunking import chunk_text
from signet_desktop.service.container import configured_embedder

ROOT = Path(__file__).resolve().parents[1]


def chunk_texts(count: int) -> list[str]:
    """The repository's docs in 256-token chunks (real prose, tables and code)."""
    texts = [
        (ROOT / "docs" / n).read_text(encoding="utf-8") for n in ("ARCHITECTURE.md", "RECALL.md")
    ]
    chunks = [
        c.text
        for t in texts
        for c in chunk_text(t, 2000, 200, tokens=256, overlap_tokens=32, counter=model_window())
    ]
    return chunks[:count]


def sentences(count: int) -> list[str]:
    rng = random.Random(5)
    words = (ROOT / "docs" / "GLOSSARY.md").read_text(encoding="utf-8").split()
    return [" ".join(rng.choice(words) for _ in range(rng.randint(8, 16))) for _ in range(count)]


def rate(embedder: NativeMiniLM, texts: list[str]) -> tuple[float, float]:
    """(texts per wall second, texts per CPU second) of embedding `texts` in calls of 64."""
    started, cpu = time.perf_counter(), time.process_time()
    for i in range(0, len(texts), 64):
        embedder.embed(texts[i : i + 64])
    return len(texts) / (time.perf_counter() - started), len(texts) / (time.process_time() - cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--limits", default="256,512,1024,2048,4096")
    args = parser.parse_args()
    default = configured_embedder(SignetConfig())
    assert isinstance(default, NativeMiniLM)
    graph = default.model.split("+", 1)[1] if "+" in default.model else "float32"
    sets = {"chunks (~200 tokens)": chunk_texts(128), "sentences": sentences(512)}
    limits = [int(x) for x in args.limits.split(",")]
    embedders = {n: NativeMiniLM(graph=graph, max_batch_tokens=n, workers=1) for n in limits}
    for embedder in embedders.values():
        embedder.embed(["warm up", "the model"])
    samples: dict[tuple[str, int], list[tuple[float, float]]] = {}
    loads = [os.getloadavg()[0]]
    for _ in range(args.rounds):
        for name, texts in sets.items():
            for limit, embedder in embedders.items():
                samples.setdefault((name, limit), []).append(rate(embedder, texts))
        loads.append(os.getloadavg()[0])
    print(f"graph {default.model}, one worker thread, median of {args.rounds} interleaved rounds; "
          f"load average {min(loads):.1f}-{max(loads):.1f}\n")  # fmt: skip
    print("| texts | max_batch_tokens | texts/s (wall) | texts per CPU-s |")
    print("| --- | ---: | ---: | ---: |")
    for (name, limit), runs in samples.items():
        wall = statistics.median(r[0] for r in runs)
        per_cpu = statistics.median(r[1] for r in runs)
        print(f"| {name} | {limit:,} | {wall:.1f} | {per_cpu:.1f} |")


if __name__ == "__main__":
    main()
