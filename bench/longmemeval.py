"""LongMemEval-S dev72 retrieval: the second dev set beside LoCoMo (does a change carry over?).

Run: uv run python bench/longmemeval.py [--data PATH] [--questions N] [--embedder-variant GRAPH]

Protocol (../shared/data/README.md, retrieval only, no LLM): one fresh workspace per question;
every turn of every haystack session is remembered through the public facade (one
`remember_many`, as an importer would) as "<role>: <content>", with its session id and the
session's date as createdAt; identical texts dedupe into one memory, which counts as a hit for
every gold turn with that text. The question is then recalled (limit 10, min_score 0, every
default channel and stage, asked on the item's `question_date`: `RecallQuery.as_of`) and
scored at turn level (gold: turns with `has_answer`): recall@k
= share of gold turns in the top k, MRR = 1 / rank of the first gold turn; and at session
level (gold: `answer_session_ids`): recall@10 = share of gold sessions with a turn in the top
10. Questions without a gold turn count at session level only. Embedder: the native
all-MiniLM-L6-v2 (`--cache FILE` keeps every vector between runs: ~35 s a question to embed
on a busy 2-core machine, seconds once cached); the data stays in ../shared/data (MIT licence,
not shipped). `--stride 2` takes every second question (6 of each type); `--without time` switches a
default stage off (each change alone). Plain BM25 (the
lexical channel alone, no context signals, no stages) is scored beside it ("bm25" columns).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import gzip
import hashlib
import json
import pickle
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.memory import Actor
from signet_desktop.domain.recall import RecallQuery
from signet_desktop.embedding.graphs import GRAPHS
from signet_desktop.embedding.native import NativeMiniLM
from signet_desktop.service.container import BuildOptions, build_service, configured_embedder
from signet_desktop.service.memories.service import RememberRequest

DEFAULT_DATA = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "longmemeval-s-dev72.json.gz"
)
LIMIT = 10
KS = (1, 5, 10)
BM25_SHOWN = ("recall@10", "mrr")  # plain BM25 (lexical only, no context, no stages) beside it


class CachedEmbedder:
    """The native embedder with every text's vector kept in a file across runs (`--cache`):
    runs that compare two builds embed each text once (the vectors do not depend on the build).
    """

    def __init__(self, inner: Any, path: Path | None) -> None:
        self._inner, self._path = inner, path
        self._vectors: dict[str, Any] = {}
        if path is not None and path.exists():
            self._vectors = pickle.loads(path.read_bytes())
        self.name, self.model, self.dimensions = inner.name, inner.model, inner.dimensions

    def embed(self, texts: Any) -> Any:
        import numpy as np

        keys = [hashlib.sha1(t.encode("utf-8")).hexdigest() for t in texts]
        missing = [i for i, key in enumerate(keys) if key not in self._vectors]
        if missing:
            fresh = self._inner.embed([texts[i] for i in missing])
            for i, vector in zip(missing, fresh, strict=True):
                self._vectors[keys[i]] = np.array(vector, copy=True)
        return np.stack([self._vectors[key] for key in keys]).astype(np.float32)

    def save(self) -> None:
        if self._path is not None:
            self._path.write_bytes(pickle.dumps(self._vectors))


def add_variant_argument(parser: argparse.ArgumentParser) -> None:
    """`--embedder-variant`: run the native embedder with another graph (embedding/graphs.py)."""
    parser.add_argument(
        "--embedder-variant",
        choices=sorted(GRAPHS),
        help="the native embedder's graph (default: agent.yaml's embedder); "
        "give each variant its own --cache file",
    )


def bench_embedder(variant: str | None) -> Any:
    """The native embedder with graph `variant`, or the default config's embedder."""
    if variant is not None:
        return NativeMiniLM(graph=variant)
    native = configured_embedder(SignetConfig())
    if native is None:
        raise SystemExit("the bench needs the native embedder")
    return native


def stamp(text: str) -> str:
    """ "2023/05/20 (Sat) 02:21" as the ISO-8601 createdAt remember takes."""
    day, _, clock = text.partition(" (")
    parsed = datetime.strptime(f"{day} {clock.split(') ')[-1]}", "%Y/%m/%d %H:%M")
    return parsed.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def evaluate(
    item: dict[str, Any], embedder: Any, without: frozenset[str] = frozenset()
) -> dict[str, float]:
    """One question in a fresh workspace: its turn- and session-level scores."""
    requests, keys = [], []
    for sid, date, session in zip(
        item["haystack_session_ids"],
        item["haystack_dates"],
        item["haystack_sessions"],
        strict=True,
    ):
        for index, turn in enumerate(session):
            text = f"{turn['role']}: {turn['content']}".strip()
            if not turn["content"].strip():
                continue
            requests.append(
                RememberRequest(
                    content=text,
                    created_at=stamp(date),
                    session_id=sid,
                    metadata={"turn": index},
                    source_type="longmemeval",
                )
            )
            keys.append((sid, index, bool(turn.get("has_answer"))))
    with tempfile.TemporaryDirectory() as tmp:
        service = build_service(
            WorkspacePaths.for_root(Path(tmp)), SignetConfig(), BuildOptions(embedder=embedder)
        )
        try:
            outcomes = service.memories.remember_many(requests, Actor(changed_by="bench"))
            turns_of: dict[str, list[tuple[str, int, bool]]] = defaultdict(list)
            for outcome, key in zip(outcomes, keys, strict=True):
                turns_of[outcome.memory.id].append(key)
            asked = stamp(item["question_date"])
            names = service.recall._engine.stage_names  # read underneath the facade
            stages = tuple(n for n in names if n not in without) if without else None
            result = service.recall.search(
                RecallQuery(
                    query=item["question"], limit=LIMIT, min_score=0.0, as_of=asked, stages=stages
                )
            )
            bm25 = service.recall.search(
                RecallQuery(
                    query=item["question"], limit=LIMIT, min_score=0.0, as_of=asked,
                    channels=("lexical",), context=False, stages=(),
                )
            )  # fmt: skip
        finally:
            service.close()
    scores = score([turns_of[hit.memory.id] for hit in result.hits], keys, item)
    plain = score([turns_of[hit.memory.id] for hit in bm25.hits], keys, item)
    scores.update({f"bm25 {name}": value for name, value in plain.items() if name in BM25_SHOWN})
    return scores


def score(
    ranked: list[list[tuple[str, int, bool]]], keys: list[tuple[str, int, bool]],
    item: dict[str, Any],
) -> dict[str, float]:  # fmt: skip
    """Turn- and session-level scores of one ranked list (each entry: the turns of one hit)."""
    gold = sum(1 for key in keys if key[2])
    scores: dict[str, float] = {}
    if gold:
        for k in KS:
            scores[f"recall@{k}"] = sum(1 for ts in ranked[:k] for t in ts if t[2]) / gold
        first = next((i for i, ts in enumerate(ranked) if any(t[2] for t in ts)), None)
        scores["mrr"] = 0.0 if first is None else 1 / (first + 1)
    sessions = set(item["answer_session_ids"])
    found = {t[0] for ts in ranked for t in ts} & sessions
    scores["session recall@10"] = len(found) / len(sessions) if sessions else 0.0
    return scores


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--questions", type=int, default=0, help="0 = all")
    parser.add_argument("--stride", type=int, default=1, help="every n-th question")
    parser.add_argument("--cache", type=Path, help="a file keeping the vectors across runs")
    parser.add_argument(
        "--without", action="append", default=[], help="a default stage to switch off (repeatable)"
    )
    add_variant_argument(parser)
    args = parser.parse_args()
    if not args.data.exists():
        print(f"skipped: {args.data} not found (LongMemEval data is not shipped)")
        return 0
    items = json.loads(gzip.decompress(args.data.read_bytes()))
    items = items[:: args.stride]
    if args.questions:
        items = items[: args.questions]
    native = bench_embedder(args.embedder_variant)
    print(f"embedder: {native.name} {native.model}")
    embedder = CachedEmbedder(native, args.cache)
    started = time.perf_counter()
    totals: dict[str, list[float]] = defaultdict(list)
    by_type: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for item in items:
        for name, value in evaluate(item, embedder, frozenset(args.without)).items():
            totals[name].append(value)
            by_type[item["question_type"]][name].append(value)
    embedder.save()
    print(f"LongMemEval-S dev: {len(items)} questions in {time.perf_counter() - started:.0f} s")
    names = ["recall@1", "recall@5", "recall@10", "mrr", "session recall@10"]
    names += [f"bm25 {name}" for name in BM25_SHOWN]
    print("| set | n | " + " | ".join(names) + " |")
    print("| --- | ---: | " + " | ".join("---:" for _ in names) + " |")
    rows = [("all", totals), *sorted(by_type.items())]
    for label, values in rows:
        cells = [f"{sum(values[n]) / len(values[n]):.3f}" if values[n] else "-" for n in names]
        print(f"| {label} | {len(values['session recall@10'])} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
