"""LoCoMo retrieval evaluation: lexical, vector, fusion-only and hybrid rankers, in one run.

Run: uv run python bench/locomo.py [--data PATH] [--conversations N] [--sweep]

Protocol (../shared/data/README.md, retrieval only, no LLM): per conversation a fresh
workspace; every turn is remembered through the public facade as "<speaker>: <text>" with
who = speaker, the session date as createdAt, the conversation's session as sessionId and the
dia_id in metadata; every category 1-4 question with evidence is recalled (limit 10) by each
ranker through `SignetService.recall` with `channels` (and `context`) set: lexical only,
vector only, fusion only (hybrid without the context signals) and hybrid (the default).
Scores: hit@k, recall@k (k = 1, 5, 10) and MRR, overall and per category.
Ranking is evaluated with min_score 0 (the threshold only trims tails; it is reported apart).
Embedder: the native all-MiniLM-L6-v2. The data stays in ../shared/data (CC BY-NC 4.0).

`--sweep` also collects each channel's top 50 per question and replays fusion variants
offline (the same `recall.fusion` code), which is how the defaults were tuned.
"""

from __future__ import annotations

import os

# One BLAS thread: a single-text embedding is a small matmul, and OpenBLAS's spinning pool
# burns ~8x the CPU for it on a busy 2-core machine (measured: 97 ms vs 11 ms CPU per text).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import re
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.memory import DEFAULT_AGENT_ID, Actor
from signet_desktop.domain.recall import RecallQuery
from signet_desktop.recall.lexical import fts_rows, plan_terms, query_ceiling
from signet_desktop.recall.sanitize import query_tokens
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories import RememberRequest
from signet_desktop.storage.recall_context import candidate_context

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev.json"
KS = (1, 5, 10)
LIMIT = 10
CANDIDATES = 50
CHANNELS = ("lexical", "semantic")  # each channel's top CANDIDATES are kept for --sweep
# name -> (channels, context signals on). "hybrid" is the default recall; "fusion only" is
# the same without the context stage, so its share of the gain shows in the same run.
RANKERS: dict[str, tuple[tuple[str, ...], bool]] = {
    "lexical": (("lexical",), False),
    "vector": (("semantic",), False),
    "fusion only": (("lexical", "semantic"), False),
    "hybrid": (("lexical", "semantic"), True),
}
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")


@dataclass(frozen=True, slots=True)
class Question:
    conversation: str
    text: str
    category: int
    evidence: frozenset[str]


@dataclass(slots=True)
class Scores:
    """Running sums of the metrics for one ranker (and one category)."""

    count: int = 0
    hit: dict[int, float] = field(default_factory=lambda: dict.fromkeys(KS, 0.0))
    recall: dict[int, float] = field(default_factory=lambda: dict.fromkeys(KS, 0.0))
    mrr: float = 0.0

    def add(self, ranked: Sequence[str], evidence: frozenset[str]) -> None:
        self.count += 1
        for k in KS:
            found = evidence & set(ranked[:k])
            self.hit[k] += 1.0 if found else 0.0
            self.recall[k] += len(found) / len(evidence)
        first = next((i for i, dia in enumerate(ranked[:LIMIT]) if dia in evidence), None)
        self.mrr += 0.0 if first is None else 1.0 / (first + 1)

    def row(self) -> dict[str, float]:
        n = max(1, self.count)
        out = {f"hit@{k}": self.hit[k] / n for k in KS}
        out.update({f"recall@{k}": self.recall[k] / n for k in KS})
        out["mrr"] = self.mrr / n
        return out


def normalise_evidence(raw: Sequence[str]) -> frozenset[str]:
    """Fix the known quirks: "D8:6; D9:17", "D:11:26", "D30:05", space-separated lists."""
    found = set()
    for item in raw:
        for session, turn in _EVIDENCE.findall(item):
            found.add(f"D{int(session)}:{int(turn)}")
    return frozenset(found)


def parse_session_date(text: str) -> str:
    """ "1:56 pm on 8 May, 2023" -> "2023-05-08T13:56:00.000Z"."""
    moment = datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")
    return moment.strftime("%Y-%m-%dT%H:%M:00.000Z")


def turns(conversation: dict[str, Any]) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """(session number, session date, turn) in order."""
    numbers = sorted(
        int(key.split("_")[1])
        for key, value in conversation.items()
        if re.fullmatch(r"session_\d+", key) and isinstance(value, list)
    )
    for number in numbers:
        date = parse_session_date(conversation[f"session_{number}_date_time"])
        for turn in conversation[f"session_{number}"]:
            yield number, date, turn


def questions(sample: dict[str, Any]) -> list[Question]:
    """Category 1-4 questions that name their evidence."""
    out = []
    for qa in sample["qa"]:
        evidence = normalise_evidence(qa.get("evidence") or [])
        if qa["category"] in CATEGORY_NAMES and evidence:
            out.append(Question(sample["sample_id"], qa["question"], qa["category"], evidence))
    return out


def turn_content(turn: dict[str, Any], captions: bool) -> str:
    """ "<speaker>: <text>" (the protocol), optionally with the shared image's caption."""
    text = f"{turn['speaker']}: {turn['text']}"
    if captions and turn.get("blip_caption"):
        text += f" [shares an image: {turn['blip_caption']}]"
    return text


def ingest(
    service: SignetService, sample: dict[str, Any], captions: bool = False
) -> dict[str, str]:
    """Remember every turn (one `remember_many`, as an importer would); memory id -> dia_id."""
    requests, dia_ids = [], []
    for session, date, turn in turns(sample["conversation"]):
        requests.append(
            RememberRequest(
                content=turn_content(turn, captions),
                who=turn["speaker"],
                created_at=date,
                session_id=f"{sample['sample_id']}:session_{session}",
                metadata={"dia_id": turn["dia_id"], "session": session},
                source_type="locomo",
                source_id=f"{sample['sample_id']}:{turn['dia_id']}",
            )
        )
        dia_ids.append(turn["dia_id"])
    outcomes = service.memories.remember_many(requests, Actor(changed_by="bench"))
    return {outcome.memory.id: dia for outcome, dia in zip(outcomes, dia_ids, strict=True)}


def ranked_dia_ids(
    service: SignetService,
    question: str,
    ranker: tuple[tuple[str, ...], bool],
    dia_of: dict[str, str],
) -> tuple[list[str], float, Any]:
    channels, context = ranker
    started = time.perf_counter()
    result = service.recall.search(
        RecallQuery(query=question, limit=LIMIT, channels=channels, min_score=0.0, context=context)
    )
    elapsed = (time.perf_counter() - started) * 1000
    return [dia_of[h.memory.id] for h in result.hits], elapsed, result


@dataclass(slots=True)
class Run:
    """Everything one evaluation run collects."""

    overall: dict[str, Scores] = field(default_factory=lambda: defaultdict(Scores))
    by_category: dict[tuple[str, int], Scores] = field(default_factory=lambda: defaultdict(Scores))
    latency_ms: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    default_threshold: Scores = field(default_factory=Scores)
    candidates: list[dict[str, Any]] = field(default_factory=list)
    ingest_s: float = 0.0
    turns: int = 0
    completeness: set[str] = field(default_factory=set)
    captions: bool = False  # off-protocol variant: append image captions to image turns


def evaluate_sample(sample: dict[str, Any], run: Run, *, sweep: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        service = build_service(WorkspacePaths.for_root(Path(tmp)), SignetConfig(), BuildOptions())
        started = time.perf_counter()
        dia_of = ingest(service, sample, run.captions)
        run.ingest_s += time.perf_counter() - started
        run.turns += len(dia_of)
        facts = context_facts(service, dia_of) if sweep else {}
        for question in questions(sample):
            for name, ranker in RANKERS.items():
                ranked, ms, result = ranked_dia_ids(service, question.text, ranker, dia_of)
                run.overall[name].add(ranked, question.evidence)
                run.by_category[(name, question.category)].add(ranked, question.evidence)
                run.latency_ms[name].append(ms)
                if result.vector_completeness:
                    run.completeness.add(result.vector_completeness)
                if name == "hybrid":
                    kept = [h for h in result.hits if h.score >= 0.1]
                    run.default_threshold.add(
                        [dia_of[h.memory.id] for h in kept], question.evidence
                    )
            if sweep:
                run.candidates.append(collect_candidates(service, question, dia_of, facts))
        service.close()


def collect_candidates(
    service: SignetService,
    question: Question,
    dia_of: dict[str, str],
    facts: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    """Each channel's top CANDIDATES with evidence and context facts, for offline replays."""
    out: dict[str, Any] = {
        "question": question.text,
        "category": question.category,
        "evidence": sorted(question.evidence),
    }
    for channel in CHANNELS:
        result = service.recall.search(
            RecallQuery(
                query=question.text,
                limit=CANDIDATES,
                channels=(channel,),
                min_score=0.0,
                context=False,
            )
        )
        out[channel] = [
            {
                "dia": dia_of[h.memory.id],
                "score": h.channels[channel].score,
                "rank": h.channels[channel].rank,
                "raw": h.channels[channel].raw,
            }
            for h in result.hits
        ]
    out["lexical_ceiling"] = lexical_ceiling(service, question.text)
    seen = {item["dia"] for channel in CHANNELS for item in out[channel]}
    out["context"] = {dia: facts[dia] for dia in seen if dia in facts}
    return out


def lexical_ceiling(service: SignetService, text: str) -> float:
    """The query's lexical ceiling (sum of its terms' IDF), for replaying score calibrations."""
    conn = service._db.reader()  # read underneath the facade, as context_facts does
    plan = plan_terms(conn, query_tokens(text))
    return query_ceiling(plan.counts, fts_rows(conn))


def context_facts(service: SignetService, dia_of: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Each memory's who and session neighbours (as dia_ids), for offline context replays."""
    # The bench replays the context stage itself, so it reads underneath the facade.
    facts = candidate_context(service._db.reader(), DEFAULT_AGENT_ID, list(dia_of))
    return {
        dia_of[memory_id]: {
            "who": fact.who,
            "previous": dia_of.get(fact.previous_id or ""),
            "next": dia_of.get(fact.next_id or ""),
        }
        for memory_id, fact in facts.items()
    }


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def print_tables(run: Run) -> None:
    header = (
        "| ranker | n | "
        + " | ".join(
            [f"hit@{k}" for k in KS] + [f"recall@{k}" for k in KS] + ["MRR", "p50 ms", "p95 ms"]
        )
        + " |"
    )
    print(f"\nLoCoMo dev: {run.turns} turns remembered in {run.ingest_s:.1f} s "
          f"({run.turns / max(run.ingest_s, 1e-9):.1f}/s through the facade, native MiniLM); "
          f"vectorCompleteness seen: {sorted(run.completeness)}\n")  # fmt: skip
    print(header)
    print("| --- | ---: |" + " ---: |" * (2 * len(KS) + 3))
    for name in RANKERS:
        scores = run.overall[name]
        lat = run.latency_ms[name]
        print(_row(name, scores) + f" {percentile(lat, 50):.1f} | {percentile(lat, 95):.1f} |")
    print(_row("hybrid, min_score 0.1", run.default_threshold) + " | |")
    print("\nper category (recall@10 / MRR):\n")
    print("| category | n | " + " | ".join(f"{n} R@10 | {n} MRR" for n in RANKERS) + " |")
    print("| --- | ---: |" + " ---: | ---: |" * len(RANKERS))
    for category, label in CATEGORY_NAMES.items():
        cells = []
        for name in RANKERS:
            row = run.by_category[(name, category)].row()
            cells.append(f"{row['recall@10']:.3f} | {row['mrr']:.3f}")
        n = run.by_category[("hybrid", category)].count
        print(f"| {category} {label} | {n} | " + " | ".join(cells) + " |")


def _row(name: str, scores: Scores) -> str:
    row = scores.row()
    cells = [f"{row[f'hit@{k}']:.3f}" for k in KS] + [f"{row[f'recall@{k}']:.3f}" for k in KS]
    return f"| {name} | {scores.count} | " + " | ".join(cells) + f" | {row['mrr']:.3f} |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--conversations", type=int, default=0, help="0 = all")
    parser.add_argument("--sweep", action="store_true", help="replay fusion variants offline")
    parser.add_argument("--save-candidates", type=Path, help="write sweep candidates (JSON)")
    parser.add_argument(
        "--captions",
        action="store_true",
        help="off-protocol: append each image turn's blip_caption to its memory text "
        "(what a capture path that keeps image descriptions would store)",
    )
    args = parser.parse_args()
    if not args.data.exists():
        print(f"skipped: {args.data} not found (LoCoMo data is not shipped with the project)")
        return 0
    samples = json.loads(args.data.read_text(encoding="utf-8"))
    if args.conversations:
        samples = samples[: args.conversations]
    run = Run(captions=args.captions)
    if args.captions:
        print("variant: image captions appended to image turns (not the reference protocol)")
    for sample in samples:
        evaluate_sample(sample, run, sweep=args.sweep)
    print_tables(run)
    if args.sweep:
        from locomo_sweep import print_sweep

        if args.save_candidates:
            args.save_candidates.write_text(json.dumps(run.candidates), encoding="utf-8")
        print_sweep(run.candidates)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
