"""Offline fusion replays for bench/locomo.py --sweep.

Each question's lexical and semantic top-50 (scores and ranks exactly as the channels
reported them through the facade) are fused again with `recall.fusion.fuse` under several
rules and alphas, plus reciprocal-rank fusion as an outside reference; then the default
fusion is replayed through `recall.context.apply_context` (with the candidates' who and
session neighbours as the database reported them) under several weights. Nothing is re-embedded
or re-queried, so a sweep of every variant costs seconds.

Run alone on saved candidates: uv run python bench/locomo_sweep.py candidates.json
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from signet_desktop.domain.recall import ChannelEvidence
from signet_desktop.recall.context import ContextWeights, apply_context
from signet_desktop.recall.fusion import (
    DEFAULT_ALPHA,
    DEFAULT_SINGLE,
    FusedHit,
    SingleChannelRule,
    channel_weights,
    fuse,
)
from signet_desktop.storage.recall_context import CandidateContext

LIMIT = 10
CANDIDATES = 50  # each channel's depth in bench/locomo.py
CHANNELS = ("lexical", "semantic")  # the channels bench/locomo.py collects, in engine order
ALPHAS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
RULES: tuple[SingleChannelRule, ...] = ("raw", "zero", "floor")
RRF_K = 60
# (who_boost, session_weight) pairs replayed over the default fusion; (0, 0) is fusion alone.
CONTEXT_WEIGHTS = (
    (0.0, 0.0), (0.1, 0.0), (0.0, 0.15), (0.05, 0.1), (0.1, 0.1), (0.1, 0.15), (0.1, 0.2),
    (0.15, 0.15), (0.2, 0.15), (0.1, 0.3),
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Hit:
    memory_id: str
    evidence: ChannelEvidence


def _hits(items: Sequence[dict[str, Any]]) -> list[Hit]:
    return [Hit(i["dia"], ChannelEvidence(i["score"], i["rank"], i["score"])) for i in items]


def _fused(candidate: dict[str, Any], alpha: float, rule: SingleChannelRule) -> list[FusedHit]:
    channels = {name: _hits(candidate[name]) for name in CHANNELS}
    return fuse(channels, channel_weights(alpha), single=rule, depth=CANDIDATES)


def linear(alpha: float, rule: SingleChannelRule) -> Callable[[dict[str, Any]], list[str]]:
    def rank(candidate: dict[str, Any]) -> list[str]:
        return [h.memory_id for h in _fused(candidate, alpha, rule)[:LIMIT]]

    return rank


def with_context(who_boost: float, session_weight: float) -> Callable[[dict[str, Any]], list[str]]:
    """The default fusion, then `recall.context.apply_context` with these weights."""
    weights = ContextWeights(who_boost, session_weight)

    def rank(candidate: dict[str, Any]) -> list[str]:
        fused = _fused(candidate, DEFAULT_ALPHA, DEFAULT_SINGLE)
        facts = {
            dia: CandidateContext(f["who"], f["previous"], f["next"])
            for dia, f in candidate.get("context", {}).items()
        }
        ranked = apply_context(fused, facts, candidate.get("question", ""), weights)
        return [h.memory_id for h in ranked[:LIMIT]]

    return rank


# Score calibrations replayed from each hit's raw value: lexical "batch" (|bm25| / the batch's
# best, before issue 9) or "ceiling" (|bm25| / the query's ceiling, capped at 1); semantic
# floor f maps a cosine to max(0, (cos - f) / (1 - f)) (0: the cosine clipped, as before).
CALIBRATIONS = (
    ("batch", 0.0, 0.7), ("ceiling", 0.0, 0.7), ("ceiling", 0.2, 0.7), ("ceiling", 0.25, 0.7),
    ("ceiling", 0.3, 0.7), ("ceiling", 0.35, 0.7), ("ceiling", 0.3, 0.6), ("ceiling", 0.3, 0.5),
    ("ceiling", 0.3, 0.8), ("batch", 0.3, 0.7),
)  # fmt: skip


def _lexical_scores(candidate: dict[str, Any], mode: str) -> list[Hit]:
    items = candidate["lexical"]
    if not items:
        return []
    scale = max(abs(i["raw"]) for i in items) if mode == "batch" else candidate["lexical_ceiling"]
    scale = scale or 1.0
    return [
        Hit(i["dia"], ChannelEvidence(min(1.0, abs(i["raw"]) / scale), i["rank"], i["raw"]))
        for i in items
    ]


def _semantic_scores(candidate: dict[str, Any], floor: float) -> list[Hit]:
    return [
        Hit(i["dia"], ChannelEvidence(max(0.0, min(1.0, (i["raw"] - floor) / (1 - floor))),
                                      i["rank"], i["raw"]))
        for i in candidate["semantic"]
    ]  # fmt: skip


def calibrated(
    mode: str, floor: float, alpha: float, context: bool = True
) -> Callable[[dict[str, Any]], list[str]]:
    """Rescore both channels from their raw values, fuse (both ran), then the default context."""

    def rank(candidate: dict[str, Any]) -> list[str]:
        channels = {
            "lexical": _lexical_scores(candidate, mode),
            "semantic": _semantic_scores(candidate, floor),
        }
        fused = fuse(
            channels, channel_weights(alpha), single=DEFAULT_SINGLE, depth=CANDIDATES, ran=CHANNELS
        )
        if context:
            facts = {
                dia: CandidateContext(f["who"], f["previous"], f["next"])
                for dia, f in candidate.get("context", {}).items()
            }
            fused = apply_context(fused, facts, candidate.get("question", ""), ContextWeights())
        return [h.memory_id for h in fused[:LIMIT]]

    return rank


def rrf(candidate: dict[str, Any]) -> list[str]:
    scores: dict[str, float] = {}
    for channel in CHANNELS:
        for item in candidate[channel]:
            scores[item["dia"]] = scores.get(item["dia"], 0.0) + 1.0 / (RRF_K + item["rank"])
    return sorted(scores, key=lambda d: (-scores[d], d))[:LIMIT]


def channel_only(channel: str) -> Callable[[dict[str, Any]], list[str]]:
    def rank(candidate: dict[str, Any]) -> list[str]:
        return [item["dia"] for item in candidate[channel][:LIMIT]]

    return rank


def metrics(
    candidates: list[dict[str, Any]], ranker: Callable[[dict[str, Any]], list[str]]
) -> dict[str, float]:
    n = len(candidates)
    hit5 = recall10 = recall5 = mrr = 0.0
    for candidate in candidates:
        evidence = set(candidate["evidence"])
        ranked = ranker(candidate)
        hit5 += bool(evidence & set(ranked[:5]))
        recall5 += len(evidence & set(ranked[:5])) / len(evidence)
        recall10 += len(evidence & set(ranked[:10])) / len(evidence)
        first = next((i for i, d in enumerate(ranked) if d in evidence), None)
        mrr += 0.0 if first is None else 1.0 / (first + 1)
    return {"hit@5": hit5 / n, "recall@5": recall5 / n, "recall@10": recall10 / n, "mrr": mrr / n}


def print_sweep(candidates: list[dict[str, Any]]) -> None:
    """One table: every variant's hit@5, recall@5, recall@10 and MRR."""
    variants: list[tuple[str, Callable[[dict[str, Any]], list[str]]]] = [
        ("lexical only", channel_only("lexical")),
        ("vector only", channel_only("semantic")),
        (f"RRF k={RRF_K}", rrf),
    ]
    variants += [(f"linear {rule} a={a}", linear(a, rule)) for rule in RULES for a in ALPHAS]
    variants += [
        (f"floor a={DEFAULT_ALPHA} + context who={g} session={w}", with_context(g, w))
        for g, w in CONTEXT_WEIGHTS
    ]
    if candidates and "lexical_ceiling" in candidates[0]:
        variants += [
            (f"calibrated lexical={m} floor={f} a={a}{c}", calibrated(m, f, a, not c))
            for m, f, a in CALIBRATIONS
            for c in ("", " fusion only")
        ]
    print(f"\nfusion sweep over {len(candidates)} questions (offline replay of channel top-50)\n")
    print("| variant | hit@5 | recall@5 | recall@10 | MRR |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, ranker in variants:
        m = metrics(candidates, ranker)
        print(
            f"| {name} | {m['hit@5']:.3f} | {m['recall@5']:.3f} | {m['recall@10']:.3f} "
            f"| {m['mrr']:.3f} |"
        )


if __name__ == "__main__":
    print_sweep(json.loads(Path(sys.argv[1]).read_text(encoding="utf-8")))
