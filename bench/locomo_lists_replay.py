"""Offline replays of the list and neighbouring-turn rules on both dev sets.

    uv run python bench/locomo_lists_replay.py capture-locomo OUT.pkl --cache FILE
    uv run python bench/locomo_lists_replay.py capture-longmemeval OUT.pkl --cache FILE [--stride N]
    uv run python bench/locomo_lists_replay.py replay OUT.pkl [OUT2.pkl ...]

`capture-*` runs the protocol of `bench/locomo.py` / `bench/longmemeval.py` (same entities,
turns, `as_of`; `--cache` is their vector cache) with every default stage but `neighbours`,
and records what a stage placed last sees: the candidates best first (ids, scores,
channels), each memory's session and position in it, and how many evidence turns each
memory holds. The file stays outside the project (it holds the datasets' ids). `replay`
applies, with no database, the engine's final cut (`final_order`) to the recorded candidates
(the build without the stage) and then each rule: the `neighbours` stage's own code
(`NeighbourEvidence.lift`) over a grid, diversity across sessions (all questions, or only
enumerative ones), and session-level evidence kept below its best hit; recall@10 / MRR /
hit@1 overall and per category or type. docs/RECALL.md, "Lists and neighbouring turns".
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # see bench/locomo.py

import argparse
import gzip
import itertools
import json
import pickle
import re
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from locomo import (  # type: ignore[import-not-found]
    BENCH_CONFIG,
    CATEGORY_NAMES,
    DEFAULT_DATA,
    DEFAULT_STAGES,
    LIMIT,
    RERANK,
    QueryCache,
    asked_on,
    conversation_entities,
    ingest,
    questions,
    seed_entities,
)
from longmemeval import DEFAULT_DATA as LME_DATA  # type: ignore[import-not-found]
from longmemeval import CachedEmbedder, stamp

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.memory import Actor
from signet_desktop.domain.recall import RecallQuery
from signet_desktop.recall.engine import DEFAULT_CANDIDATE_DEPTH
from signet_desktop.recall.flat_share import DEFAULT_FLAT_SHARE, final_order
from signet_desktop.recall.fusion import FusedHit
from signet_desktop.recall.neighbour_evidence import STAGE_NAME, NeighbourEvidence
from signet_desktop.service.container import BuildOptions, build_service, configured_embedder
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest

Ranker = Callable[[dict[str, Any]], list[FusedHit]]
ENUMERATIVE = re.compile(
    r"^\s*(?:what|which|who)\b(?:\s+(?:kinds?|types?|sorts?)\s+of)?\s+(?:\w+\s+){0,2}?"
    r"\w+(?<!s)s\b(?!\s*(?:is|was))|\b(?:some|both|all|ways|things|how many|any)\b",
    re.IGNORECASE,
)


class Spy:
    """A last stage that records the candidates it is given and passes them on."""

    name = "spy"

    def __init__(self) -> None:
        self.seen: list[list[tuple[Any, ...]]] = []

    def apply(self, conn: Any, request: Any, hits: list[FusedHit], clock: Any) -> Any:
        self.seen.append([(h.memory_id, h.score, h.source, dict(h.channels)) for h in hits])
        return hits


def spied(service: SignetService) -> tuple[Spy, tuple[str, ...]]:
    """Install the spy after every stage; the stages to ask for (all defaults but ours)."""
    engine = service.recall._engine  # underneath the facade, as the other replays do
    spy = Spy()
    engine._stages = (*engine._stages, spy)
    return spy, tuple(n for n in engine.stage_names if n not in {STAGE_NAME, spy.name})


def positions(service: SignetService) -> dict[str, tuple[str, int]]:
    """memory id -> (session, position in it), live memories with a session."""
    rows = service._db.reader().execute(
        "SELECT id, session_id, seq FROM memories WHERE is_deleted = 0 AND session_id IS NOT NULL"
    )
    by_session: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for row in rows:
        by_session[str(row["session_id"])].append((int(row["seq"]), str(row["id"])))
    return {
        memory_id: (session, i)
        for session, turns in by_session.items()
        for i, (_, memory_id) in enumerate(sorted(turns))
    }


def capture_locomo(out: Path, cache: Path | None) -> None:
    samples = json.loads(DEFAULT_DATA.read_text(encoding="utf-8"))
    native = CachedEmbedder(configured_embedder(SignetConfig()), cache)
    embedder = QueryCache(native)
    config = SignetConfig.model_validate(BENCH_CONFIG)
    records = []
    for sample in samples:
        with tempfile.TemporaryDirectory() as tmp:
            paths = WorkspacePaths.for_root(Path(tmp))
            service = build_service(paths, config, BuildOptions(embedder=embedder))
            seed_entities(service, conversation_entities(sample["conversation"]))
            dia_of = ingest(service, sample)
            spy, names = spied(service)
            stages = (*(n for n in names if n in DEFAULT_STAGES or n == RERANK), spy.name)
            where = positions(service)
            for question in questions(sample):
                spy.seen.clear()
                query = RecallQuery(
                    query=question.text, limit=LIMIT, min_score=0.0, stages=stages,
                    as_of=asked_on(sample),
                )  # fmt: skip
                service.recall.search(query)
                hits = spy.seen[0]
                records.append({
                    "label": CATEGORY_NAMES[question.category], "text": question.text,
                    "hits": hits, "where": {h[0]: where.get(h[0]) for h in hits},
                    "gold": {h[0]: int(dia_of[h[0]] in question.evidence) for h in hits},
                    "total": len(question.evidence), "turns": where,
                })  # fmt: skip
            service.close()
        print(f"{sample['sample_id']}: captured", flush=True)
    native.save()
    out.write_bytes(pickle.dumps(records))


def capture_longmemeval(out: Path, cache: Path | None, stride: int) -> None:
    items = json.loads(gzip.decompress(LME_DATA.read_bytes()))[::stride]
    embedder = CachedEmbedder(configured_embedder(SignetConfig()), cache)
    records = []
    for item in items:
        requests, gold = [], []
        sessions = zip(item["haystack_session_ids"], item["haystack_dates"],
                       item["haystack_sessions"], strict=True)  # fmt: skip
        for sid, date, session in sessions:
            for index, turn in enumerate(session):
                if turn["content"].strip():
                    requests.append(RememberRequest(
                        content=f"{turn['role']}: {turn['content']}".strip(),
                        created_at=stamp(date), session_id=sid, metadata={"turn": index},
                        source_type="longmemeval",
                    ))  # fmt: skip
                    gold.append(int(bool(turn.get("has_answer"))))
        with tempfile.TemporaryDirectory() as tmp:
            paths = WorkspacePaths.for_root(Path(tmp))
            service = build_service(paths, SignetConfig(), BuildOptions(embedder=embedder))
            outcomes = service.memories.remember_many(requests, Actor(changed_by="bench"))
            held: Counter[str] = Counter()
            for outcome, flag in zip(outcomes, gold, strict=True):
                held[outcome.memory.id] += flag  # identical turns are one memory
            spy, names = spied(service)
            query = RecallQuery(
                query=item["question"], limit=LIMIT, min_score=0.0,
                as_of=stamp(item["question_date"]), stages=(*names, spy.name),
            )  # fmt: skip
            service.recall.search(query)
            hits = spy.seen[0]
            where = positions(service)
            records.append({
                "label": item["question_type"], "text": item["question"], "hits": hits,
                "where": {h[0]: where.get(h[0]) for h in hits},
                "gold": {h[0]: held[h[0]] for h in hits}, "total": sum(gold),
                "turns": {m: where.get(m) for m in where},
            })  # fmt: skip
            service.close()
        print(f"{len(records)} of {len(items)} captured", flush=True)
    embedder.save()
    out.write_bytes(pickle.dumps(records))


def fused(record: dict[str, Any]) -> list[FusedHit]:
    return [FusedHit(m, score, source, channels) for m, score, source, channels in record["hits"]]


def cut(hits: list[FusedHit]) -> list[FusedHit]:
    """The engine's final cut (limit 10, min_score 0)."""
    return final_order(hits, limit=LIMIT, top_k=DEFAULT_CANDIDATE_DEPTH, share=DEFAULT_FLAT_SHARE)


def rings_of(record: dict[str, Any], width: int) -> dict[str, tuple[tuple[str, ...], ...]]:
    """Every candidate's session rings (1..width steps), from the recorded positions."""
    key = ("rings", width)
    if key in record:
        return dict(record[key])
    at = {where: m for m, where in record["turns"].items() if where}
    out = {}
    for memory_id, where in record["where"].items():
        if where is None:
            continue
        session, i = where
        rings = []
        for step in range(1, width + 1):
            ring = tuple(at[(session, j)] for j in (i - step, i + step) if (session, j) in at)
            if not ring:
                break
            rings.append(ring)
        out[memory_id] = tuple(rings)
    record[key] = out  # the same for every rule and weight
    return dict(out)


def neighbours(anchors: int, distance: int, weight: float, below: bool = False) -> Ranker:
    stage = NeighbourEvidence(
        anchors=anchors, distance=distance, weight=weight, below_anchors=below
    )
    return lambda record: stage.lift(fused(record), rings_of(record, distance))


def diversity(penalty: float, enumerative_only: bool) -> Ranker:
    """Greedy: a hit loses `penalty` for each hit of its session already kept (MMR-like)."""

    def rank(record: dict[str, Any]) -> list[FusedHit]:
        hits = fused(record)
        if enumerative_only and not ENUMERATIVE.search(record["text"]):
            return hits
        kept: list[FusedHit] = []
        count: Counter[Any] = Counter()
        session = {m: (w or (m, 0))[0] for m, w in record["where"].items()}
        while hits and len(kept) < LIMIT:
            best = max(hits, key=lambda h: h.score - penalty * count[session[h.memory_id]])
            hits.remove(best)
            count[session[best.memory_id]] += 1
            kept.append(replace(best, score=2.0 - len(kept) * 1e-3))  # keep the greedy order
        return kept + hits

    return rank


def session_level(top: int, weight: float, mean_of: int) -> Ranker:
    """A hit gains weight x (best / mean of best `mean_of`) of its session's other top hits."""

    def rank(record: dict[str, Any]) -> list[FusedHit]:
        hits = fused(record)
        session = {m: (w or (m, 0))[0] for m, w in record["where"].items()}
        by: dict[Any, list[float]] = defaultdict(list)
        for hit in hits[:top]:
            by[session[hit.memory_id]].append(hit.score)
        out = []
        for hit in hits:
            others = sorted(by[session[hit.memory_id]], reverse=True)
            if hit.score in others:
                others.remove(hit.score)
            if not others or hit.score >= others[0]:
                out.append(hit)
                continue
            lent = sum(others[:mean_of]) / len(others[:mean_of])
            score = min(hit.score + weight * lent, others[0] - 1e-6)
            out.append(replace(hit, score=max(score, hit.score)))
        return sorted(out, key=lambda h: -h.score)

    return rank


def then(first: Ranker, second: Ranker) -> Ranker:
    """`second` on what `first` ranked (the two rules together)."""

    def rank(record: dict[str, Any]) -> list[FusedHit]:
        hits = [(h.memory_id, h.score, h.source, h.channels) for h in first(record)]
        return second({**record, "hits": hits})

    return rank


def scores(records: Sequence[dict[str, Any]], ranker: Ranker) -> dict[str, tuple[float, ...]]:
    sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    for record in records:
        top = cut(ranker(record))[:LIMIT]
        held = [record["gold"].get(h.memory_id, 0) for h in top]
        first = next((i for i, g in enumerate(held) if g), None)
        row = (sum(held) / max(1, record["total"]), 0.0 if first is None else 1 / (first + 1))
        for key in ("all", record["label"]):
            s = sums[key]
            s[0] += 1
            s[1] += row[0]
            s[2] += row[1]
            s[3] += float(first == 0)
    return {k: (v[1] / v[0], v[2] / v[0], v[3] / v[0]) for k, v in sums.items()}


def line(name: str, result: dict[str, tuple[float, ...]]) -> str:
    r10, mrr, hit1 = result["all"]
    parts = " | ".join(f"{v[0]:.3f} / {v[1]:.3f}" for k, v in sorted(result.items()) if k != "all")
    return f"| {name} | {r10:.3f} / {mrr:.3f} | {hit1:.3f} | {parts} |"


def replay(path: Path) -> None:
    records = pickle.loads(path.read_bytes())
    labels = sorted({r["label"] for r in records})
    print(f"\n{path.name}: {len(records)} questions (recall@10 / MRR)\n")
    print("| rule | all | hit@1 | " + " | ".join(labels) + " |")
    print("| --- | ---: | ---: |" + " ---: |" * len(labels))
    print(line("build without the stage", scores(records, fused)))
    for anchors, distance, weight in itertools.product((3, 5, 8), (1, 2), (0.1, 0.15, 0.2, 0.25)):
        name = f"neighbours: top {anchors}, {distance} turns, {weight:g}"
        print(line(name, scores(records, neighbours(anchors, distance, weight))))
    for anchors, weight in itertools.product((3, 5, 8), (0.1, 0.15, 0.2, 0.25)):
        name = f"neighbours: top {anchors}, 2 turns, {weight:g}, below every top hit"
        print(line(name, scores(records, neighbours(anchors, 2, weight, below=True))))
    for penalty, only in itertools.product((0.02, 0.05, 0.1, 0.2), (False, True)):
        name = f"session diversity {penalty:g}" + (", enumerative only" if only else "")
        print(line(name, scores(records, diversity(penalty, only))))
    for top, weight, mean_of in itertools.product((10, 20, 50), (0.05, 0.1, 0.2), (1, 3)):
        name = f"session level: top {top}, {weight:g} x " + ("best" if mean_of == 1 else "mean 3")
        print(line(name, scores(records, session_level(top, weight, mean_of))))
    default = neighbours(5, 2, 0.15, below=True)  # the stage as shipped
    together = {
        "neighbours, then session diversity 0.02, enumerative only": diversity(0.02, True),
        "neighbours, then session level: top 20, 0.1 x best": session_level(20, 0.1, 1),
    }
    for name, rule in together.items():
        print(line(name, scores(records, then(default, rule))))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("command", choices=("capture-locomo", "capture-longmemeval", "replay"))
    parser.add_argument("files", type=Path, nargs="+")
    parser.add_argument("--cache", type=Path, help="the benches' vector cache")
    parser.add_argument("--stride", type=int, default=1, help="LongMemEval: every n-th question")
    args = parser.parse_args()
    if args.command == "capture-locomo":
        capture_locomo(args.files[0], args.cache)
    elif args.command == "capture-longmemeval":
        capture_longmemeval(args.files[0], args.cache, args.stride)
    else:
        for path in args.files:
            replay(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
