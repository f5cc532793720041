"""Recall with and without the transcript channel at 100k memories + 200k transcript turns.

Run: uv run python bench/transcript_recall.py [--memories 100000] [--turns 200000]
     [--queries 300] [--pool 1000]

The memories are `bench/recall_latency.py`'s corpus and vectors (Zipf text, the first `--pool`
embedded with the native MiniLM, the rest blends); the turns are a second Zipf corpus (another
seed) captured as sessions of 80 turns over four projects, written through the same storage
calls capture uses (`session_transcripts` row, then `transcript_turns` in its transaction).

Every timing is a full `SignetService.recall.search` call, limit 10, hybrid with context.
The two configurations run interleaved query by query (A, B, A, B ...) so the load of a shared
machine falls on both alike:

- "without": `channels=("lexical", "semantic")` — recall as the build before (memories only);
- "with": the default (every channel; the transcript channel fills the slots memories left).

Also: "transcript only" (`channels=("transcript",)`: the channel always searches, 10 slots) and
"with, min_score 0.5" (memories rarely fill the limit, so the channel runs on most queries);
how often the channel ran, and its stage median. Then the prompt-submit hook in-process
(`HookService.user_prompt_submit`, default hook settings, each prompt its own session in
project /src/shop), and the turn evidence it asks for alone (`transcript_hits` with the hook's
scope), so the hook's share of the transcript channel is known.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

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
from signet_desktop.recall.transcript_channel import TurnScope
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from signet_desktop.service.hooks.service import HookContext
from signet_desktop.storage import transcript_turns as turn_rows
from signet_desktop.storage import transcripts as rows
from signet_desktop.storage.database import open_database
from signet_desktop.storage.transcript_turns import TurnRow

LIMIT = 10
SESSION_TURNS = 80
PROJECTS = ("/src/shop", "/src/billing", "/src/web", "/src/ops")
MEMORY_CHANNELS = ("lexical", "semantic")


def fill_turns(root: Path, texts: list[str]) -> None:
    """Sessions of SESSION_TURNS turns, each session's row and turns in one transaction."""
    db = open_database(root / "memory" / "memories.db")
    for start in range(0, len(texts), SESSION_TURNS * 25):
        with db.write() as conn:
            for first in range(start, min(len(texts), start + SESSION_TURNS * 25), SESSION_TURNS):
                key = f"bench-turns-{first // SESSION_TURNS}"
                chunk = texts[first : first + SESSION_TURNS]
                rows.save_transcript(
                    conn,
                    agent_id="default",
                    session_key=key,
                    harness="claude-code",
                    project=PROJECTS[(first // SESSION_TURNS) % len(PROJECTS)],
                    content="\n\n".join(chunk),
                    turn_count=len(chunk),
                    content_hash=key,
                    complete=True,
                )
                turn_rows.index_turns(
                    conn,
                    "default",
                    key,
                    [
                        TurnRow(i, ("user", "assistant")[i % 2], text, "2026-11-30T10:00:00Z")
                        for i, text in enumerate(chunk)
                    ],
                )
    db.close()


def timed(service: SignetService, query: RecallQuery) -> tuple[float, int, float]:
    """(ms, transcript hits, transcript stage ms)."""
    started = time.perf_counter()
    result = service.recall.search(query)
    took = (time.perf_counter() - started) * 1000
    stage = sum(s.duration_ms for s in result.timings if s.name == "transcript")
    return took, len(result.turns), stage


def interleaved(
    service: SignetService, qs: list[str], configs: dict[str, dict[str, object]]
) -> dict[str, list[tuple[float, int, float]]]:
    out: dict[str, list[tuple[float, int, float]]] = {name: [] for name in configs}
    for q in qs:
        for name, extra in configs.items():
            query = RecallQuery(query=q, limit=LIMIT, **extra)  # type: ignore[arg-type]
            out[name].append(timed(service, query))
    return out


def hook_timings(service: SignetService, qs: list[str]) -> tuple[list[float], list[float]]:
    """The prompt-submit hook per prompt, and the turn evidence it asks for on its own."""
    hook_ms: list[float] = []
    evidence_ms: list[float] = []
    for i, q in enumerate(qs):
        ctx = HookContext("default", "claude-code", f"bench-hook-{i}", "/src/shop")
        started = time.perf_counter()
        service.hooks.user_prompt_submit(ctx, q)
        hook_ms.append((time.perf_counter() - started) * 1000)
        scope = TurnScope("default", "/src/shop", "scoped", exclude_session=ctx.session_key)
        started = time.perf_counter()
        service.recall.transcript_hits(q, scope, 10, min_score=0.45)
        evidence_ms.append((time.perf_counter() - started) * 1000)
    return hook_ms, evidence_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--turns", type=int, default=200_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--pool", type=int, default=1000)
    args = parser.parse_args()
    embedder = NativeMiniLM()
    embedder.load()
    memory_texts = zipf_sentences(args.memories)
    turn_texts = zipf_sentences(args.turns, seed=17)
    # Half the queries about a memory, half about a turn.
    qs = zipf_queries(memory_texts, args.queries // 2) + zipf_queries(
        turn_texts, args.queries - args.queries // 2, seed=19
    )
    pool, _ = embedded_pool(embedder, "zipf", memory_texts, args.pool)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        fill(root, memory_texts, corpus_vectors(pool, args.memories), embedder.model)
        memories_s = time.perf_counter() - started
        started = time.perf_counter()
        fill_turns(root, turn_texts)
        turns_s = time.perf_counter() - started
        service = build_service(
            WorkspacePaths.for_root(root), SignetConfig(), BuildOptions(embedder=embedder)
        )
        configs: dict[str, dict[str, object]] = {
            "without (memories only, as before)": {"channels": MEMORY_CHANNELS},
            "with (default: + transcript)": {},
            "with, min_score 0.5": {"min_score": 0.5},
            "without, min_score 0.5": {"channels": MEMORY_CHANNELS, "min_score": 0.5},
            "transcript only": {"channels": ("transcript",)},
        }
        interleaved(service, qs[:30], configs)  # warm caches, model, threads
        results = interleaved(service, qs, configs)
        hook_ms, evidence_ms = hook_timings(service, qs)
        service.close()
    print(
        f"\n{args.memories:,} memories + {args.turns:,} turns; {len(qs)} queries (half about "
        f"a memory, half about a turn); limit {LIMIT}; ms per recall call, interleaved"
    )
    print(f"fill: memories {memories_s:.0f} s, turns {turns_s:.0f} s\n")
    print("| configuration | p50 | p95 | p99 | channel ran | turn hits/query | stage p50 |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, samples in results.items():
        ms = [s[0] for s in samples]
        ran = [s for s in samples if s[2] > 0]
        stage = statistics.median([s[2] for s in ran]) if ran else 0.0
        print(
            f"| {name} | {statistics.median(ms):.1f} | {percentile(ms, 95):.1f} | "
            f"{percentile(ms, 99):.1f} | {len(ran)}/{len(samples)} | "
            f"{statistics.mean(s[1] for s in samples):.1f} | {stage:.2f} |"
        )
    print("\nprompt-submit hook, in-process (ms):\n")
    print("| what | p50 | p95 |")
    print("| --- | ---: | ---: |")
    for name, ms in (("user_prompt_submit (memories + turns)", hook_ms),
                     ("its turn evidence alone (transcript_hits)", evidence_ms)):  # fmt: skip
        print(f"| {name} | {statistics.median(ms):.1f} | {percentile(ms, 95):.1f} |")
    print("\ntarget: p95 with the transcript channel within 5 ms of p95 without it")


if __name__ == "__main__":
    main()
