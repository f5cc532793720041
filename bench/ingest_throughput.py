"""Document ingest end to end: chunks/s and MB/min for a 5 MB text corpus (a benchmark, not a test).

    uv run python bench/ingest_throughput.py [--mb 5] [--documents 10] [--embedders native,hash]
                                             [--chunk-size 2000]

A synthetic corpus (`--mb` megabytes of varied English-like sentences in paragraphs, split
into `--documents` text documents) is submitted through `service.documents.submit` on a
fresh workspace, and the document worker (`QueueWorker` over `document_ingest`) runs until
the queue is empty: extract, chunk (`--chunk-size`, default 2,000, overlap a tenth: the
config defaults), write the chunk memories and embed them in remember_many's batches, link,
done. The clock covers submit to
the last `done`, every vector stored. With the native MiniLM embedder (loaded before the
clock starts) that is the real throughput; with the `hash` embedder it is the pipeline's own
overhead (SQLite writes, FTS, history rows, chunking, links).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.documents import DocumentRequest
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.embedding.native import NativeMiniLM
from signet_desktop.embedding.provider import EmbeddingProvider
from signet_desktop.queue.worker import WorkerSettings
from signet_desktop.service.container import BuildOptions, build_service, configured_embedder
from signet_desktop.service.documents.worker import DocumentIngest, IngestSettings, build_worker

WORDS = (
    "agent memory daemon recall chunk vector index release deploy rollback service queue "
    "worker lease retry schema migration backup project config token budget session harness "
    "transcript summary graph entity aspect attribute search ranking latency throughput "
    "cache window model embedding batch commit transaction journal checkpoint snapshot"
).split()


def corpus(total_bytes: int, documents: int, seed: int = 7) -> list[str]:
    """`documents` texts of about total_bytes/documents bytes each, every sentence distinct."""
    rng = random.Random(seed)
    size = total_bytes // documents
    texts = []
    for number in range(documents):
        parts: list[str] = []
        length = 0
        sentence = 0
        while length < size:
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 20)))
            text = f"Note {number}.{sentence}: {words.capitalize()}."
            sentence += 1
            parts.append(text + ("\n\n" if rng.random() < 0.2 else " "))
            length += len(text) + 1
        texts.append("".join(parts))
    return texts


def run(embedder: EmbeddingProvider, texts: list[str], chunk_size: int) -> tuple[float, int, int]:
    """(seconds, chunks, bytes) of ingesting `texts` on a fresh workspace."""
    overlap = chunk_size // 10
    documents = {"chunkSize": chunk_size, "chunkOverlap": overlap}
    with tempfile.TemporaryDirectory() as tmp:
        config = SignetConfig.model_validate({"memory": {"pipelineV2": {"documents": documents}}})
        service = build_service(
            WorkspacePaths.for_root(Path(tmp)), config, BuildOptions(embedder=embedder)
        )
        try:
            db = service._db  # the bench drives the worker itself, as the daemon's host would
            handler = DocumentIngest(
                db,
                service.documents,
                IngestSettings.from_config(config.memory.pipeline_v2.documents),
            )
            worker = build_worker(db, handler, settings=WorkerSettings(poll_s=0.01))
            started = time.perf_counter()
            ids = [
                service.documents.submit("default", DocumentRequest("text", content=t)).id
                for t in texts
            ]
            while worker.run_job() is not None:
                pass
            elapsed = time.perf_counter() - started
            docs = [service.documents.get("default", i) for i in ids]
            assert all(d.status == "done" for d in docs), [d.error for d in docs]
            chunks = sum(d.chunk_count for d in docs)
        finally:
            service.close()
    return elapsed, chunks, sum(len(t.encode()) for t in texts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=5.0)
    parser.add_argument("--documents", type=int, default=10)
    parser.add_argument("--embedders", default="native,hash")
    parser.add_argument("--chunk-size", type=int, default=2000, help="overlap is a tenth")
    args = parser.parse_args()
    texts = corpus(int(args.mb * 1024 * 1024), args.documents)
    print(
        f"corpus: {args.documents} documents, {sum(len(t) for t in texts):,} characters; "
        f"chunkSize {args.chunk_size}, chunkOverlap {args.chunk_size // 10}"
    )
    print()
    head = ("embedder", "chunks", "seconds", "chunks/s", "MB/min")
    print(f"| {head[0]:<16} | {head[1]:>7} | {head[2]:>8} | {head[3]:>9} | {head[4]:>7} |")
    print(f"| {'-' * 16} | {'-' * 6}: | {'-' * 7}: | {'-' * 8}: | {'-' * 6}: |")
    for name in args.embedders.split(","):
        embedder: EmbeddingProvider
        if name == "hash":
            embedder = HashEmbedder(384)
        else:
            found = configured_embedder(SignetConfig())
            assert found is not None
            embedder = found
            if isinstance(embedder, NativeMiniLM):
                embedder.load()  # the model loads before the clock starts
        seconds, chunks, size = run(embedder, texts, args.chunk_size)
        mb_per_min = size / (1024 * 1024) / seconds * 60
        print(
            f"| {name:<16} | {chunks:>7,} | {seconds:>8.2f} | {chunks / seconds:>9,.0f} | "
            f"{mb_per_min:>7.1f} |"
        )


if __name__ == "__main__":
    main()
