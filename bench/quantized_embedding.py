"""Can an int8 MiniLM meet the Speed issue's query-embedding target without losing accuracy?

    uv run python bench/quantized_embedding.py [--queries 300] [--texts 1000]

The issue (part 2) asks for a query embedding of p50 <= 4 ms / p95 <= 6 ms, and allows any
onnxruntime graph built from the shipped weights *only if* its vectors still match
sentence-transformers at cosine >= 0.999 on the fixture (tests/fixtures/minilm_reference.json,
20 sentences from one word to 256 tokens). This builds the product's graph
(`embedding/onnx_bert.py`) with each dense layer written another way and measures, per variant:

- min / mean cosine to the sentence-transformers vectors over the fixture's 20 sentences;
- single-query latency p50 / p95 (distinct short questions, one intra-op thread, as recall);
- batch throughput (sentences/s on one thread, length-sorted batches of 32).

Variants (`--variants` picks some): the graphs of `embedding/graphs.py` (float32, the W8A8
`int8-dynamic*` forms, the MatMulNBits `int8-block-*` forms; that module says what each is).
A benchmark, not a test: it prints a table and the CPU flags that decide the int8 kernels.

`--rss`: instead, each variant's memory in a fresh process (one after another): RSS after the
imports, after loading it as the product does (`NativeMiniLM`), after a batch of `--texts`
sentences and 50 queries, and the peak (VmHWM) during the load and overall.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt
from tokenizers import Tokenizer

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from corpus import queries, sentences

from signet_desktop.embedding.bert import BertWeights
from signet_desktop.embedding.graphs import GRAPHS, dense_for, lookup_for
from signet_desktop.embedding.native import default_model_dir, read_model
from signet_desktop.embedding.onnx_bert import OnnxBert

F32 = npt.NDArray[np.float32]
ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "minilm_reference.json"
WARMUP = 30


def load() -> tuple[Tokenizer, BertWeights]:
    """The shipped tokenizer and weights, read as the product reads them."""
    return read_model(default_model_dir())


def encode_texts(model: OnnxBert, tokenizer: Tokenizer, texts: list[str]) -> F32:
    """Unit vectors of `texts`, in length-sorted batches of 32 padded to their longest."""
    encodings = tokenizer.encode_batch(texts)
    order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
    out = np.zeros((len(texts), 384), dtype=np.float32)
    for start in range(0, len(order), 32):
        batch = order[start : start + 32]
        seq = max(len(encodings[i].ids) for i in batch)
        ids = np.zeros((len(batch), seq), dtype=np.int64)
        mask = np.zeros((len(batch), seq), dtype=np.int64)
        for row, i in enumerate(batch):
            ids[row, : len(encodings[i].ids)] = encodings[i].ids
            mask[row, : len(encodings[i].ids)] = 1
        out[batch] = model.encode(ids, mask)
    return out


def measure(
    name: str,
    tokenizer: Tokenizer,
    weights: BertWeights,
    query_count: int,
    text_count: int,
    neighbours: dict[str, npt.NDArray[np.intp]],
) -> dict[str, float]:
    """Fixture cosines, single-query latency and batch throughput of one variant; and, as a
    retrieval sanity check, how many of each query's 10 nearest corpus sentences (the queries
    embedded alone, the sentences in batches, as recall and remember do) are float32's
    (`neighbours` keeps float32's; the first variant measured should be float32)."""
    model = OnnxBert(weights, dense_for(name), lookup_for(name))
    reference = json.loads(FIXTURE.read_text(encoding="utf-8"))
    expected = np.array(reference["vectors"], dtype=np.float32)
    got = np.vstack([encode_texts(model, tokenizer, [s]) for s in reference["sentences"]])
    cosines = (got * expected).sum(axis=1) / np.linalg.norm(expected, axis=1)
    latencies, cpu, asked = [], [], []
    for i, text in enumerate(queries(query_count + WARMUP, seed=23)):
        started, cpu_started = time.perf_counter(), time.thread_time()
        ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
        vector = model.encode(ids, np.ones_like(ids))
        if i >= WARMUP:
            latencies.append((time.perf_counter() - started) * 1000)
            cpu.append((time.thread_time() - cpu_started) * 1000)  # one intra-op thread: ours
            asked.append(vector[0])
    latencies.sort()
    cpu.sort()
    texts = sentences(text_count)
    started = time.perf_counter()
    corpus = encode_texts(model, tokenizer, texts)
    rate = len(texts) / (time.perf_counter() - started)
    top = np.argsort(-(np.vstack(asked) @ corpus.T), axis=1)[:, :10]
    exact = next(iter(neighbours.values()), top)  # the first variant's
    neighbours.setdefault(name, top)
    overlap = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(top, exact, strict=True)])
    return {
        "overlap": float(overlap),
        "min_cos": float(cosines.min()),
        "mean_cos": float(cosines.mean()),
        "worst": float(np.argmin(cosines)),
        "p50": statistics.median(latencies),
        "p95": latencies[int(len(latencies) * 0.95)],
        "cpu50": statistics.median(cpu),
        "cpu95": cpu[int(len(cpu) * 0.95)],
        "rate": rate,
    }


def _status() -> dict[str, float]:
    """VmRSS and VmHWM (peak) of this process, MiB."""
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0]) / 1024
    return out


def rss_child(variant: str, text_count: int) -> dict[str, float]:
    """In a fresh process: RSS after imports, after loading `variant` as the product does
    (`NativeMiniLM`, 2 batch workers), after a batch of `text_count` sentences and 50 queries;
    the peak (VmHWM) over the load and over everything."""
    import onnxruntime  # noqa: F401  (imported before the baseline, as the app's warm-up does)

    from signet_desktop.embedding.heap import release_free_heap
    from signet_desktop.embedding.native import NativeMiniLM

    texts, asked = sentences(text_count), queries(50, seed=23)
    base = _status()["VmRSS"]
    embedder = NativeMiniLM(graph=variant)
    started = time.perf_counter()
    embedder.load()
    load_s = time.perf_counter() - started
    loaded = _status()
    embedder.embed(texts)
    for text in asked:
        embedder.embed([text])
    time.sleep(1.0)
    after = _status()
    release_free_heap()  # what glibc keeps of the batches' freed scratch, handed back
    return {
        "trimmed": _status()["VmRSS"],
        "base": base,
        "loaded": loaded["VmRSS"],
        "load_peak": loaded["VmHWM"],
        "after": after["VmRSS"],
        "peak": after["VmHWM"],
        "load_s": load_s,
    }


def print_rss(variants: list[str], text_count: int) -> None:
    """One fresh process per variant, one after another."""
    print(f"| variant | RSS after imports MiB | loaded | after {text_count} sentences + 50 "
          "queries | then trimmed (malloc_trim) | embedder's share (loaded - imports) "
          "| peak during load | peak overall | load s |")  # fmt: skip
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in variants:
        command = [sys.executable, __file__, "--rss-child", name, "--texts", str(text_count)]
        out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
        r = json.loads(out.strip().splitlines()[-1])
        print(
            f"| {name} | {r['base']:.0f} | {r['loaded']:.0f} | {r['after']:.0f} "
            f"| {r['trimmed']:.0f} | {r['loaded'] - r['base']:.0f} | {r['load_peak']:.0f} "
            f"| {r['peak']:.0f} "
            f"| {r['load_s']:.2f} |",
            flush=True,
        )


def cpu_flags() -> str:
    """The CPU features that pick onnxruntime's int8 kernels (Linux: /proc/cpuinfo)."""
    try:
        flags = next(
            line for line in Path("/proc/cpuinfo").read_text().splitlines() if "flags" in line
        ).split()
    except (OSError, StopIteration):
        return "unknown"
    wanted = ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8")
    return ", ".join(f for f in wanted if f in flags) or "none of " + ", ".join(wanted)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--texts", type=int, default=1000)
    parser.add_argument("--variants", default=",".join(GRAPHS), help="comma-separated")
    parser.add_argument("--rss", action="store_true", help="memory of each variant instead")
    parser.add_argument("--rss-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rss_child:
        print(json.dumps(rss_child(args.rss_child, args.texts)))
        return
    if args.rss:
        print_rss(args.variants.split(","), args.texts)
        return
    tokenizer, weights = load()
    print(f"{os.cpu_count()} CPUs ({cpu_flags()}), load average {os.getloadavg()[0]:.2f}")
    print("fixture: 20 sentences, target min cosine >= 0.999; latency target p50 4 / p95 6 ms\n")
    print("| variant | min cosine | mean cosine | worst sentence | query p50 ms | p95 ms "
          "| query CPU p50 ms | CPU p95 ms "
          "| batch sentences/s (1 thread) | top-10 shared with the first variant |")  # fmt: skip
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    neighbours: dict[str, npt.NDArray[np.intp]] = {}
    for name in args.variants.split(","):
        r = measure(name, tokenizer, weights, args.queries, args.texts, neighbours)
        print(
            f"| {name} | {r['min_cos']:.5f} | {r['mean_cos']:.5f} | {int(r['worst'])} "
            f"| {r['p50']:.2f} | {r['p95']:.2f} | {r['cpu50']:.2f} | {r['cpu95']:.2f} "
            f"| {r['rate']:.0f} | {r['overlap']:.3f} |",
            flush=True,
        )
    print(f"\nload average {os.getloadavg()[0]:.2f} at end")


if __name__ == "__main__":
    main()
