"""Document ingest against the embedder alone: chunks/s through the service beside the
embedder's own sentences/s on the same chunk texts (a benchmark, not a test).

    uv run python bench/ingest_throughput.py [--mb 1] [--documents 10] [--embedders native,hash]
        [--chunk-size 2000] [--baseline-dir /tmp/prev] [--profile /tmp/ingest.prof]

A synthetic corpus (`--mb` megabytes of varied English-like sentences in paragraphs, split
into `--documents` text documents) is submitted through `service.documents.submit` on a
fresh workspace, and the document worker (`QueueWorker` over `document_ingest`) runs until
the queue is empty: extract, chunk (the build's defaults; `--chunk-size` sets chunkSize with
a tenth as overlap), write the chunk memories and embed them, link, done. The clock covers
submit to the last `done`, every vector stored. Before and after it the same process embeds
the same chunk texts (that build's chunker, its defaults) with the same embedder alone, in
the calls that build's ingest makes (its batches per document); the mean of the two is the
embedder's rate, and the ratio of the ingest's rate to it is the pipeline's share: 100% would
be ingest at the embedder's limit. The embedder alone in calls of 64 texts (its bulk path,
where a build's batch sizing shows) is printed too. The same
ratio in CPU time (the process's, every thread) is beside it: on a shared machine the wall
rates move with the load, the CPU per chunk much less.
With the `hash` embedder the ingest rate is the pipeline's own ceiling.

Each build runs in its own process of its own checkout's `.venv` (`--baseline-dir`: a
`git worktree add --detach` of the build before, after `uv sync`), side by side in one run;
the load average is printed beside each row (the machine is shared). `--profile` writes
cProfile stats of this build's ingest with the first embedder named (the embedder-alone part
is not profiled).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import tempfile
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]

WORDS = (
    "agent memory daemon recall chunk vector index release deploy rollback service queue "
    "worker lease retry schema migration backup project config token budget session harness "
    "transcript summary graph entity aspect attribute search ranking latency throughput "
    "cache window model embedding batch commit transaction journal checkpoint snapshot"
).split()

CHILD = """
import cProfile, json, os, sys, tempfile, time
from pathlib import Path
from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.documents import DocumentRequest
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.queue.worker import WorkerSettings
from signet_desktop.service.container import BuildOptions, build_service, configured_embedder
from signet_desktop.service.documents.worker import DocumentIngest, IngestSettings, build_worker

args = json.loads(sys.argv[1])
texts = json.loads(Path(args["corpus"]).read_text())
documents = args["documents"]
config = SignetConfig.model_validate({"memory": {"pipelineV2": {"documents": documents}}})
if args["embedder"] == "hash":
    embedder = HashEmbedder(384)
else:
    embedder = configured_embedder(SignetConfig())
    embedder.load()  # the model loads before the clock starts
with tempfile.TemporaryDirectory() as tmp:
    paths = WorkspacePaths.for_root(Path(tmp))
    service = build_service(paths, config, BuildOptions(embedder=embedder))
    db = service._db  # the bench drives the worker itself, as the daemon's host would
    settings = IngestSettings.from_config(config.memory.pipeline_v2.documents)
    handler = DocumentIngest(db, service.documents, settings)
    worker = build_worker(db, handler, settings=WorkerSettings(poll_s=0.01))
    # the chunks this build makes, for the embedder alone (before and after the ingest)
    from signet_desktop.ingest.chunking import chunk_text
    if getattr(settings, "chunk_tokens", None):
        from signet_desktop.embedding.window import model_window
        limits = dict(tokens=settings.chunk_tokens, overlap_tokens=settings.chunk_overlap_tokens,
                      counter=model_window())
    else:
        limits = {}
    per_document = [chunk_text(t, settings.chunk_size, settings.chunk_overlap, **limits)
                    for t in texts]
    chunks = [c.text for found in per_document for c in found]
    # the embedding calls the build's ingest makes: its batches, per document
    from signet_desktop.service.documents import worker as ingest
    if hasattr(ingest, "batches"):
        calls = [[c.text for c in b] for found in per_document for b in ingest.batches(found)]
    else:
        size = ingest.CHUNK_BATCH
        calls = [[c.text for c in found[i : i + size]]
                 for found in per_document for i in range(0, len(found), size)]

    def alone(calls=calls):
        started, cpu = time.perf_counter(), time.process_time()
        for call in calls:
            embedder.embed(call)
        return time.perf_counter() - started, time.process_time() - cpu

    alone_before = alone()
    profile = cProfile.Profile() if args["profile"] else None
    load = os.getloadavg()[0]
    started, cpu = time.perf_counter(), time.process_time()
    if profile:
        profile.enable()
    ids = [
        service.documents.submit("default", DocumentRequest("text", content=t)).id
        for t in texts
    ]
    while worker.run_job() is not None:
        pass
    if profile:
        profile.disable()
        profile.dump_stats(args["profile"])
    ingest_s, ingest_cpu = time.perf_counter() - started, time.process_time() - cpu
    docs = [service.documents.get("default", i) for i in ids]
    assert all(d.status == "done" for d in docs), [d.error for d in docs]
    stored = db.reader().execute(
        "SELECT count(*) FROM memories WHERE type = 'document_chunk'").fetchone()[0]
    vectors = db.reader().execute("SELECT count(*) FROM embeddings").fetchone()[0]
    assert stored == vectors == len(chunks), (stored, vectors, len(chunks))
    service.close()
alone_after = alone()
bulk = alone([chunks[i : i + 64] for i in range(0, len(chunks), 64)])
alone_s = (alone_before[0] + alone_after[0]) / 2
alone_cpu = (alone_before[1] + alone_after[1]) / 2
tokens = 0
try:
    from signet_desktop.embedding.native import default_model_dir
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(str(default_model_dir() / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(max_length=256)
    tokens = sum(len(e.ids) for e in tok.encode_batch(chunks)) / len(chunks)
    tok.no_truncation()
    full = sum(len(e.ids) for e in tok.encode_batch(chunks)) / len(chunks)
except ImportError:
    full = 0
print(json.dumps({"chunks": len(chunks), "vectors": vectors, "ingest_s": ingest_s,
    "alone_runs": [alone_before[0], alone_after[0]], "bulk_s": bulk[0], "bulk_cpu": bulk[1],
    "calls": len(calls),
    "ingest_cpu": ingest_cpu, "alone_s": alone_s, "alone_cpu": alone_cpu, "tokens": tokens,
    "full_tokens": full, "load": load, "load_after": os.getloadavg()[0]}))
"""


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


def one_run(checkout: Path, request: dict[str, object]) -> dict[str, Any]:
    """The child in `checkout`'s own venv: its numbers."""
    python = checkout / ".venv" / "bin" / "python"
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    out = subprocess.run(
        [str(python), "-c", CHILD, json.dumps(request)],
        cwd=checkout, capture_output=True, text=True, check=False, timeout=7200, env=env,
    )  # fmt: skip
    if out.returncode != 0:
        raise SystemExit(f"{checkout}: {out.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=1.0)
    parser.add_argument("--documents", type=int, default=10)
    parser.add_argument("--embedders", default="native,hash")
    parser.add_argument("--chunk-size", type=int, default=None, help="overlap is a tenth")
    parser.add_argument("--baseline-dir", type=Path, default=None)
    parser.add_argument("--profile", type=Path, default=None, help="this build's ingest")
    args = parser.parse_args()
    texts = corpus(int(args.mb * 1024 * 1024), args.documents)
    documents: dict[str, int] = {}
    if args.chunk_size is not None:
        documents = {"chunkSize": args.chunk_size, "chunkOverlap": args.chunk_size // 10}
    builds = [("this build", REPO_ROOT)]
    if args.baseline_dir is not None:
        builds.insert(0, ("previous build", args.baseline_dir.resolve()))
    print(
        f"corpus: {args.documents} documents, {sum(len(t) for t in texts):,} characters; "
        f"chunking: {documents or 'each build default'}\n"
    )
    print(
        "| build | embedder | chunks | tokens read (of) | ingest s | ingest chunks/s "
        "| embedder alone s (before / after) | alone chunks/s | ratio "
        "| CPU ms/chunk ingest / alone | CPU ratio | alone in calls of 64: chunks/s, CPU ms/chunk "
        "| load |"
    )
    print(
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "corpus.json"
        path.write_text(json.dumps(texts))
        for embedder in args.embedders.split(","):
            for name, checkout in builds:
                first = embedder == args.embedders.split(",")[0]
                profile = args.profile if name == "this build" and first else None
                request = {
                    "corpus": str(path),
                    "embedder": embedder,
                    "documents": documents,
                    "profile": str(profile) if profile else None,
                }
                r = one_run(checkout, request)
                rate, alone = r["chunks"] / r["ingest_s"], r["chunks"] / r["alone_s"]
                print(
                    f"| {name} | {embedder} | {r['chunks']:,.0f} | {r['tokens']:.0f} "
                    f"({r['full_tokens']:.0f}) | {r['ingest_s']:.1f} | {rate:.1f} "
                    f"| {r['alone_runs'][0]:.1f} / {r['alone_runs'][1]:.1f} | {alone:.1f} "
                    f"| {rate / alone:.0%} "
                    f"| {1000 * r['ingest_cpu'] / r['chunks']:.1f} / "
                    f"{1000 * r['alone_cpu'] / r['chunks']:.1f} "
                    f"| {r['alone_cpu'] / r['ingest_cpu']:.0%} "
                    f"| {r['chunks'] / r['bulk_s']:.1f}, {1000 * r['bulk_cpu'] / r['chunks']:.1f} "
                    f"| {r['load']:.1f}–{r['load_after']:.1f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
