"""Offline replays of the `rerank` stage on LoCoMo: capture once, replay variants in seconds.

    uv run python bench/locomo_rerank_replay.py capture OUT.pkl   # ~1 min: ingest + recall
    uv run python bench/locomo_rerank_replay.py replay OUT.pkl    # seconds
    uv run python bench/locomo_rerank_replay.py latency N         # the stage's ms, N conversations

`capture` runs `bench/locomo.py`'s protocol (same entities, same remembered turns) and, for
every question, the default recall (graph-aware hybrid + rerank) with the rerank stage's
input recorded: the fused candidates (ids, scores, channels) exactly as the stage saw them,
the query's vector and each query token's IDF; plus each conversation's memories (text,
session order, stored vector) and the engine's own top 10. The file stays outside the
project (it holds the dataset's text).

`replay` feeds the recorded input to the stage's own code (`PassageReranker._blend` and the
module's helpers, then the engine's `final_order`), with no database: each variant is a
`PassageReranker` built with other arguments. The baseline reproduces the engine's top 10.
Memory ids are random per capture and fusion breaks exact score ties by id, so two captures
of the same build can differ by a tie or two (measured: MRR 0.5648 vs 0.5642 at width 1).

`latency` times the stage (its own `timings` entry) at width 1 and at the default,
alternating question by question in one process.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import pickle
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from locomo import (  # type: ignore[import-not-found]
    BENCH_CONFIG,
    CATEGORY_NAMES,
    DEFAULT_DATA,
    DEFAULT_STAGES,
    LIMIT,
    RERANK,
    QueryCache,
    conversation_entities,
    ingest,
    questions,
    seed_entities,
)

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.recall import RecallQuery
from signet_desktop.recall import rerank
from signet_desktop.recall.engine import DEFAULT_CANDIDATE_DEPTH
from signet_desktop.recall.flat_share import final_order
from signet_desktop.recall.fusion import FusedHit
from signet_desktop.recall.lexical import POSTINGS_BUDGET, fts_rows, idf
from signet_desktop.recall.passages import Window
from signet_desktop.recall.sanitize import query_tokens
from signet_desktop.recall.term_counts import count_documents
from signet_desktop.service.container import BuildOptions, build_service, configured_embedder


def _unit(vector: Any) -> Any:
    """The query vector as the stage uses it (unit length)."""
    v = np.asarray(vector, dtype=np.float32)
    return v / np.linalg.norm(v)


class _Spy:
    """The rerank stage, recording its input (the fused candidates and the keyword text)."""

    def __init__(self, stage: Any) -> None:
        self.name = stage.name
        self._stage = stage
        self.seen: list[tuple[list[FusedHit], str]] = []

    def apply(self, conn: Any, request: Any, hits: list[FusedHit], clock: Any) -> Any:
        self.seen.append((list(hits), request.keyword_text))
        return self._stage.apply(conn, request, hits, clock)


def _plain(hit: FusedHit) -> tuple[Any, ...]:
    """A picklable FusedHit (its channels are a read-only mapping proxy)."""
    return (hit.memory_id, hit.score, hit.source, dict(hit.channels), hit.context,
            hit.adjustments)  # fmt: skip


def capture(out: Path, data: Path = DEFAULT_DATA) -> None:
    import json

    samples = json.loads(data.read_text(encoding="utf-8"))
    native = configured_embedder(SignetConfig())
    assert native is not None
    embedder = QueryCache(native)
    config = SignetConfig.model_validate(BENCH_CONFIG)
    conversations = []
    for sample in samples:
        with tempfile.TemporaryDirectory() as tmp:
            service = build_service(
                WorkspacePaths.for_root(Path(tmp)), config, BuildOptions(embedder=embedder)
            )
            seed_entities(service, conversation_entities(sample["conversation"]))
            dia_of = ingest(service, sample)
            engine = service.recall._engine
            spy = _Spy(next(s for s in engine._stages if s.name == RERANK))
            engine._stages = tuple(spy if s.name == RERANK else s for s in engine._stages)
            conn = service._db.reader()
            rows = fts_rows(conn)
            default = tuple(n for n in engine.stage_names if n in DEFAULT_STAGES or n == RERANK)
            asked = []
            for question in questions(sample):
                spy.seen.clear()
                result = service.recall.search(
                    RecallQuery(query=question.text, limit=LIMIT, min_score=0.0,
                                stages=default)
                )  # fmt: skip
                hits, keyword_text = spy.seen[0]
                idfs = {
                    t: idf(n, max(rows, n))
                    for t in query_tokens(keyword_text)
                    for n in [count_documents(conn, t, POSTINGS_BUDGET + 1)]
                }
                asked.append({
                    "text": question.text, "category": question.category,
                    "evidence": sorted(question.evidence), "keyword_text": keyword_text,
                    "vector": _unit(embedder.embed([question.text])[0]),
                    "hits": [_plain(h) for h in hits], "idf": idfs,
                    "engine_top": [dia_of[h.memory.id] for h in result.hits],
                })  # fmt: skip
            memories = {}
            for row in conn.execute(
                "SELECT id, content, who, session_id, seq FROM memories WHERE is_deleted = 0"
            ):
                memories[str(row["id"])] = {
                    "content": row["content"], "who": row["who"],
                    "session": row["session_id"], "seq": row["seq"], "dia": dia_of[row["id"]],
                }  # fmt: skip
            for row in conn.execute(
                "SELECT source_id, vector FROM embeddings WHERE source_type = 'memory'"
            ):
                vector = np.frombuffer(bytes(row["vector"]), dtype=np.float32)
                memories[str(row["source_id"])]["vector"] = vector
            stage = spy._stage
            options = {"width": stage.width, "outer_weight": stage.outer_weight}
            conversations.append({"memories": memories, "questions": asked, "stage": options})
            service.close()
        print(f"{sample['sample_id']}: {len(asked)} questions", flush=True)
    out.write_bytes(pickle.dumps(conversations))


def stage_latency(data: Path = DEFAULT_DATA, conversations: int = 2) -> None:
    """The rerank stage's own time per recall (its `timings` entry), width 1 vs the default.

    Same process, same workspace, the two stages alternating question by question (each
    question recalled once per stage and order, so neither always runs on a warm cache).
    """
    import json

    samples = json.loads(data.read_text(encoding="utf-8"))[:conversations]
    native = configured_embedder(SignetConfig())
    assert native is not None
    embedder = QueryCache(native)
    config = SignetConfig.model_validate(BENCH_CONFIG)
    timings: dict[str, list[float]] = {"width 1": [], "default": []}
    for sample in samples:
        with tempfile.TemporaryDirectory() as tmp:
            service = build_service(
                WorkspacePaths.for_root(Path(tmp)), config, BuildOptions(embedder=embedder)
            )
            seed_entities(service, conversation_entities(sample["conversation"]))
            ingest(service, sample)
            engine = service.recall._engine
            default = next(s for s in engine._stages if s.name == RERANK)
            narrow = rerank.PassageReranker(default._vectors, width=1)
            stages = {"width 1": narrow, "default": default}
            for i, question in enumerate(questions(sample)):
                embedder.embed([question.text])
                order = list(stages) if i % 2 else list(reversed(stages))
                for name in [*order, *reversed(order)]:
                    engine._stages = (stages[name],)
                    result = service.recall.search(
                        RecallQuery(query=question.text, limit=LIMIT, min_score=0.0,
                                    stages=(RERANK,))
                    )  # fmt: skip
                    ms = next(t.duration_ms for t in result.timings if t.name == RERANK)
                    timings[name].append(ms)
            narrow.close()
            service.close()
    for name, values in timings.items():
        values.sort()
        p50, p95 = values[len(values) // 2], values[int(len(values) * 0.95)]
        print(f"rerank stage, {name}: p50 {p50:.2f} ms, p95 {p95:.2f} ms ({len(values)} recalls)")


@dataclass(frozen=True, slots=True)
class Corpus:
    """One conversation's memories with their session order (for passages of any width)."""

    memories: dict[str, dict[str, Any]]
    order: dict[str, list[str]]  # session -> memory ids by seq

    @staticmethod
    def of(memories: dict[str, dict[str, Any]]) -> Corpus:
        order: dict[str, list[str]] = {}
        for memory_id, m in sorted(memories.items(), key=lambda kv: kv[1]["seq"]):
            order.setdefault(m["session"], []).append(memory_id)
        return Corpus(memories, order)

    def window(self, memory_id: str, width: int) -> Window:
        """What `recall.passages.session_windows` finds: the session's memories by distance."""
        ids = self.order[self.memories[memory_id]["session"]]
        at = ids.index(memory_id)
        rings = []
        for step in range(1, width + 1):
            ring = tuple(ids[i] for i in (at - step, at + step) if 0 <= i < len(ids))
            if ring:
                rings.append(ring)
        return Window(memory_id, tuple(rings))


Ranker = Callable[[Corpus, dict[str, Any]], list[FusedHit]]


def stage_ranker(reranker: rerank.PassageReranker) -> Ranker:
    """The stage's own blend over the recorded input (what `PassageReranker.apply` does)."""

    def rank(corpus: Corpus, question: dict[str, Any]) -> list[FusedHit]:
        hits: list[FusedHit] = question["hits"]
        head, tail = hits[: reranker.top_n], hits[reranker.top_n :]
        return [*rerank_head(reranker, corpus, question, head), *tail]

    return rank


def rerank_head(
    reranker: rerank.PassageReranker,
    corpus: Corpus,
    question: dict[str, Any],
    head: Sequence[FusedHit],
) -> list[FusedHit]:
    windows = {h.memory_id: corpus.window(h.memory_id, reranker.width) for h in head}
    passage_ids = list(dict.fromkeys(i for w in windows.values() for i in w.ids))
    weights: dict[str, float] = {}
    for term in query_tokens(question["keyword_text"]):
        if term in rerank.QUESTION_SCAFFOLD:
            continue
        stem = rerank._stem(term)
        weights[stem] = max(question["idf"][term], weights.get(stem, 0.0))
    holds = {i: rerank._stems_held(corpus.memories[i]["content"], weights) for i in passage_ids}
    held = rerank._Coverage(weights, holds)
    stored = {
        i: corpus.memories[i]["vector"] for i in passage_ids if "vector" in corpus.memories[i]
    }
    vectors = rerank._Vectors(question["vector"], stored, None)
    blends = [reranker._blend(h, windows[h.memory_id], held, vectors) for h in head]
    return rerank._reordered(head, blends)


def top(corpus: Corpus, hits: list[FusedHit]) -> list[str]:
    cut = final_order(hits, limit=LIMIT, top_k=DEFAULT_CANDIDATE_DEPTH, share=0.4)
    return [corpus.memories[h.memory_id]["dia"] for h in cut[:LIMIT]]


def score(conversations: list[dict[str, Any]], ranker: Ranker) -> dict[Any, tuple[float, float]]:
    """recall@10 and MRR overall (key "all") and per category."""
    sums: dict[Any, list[float]] = {}
    for conversation in conversations:
        corpus = conversation["corpus"]
        for question in conversation["questions"]:
            ranked = top(corpus, ranker(corpus, question))
            evidence = set(question["evidence"])
            recall = len(evidence & set(ranked)) / len(evidence)
            first = next((i for i, d in enumerate(ranked) if d in evidence), None)
            mrr = 0.0 if first is None else 1 / (first + 1)
            for key in ("all", question["category"]):
                acc = sums.setdefault(key, [0, 0.0, 0.0])
                acc[0] += 1
                acc[1] += recall
                acc[2] += mrr
    return {k: (v[1] / v[0], v[2] / v[0]) for k, v in sums.items()}


def load(path: Path) -> list[dict[str, Any]]:
    conversations = pickle.loads(path.read_bytes())
    for conversation in conversations:
        conversation["corpus"] = Corpus.of(conversation["memories"])
        for question in conversation["questions"]:
            question["hits"] = [FusedHit(*h) for h in question["hits"]]
    return conversations


def row(name: str, result: dict[Any, tuple[float, float]]) -> str:
    cells = [f"{result['all'][0]:.4f} / {result['all'][1]:.4f}"]
    cells += [f"{result[c][0]:.3f} / {result[c][1]:.3f}" for c in CATEGORY_NAMES]
    return f"| {name} | " + " | ".join(cells) + " |"


def header() -> str:
    names = " | ".join(f"{c} {n}" for c, n in CATEGORY_NAMES.items())
    return f"| variant | all | {names} |\n| --- |" + " ---: |" * (1 + len(CATEGORY_NAMES))


def check_baseline(conversations: list[dict[str, Any]]) -> None:
    """The replay of the stage the capture ran must give the engine's own top 10."""
    options = conversations[0].get("stage", {"width": 1})  # captures before width: 1
    ranker = stage_ranker(rerank.PassageReranker(_NoVectors(), **options))
    same = total = 0
    for conversation in conversations:
        corpus = conversation["corpus"]
        for question in conversation["questions"]:
            total += 1
            same += top(corpus, ranker(corpus, question)) == question["engine_top"]
    print(f"replay of the captured stage ({options}) equals the engine's top 10 "
          f"on {same} of {total} questions")  # fmt: skip


class _NoVectors:
    """The replay never asks for vectors through this (they are recorded)."""

    def generation(self, conn: Any) -> str:
        raise AssertionError

    def embed_query(self, text: str) -> Any:
        raise AssertionError


# (name, PassageReranker arguments): the build before, today's default, the surface around it.
VARIANTS: list[tuple[str, dict[str, Any]]] = [
    ("width 1 (the build before)", {"width": 1}),
    ("width 2, outer 0.5 (default)", {}),
    *((f"width 2, outer {w}", {"outer_weight": w}) for w in (0.0, 0.25, 0.75, 1.0)),
    ("width 3, outer 0.5", {"width": 3}),
    *(
        (f"width 2, outer 0.5, coverage {c}, vector {v}",
         {"coverage_weight": c, "vector_weight": v})
        for c in (0.25, 0.3, 0.35) for v in (0.05, 0.1, 0.15) if (c, v) != (0.3, 0.1)
    ),
    *((f"width 2, outer 0.5, top {n}", {"top_n": n}) for n in (15, 25, 30)),
]  # fmt: skip


def main() -> int:
    command, path = sys.argv[1], Path(sys.argv[2])  # latency: N, not a path
    if command == "capture":
        capture(path)
        return 0
    if command == "latency":
        stage_latency(conversations=int(sys.argv[2]))
        return 0
    conversations = load(path)
    check_baseline(conversations)
    print(header())
    for name, options in VARIANTS:
        reranker = rerank.PassageReranker(_NoVectors(), **options)
        print(row(name, score(conversations, stage_ranker(reranker))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
