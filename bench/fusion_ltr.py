"""Learned fusion: does a small learning-to-rank model beat the hand-set blend? (It did not.)

Run: uv run python bench/fusion_ltr.py [--cache-dir DIR]

Both dev sets through their benches' protocols (`bench/locomo.py`, `bench/longmemeval.py`):
the default recall's top 50 per question, with every hit's channel evidence (fused score,
rank, lexical score, cosine, which channel missed it, who/session context, whether the time
and preference stages raised it) and session features (how many other top-50 hits share its
session, their best and top-3 scores), and its length. A linear model over the standardised
features is trained pairwise (logistic loss on gold-minus-other differences, each question
weighing the same, each dev set half) and re-orders the top 50.

Three trainings, each scored against the hand-set blend (the engine's own order) on what it
did not see: (1) LoCoMo only, cross-validated by conversation (5 folds); (2) the same models
on LongMemEval-S; (3) both sets, 5 folds (a LoCoMo conversation and a fifth of the
LongMemEval questions held out per fold). The gate (issue 28): adopt only if it wins on every
held-out fold. Measured 2026-12-06 (docs/RECALL.md, "Learned fusion"): LoCoMo-only models win
every LoCoMo fold on MRR (recall@10 on four of five) but fall on LongMemEval (recall@10 0.852,
MRR 0.619 against the blend's 0.934 / 0.775); joint models win LoCoMo MRR on every fold but
lose LongMemEval MRR on two of five. Not adopted: nothing ships but this script. Vectors are
cached in `--cache-dir` (the dev sets stay in ../shared/data).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import gzip
import json
import math
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
import numpy.typing as npt
from locomo import DEFAULT_DATA as LOCOMO_DATA
from locomo import asked_on, conversation_entities, ingest, questions, seed_entities
from longmemeval import DEFAULT_DATA as LME_DATA
from longmemeval import CachedEmbedder, stamp

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.memory import Actor
from signet_desktop.domain.recall import RecallHit, RecallQuery
from signet_desktop.service.container import BuildOptions, build_service, configured_embedder
from signet_desktop.service.memories.service import RememberRequest

POOL = 50
Matrix = npt.NDArray[np.float64]


def row(hit: RecallHit, gold: bool) -> dict[str, Any]:
    lexical, semantic = hit.channels.get("lexical"), hit.channels.get("semantic")
    return {
        "score": hit.score, "lex": lexical.score if lexical else None,
        "cos": semantic.raw if semantic else None, "session": hit.memory.session_id,
        "who": hit.context.who if hit.context else 0.0,
        "near": hit.context.session if hit.context else 0.0,
        "stages": {a.stage for a in hit.adjustments}, "chars": len(hit.memory.content),
        "gold": gold,
    }  # fmt: skip


def locomo_pools(embedder: Any) -> list[dict[str, Any]]:
    out = []
    for sample in json.loads(LOCOMO_DATA.read_text(encoding="utf-8")):
        with tempfile.TemporaryDirectory() as tmp:
            service = build_service(
                WorkspacePaths.for_root(Path(tmp)), SignetConfig(), BuildOptions(embedder=embedder)
            )
            seed_entities(service, conversation_entities(sample["conversation"]))
            dia_of = ingest(service, sample)
            for q in questions(sample):
                result = service.recall.search(
                    RecallQuery(query=q.text, limit=POOL, min_score=0.0, as_of=asked_on(sample))
                )
                hits = [row(h, dia_of[h.memory.id] in q.evidence) for h in result.hits]
                out.append({"set": "locomo", "group": q.conversation, "hits": hits,
                            "gold": len(q.evidence)})  # fmt: skip
            service.close()
    return out


def lme_pools(embedder: Any) -> list[dict[str, Any]]:
    out = []
    for item in json.loads(gzip.decompress(LME_DATA.read_bytes())):
        requests, gold_of = [], []
        for sid, date, session in zip(
            item["haystack_session_ids"], item["haystack_dates"], item["haystack_sessions"],
            strict=True,
        ):  # fmt: skip
            for turn in session:
                if turn["content"].strip():
                    text = f"{turn['role']}: {turn['content']}".strip()
                    requests.append(RememberRequest(
                        content=text, created_at=stamp(date), session_id=sid,
                        source_type="longmemeval"))  # fmt: skip
                    gold_of.append(bool(turn.get("has_answer")))
        with tempfile.TemporaryDirectory() as tmp:
            service = build_service(
                WorkspacePaths.for_root(Path(tmp)), SignetConfig(), BuildOptions(embedder=embedder)
            )
            outcomes = service.memories.remember_many(requests, Actor(changed_by="bench"))
            golds: dict[str, int] = defaultdict(int)
            for outcome, gold in zip(outcomes, gold_of, strict=True):
                golds[outcome.memory.id] += int(gold)
            result = service.recall.search(RecallQuery(
                query=item["question"], limit=POOL, min_score=0.0,
                as_of=stamp(item["question_date"])))  # fmt: skip
            service.close()
        if sum(gold_of):
            hits = [row(h, golds[h.memory.id] > 0) | {"count": golds[h.memory.id]}
                    for h in result.hits]  # fmt: skip
            out.append({"set": "lme", "group": item["question_id"], "hits": hits,
                        "gold": sum(gold_of)})  # fmt: skip
    return out


def features(pool: dict[str, Any]) -> Matrix:
    hits = pool["hits"]
    by_session: dict[Any, list[tuple[float, int]]] = defaultdict(list)
    for i, h in enumerate(hits):
        by_session[h["session"]].append((h["score"], i))
    top = hits[0]["score"] if hits else 1.0
    rows = []
    for i, h in enumerate(hits):
        others = sorted((s for s, j in by_session[h["session"]] if j != i), reverse=True)
        rows.append([
            h["score"], h["score"] - top, 1 / (i + 1), math.log(i + 1), h["lex"] or 0.0,
            h["cos"] or 0.0, float(h["lex"] is None), float(h["cos"] is None), h["who"],
            h["near"], len(others), others[0] if others else 0.0, sum(others[:3]),
            float("time" in h["stages"]), float("preference" in h["stages"]),
            min(h["chars"], 600) / 600,
        ])  # fmt: skip
    return np.array(rows, dtype=np.float64)


def metrics(pool: dict[str, Any], order: Sequence[int]) -> tuple[float, float]:
    """recall@10 and MRR of `order` (indices into the pool)."""
    top = [pool["hits"][i] for i in order[:10]]
    found = sum(h.get("count", 1) for h in top if h["gold"])
    first = next((k for k, h in enumerate(top) if h["gold"]), None)
    return min(1.0, found / pool["gold"]), 0.0 if first is None else 1 / (first + 1)


def train(
    pools: Sequence[dict[str, Any]], l2: float = 1e-3, steps: int = 300
) -> Callable[[Matrix], Any]:
    """A pairwise logistic model; returns the scoring function."""
    mats = [features(p) for p in pools]
    stacked = np.vstack(mats)
    mu, sd = stacked.mean(0), stacked.std(0) + 1e-9
    per_set = defaultdict(int)
    for p in pools:
        per_set[p["set"]] += 1
    diffs, weights = [], []
    for p, x in zip(pools, mats, strict=True):
        gold = np.array([h["gold"] for h in p["hits"]])
        if not gold.any() or gold.all():
            continue
        z = (x - mu) / sd
        pairs = (z[gold][:, None, :] - z[~gold][None, :, :]).reshape(-1, z.shape[1])
        diffs.append(pairs)
        weights.append(np.full(len(pairs), 1 / len(pairs) / per_set[p["set"]]))
    d, w = np.vstack(diffs), np.concatenate(weights)
    w /= w.sum()
    beta = np.zeros(d.shape[1])
    for _ in range(steps):
        grad = -(d * (w / (1 + np.exp(d @ beta)))[:, None]).sum(0) + l2 * beta
        beta -= grad
    return lambda x: ((x - mu) / sd) @ beta


def scored(
    pools: Sequence[dict[str, Any]], model: Callable[[Matrix], Any] | None
) -> tuple[float, float]:
    totals = np.zeros(2)
    for p in pools:
        if model is None:
            order = list(range(len(p["hits"])))
        else:
            s = model(features(p))
            order = sorted(range(len(s)), key=lambda i: (-s[i], i))
        totals += metrics(p, order)
    return tuple(totals / max(1, len(pools)))  # type: ignore[return-value]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cache-dir", type=Path, default=Path(tempfile.gettempdir()))
    args = parser.parse_args()
    if not (LOCOMO_DATA.exists() and LME_DATA.exists()):
        print("skipped: the dev sets are not in ../shared/data")
        return
    native = configured_embedder(SignetConfig())
    locomo_embedder = CachedEmbedder(native, args.cache_dir / "ltr_locomo_vectors.pkl")
    lme_embedder = CachedEmbedder(native, args.cache_dir / "ltr_lme_vectors.pkl")
    locomo, lme = locomo_pools(locomo_embedder), lme_pools(lme_embedder)
    locomo_embedder.save()
    lme_embedder.save()
    groups = sorted({p["group"] for p in locomo})
    lme_ids = [p["group"] for p in lme]
    print("| training | held out | hand-set recall@10 / MRR | learned recall@10 / MRR |")
    print("| --- | --- | ---: | ---: |")
    for group in groups:
        model = train([p for p in locomo if p["group"] != group])
        held = [p for p in locomo if p["group"] == group]
        base, learned = scored(held, None), scored(held, model)
        print(f"| LoCoMo without {group} | {group} | {base[0]:.3f} / {base[1]:.3f} "
              f"| {learned[0]:.3f} / {learned[1]:.3f} |")  # fmt: skip
    model = train(locomo)
    base, learned = scored(lme, None), scored(lme, model)
    print(f"| all of LoCoMo | LongMemEval-S | {base[0]:.3f} / {base[1]:.3f} "
          f"| {learned[0]:.3f} / {learned[1]:.3f} |")  # fmt: skip
    for k in range(5):
        fold = {groups[k]} | {q for i, q in enumerate(lme_ids) if i % 5 == k}
        model = train([p for p in locomo + lme if p["group"] not in fold])
        for name, pools in (("LoCoMo", locomo), ("LongMemEval-S", lme)):
            held = [p for p in pools if p["group"] in fold]
            base, learned = scored(held, None), scored(held, model)
            print(f"| both, fold {k + 1} | {name} | {base[0]:.3f} / {base[1]:.3f} "
                  f"| {learned[0]:.3f} / {learned[1]:.3f} |")  # fmt: skip


if __name__ == "__main__":
    main()
