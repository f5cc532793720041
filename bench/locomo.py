"""LoCoMo retrieval evaluation: every ranker and recall stage side by side, in one run.

Run: uv run python bench/locomo.py [--data PATH] [--conversations N] [--sweep]
         [--embedder-variant GRAPH --cache FILE]

Protocol (../shared/data/README.md, retrieval only, no LLM): per conversation a fresh
workspace; first the conversation's **entities** are created (its two speakers, and the proper
nouns the remember-time mention candidates, `graph/mentions.py`, find in its turns: see
`conversation_entities`; nothing of the dataset's annotations, neither evidence ids nor
categories, is read for this), then every turn is remembered through the public facade as
"<speaker>: <text>" with who = speaker, the session date as createdAt, the conversation's
session as sessionId and the dia_id in metadata, so mention linking links each memory to the
entities it names. Every category 1-4 question with evidence is then recalled (limit 10) by
each variant through `SignetService.recall` with `channels`, `context` and `stages` set:
lexical only, vector only, fusion only (no context signals, no stages), flat hybrid (lexical +
semantic + context), flat hybrid with the `rerank` stage, and, once the `traversal` channel is
registered, graph-aware hybrid (every channel, the default stages) with and without the
reranker and with each dampening stage switched off in turn (`variants`).
Scores: hit@k, recall@k (k = 1, 5, 10) and MRR, overall and per category, and each variant's
latency per recall (p50/p95, ms through the facade). The query embedding is computed once per
question and cached for every variant (`QueryCache`), so latencies compare the rankers and
stages, not the embedder (all-MiniLM-L6-v2 costs ~11 ms per query on top).
Ranking is evaluated with min_score 0 (the threshold only trims tails; it is reported apart).
Embedder: the native all-MiniLM-L6-v2 as agent.yaml's defaults run it, or with another graph
(`--embedder-variant`, embedding/graphs.py; give each its own `--cache`); the run also prints
the questions' embedding time p50 / p95 (each embedded once, alone). The data stays in
../shared/data (CC BY-NC 4.0).

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
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
from longmemeval import CachedEmbedder, add_variant_argument, bench_embedder

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.pipeline import DampeningConfig, EvidenceStagesConfig, RerankerConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.entities import canonical_entity_name
from signet_desktop.domain.errors import InvalidInput
from signet_desktop.domain.memory import DEFAULT_AGENT_ID, Actor
from signet_desktop.domain.recall import RecallQuery
from signet_desktop.embedding.provider import EmbeddingProvider, Vectors
from signet_desktop.graph.mentions import candidates
from signet_desktop.recall.evidence_stages import ALWAYS_ON
from signet_desktop.recall.lexical import fts_rows, plan_terms, query_ceiling
from signet_desktop.recall.sanitize import query_tokens
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest
from signet_desktop.storage.recall_context import candidate_context

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev.json"
KS = (1, 5, 10)
LIMIT = 10
CANDIDATES = 50
CHANNELS = ("lexical", "semantic")  # each channel's top CANDIDATES are kept for --sweep
FLAT = ("lexical", "semantic")
RERANK = "rerank"
TRAVERSAL = "traversal"
FLAT_HYBRID = "flat hybrid"  # today's default recall without the graph; min_score row
DEFAULT_MIN_SCORE = SignetConfig().search.min_score
GRAPH_HYBRID = "graph-aware hybrid"
# The bench registers the reranker and every dampening stage (agent.yaml's defaults leave
# some off) so each can be compared on and off; DEFAULT_STAGES are the ones on by default.
BENCH_CONFIG = {
    "memory": {
        "pipelineV2": {
            "reranker": {"enabled": True},
            "dampening": {"gravity": True, "hub": True, "resolution": True},
        }
    }
}
DEFAULT_STAGES = frozenset(
    {f"dampening.{name}" for name, on in DampeningConfig().model_dump().items() if on}
    | ({RERANK} if RerankerConfig().enabled else set())
    | {name for name, on in EvidenceStagesConfig().model_dump().items() if on}
    | set(ALWAYS_ON)
)
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")


@dataclass(frozen=True, slots=True)
class Variant:
    """One ranking through the facade: channels (None: all), context signals, stages (None: all)."""

    name: str
    channels: tuple[str, ...] | None
    context: bool
    stages: tuple[str, ...] | None


def variants(
    channels: Sequence[str], stages: Sequence[str], defaults: frozenset[str] = DEFAULT_STAGES
) -> list[Variant]:
    """The variants the engine's registered channels and stages allow, in table order.

    "fusion only" is flat hybrid without the context signals, so their share shows in the
    same run; the graph-aware rows start from the stages on by default (`defaults`, without
    the reranker) and switch the reranker and each other stage (on by default: off; off by
    default: on) in turn.
    """
    default = tuple(name for name in stages if name != RERANK and name in defaults)
    optional = tuple(name for name in stages if name != RERANK and name not in defaults)
    out = [
        Variant("lexical", ("lexical",), False, ()),
        Variant("vector", ("semantic",), False, ()),
        Variant("fusion only", FLAT, False, ()),
        Variant(FLAT_HYBRID, FLAT, True, ()),
    ]
    if RERANK in stages:
        out.append(Variant(f"{FLAT_HYBRID} + rerank", FLAT, True, (RERANK,)))
    if default and TRAVERSAL not in channels:
        out.append(Variant(f"{FLAT_HYBRID} + {', '.join(default)}", FLAT, True, default))
    if TRAVERSAL in channels:
        every = tuple(channels)
        out.append(Variant(GRAPH_HYBRID, every, True, default))
        if RERANK in stages:
            out.append(Variant(f"{GRAPH_HYBRID} + rerank", every, True, (*default, RERANK)))
        for stage in default:
            kept = tuple(name for name in default if name != stage)
            out.append(Variant(f"{GRAPH_HYBRID}, {stage} off", every, True, kept))
        for stage in optional:
            added = tuple(name for name in stages if name in {*default, stage})
            out.append(Variant(f"{GRAPH_HYBRID}, {stage} on", every, True, added))
    return out


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


_SENTENCE_START = re.compile(r"(^|[.!?:;\"(\n]\s*)$")
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
MIN_NAME_OCCURRENCES = 2


def conversation_entities(conversation: dict[str, Any]) -> list[tuple[str, str]]:
    """(name, entity type) for a conversation: its two speakers, then its proper nouns.

    Reads only the conversation itself (speaker names and turn texts), never the questions,
    their evidence ids or categories. A proper noun is a `graph/mentions.py` candidate phrase
    of the turns that occurs at least twice, at least once mid-sentence (so a capitalised
    sentence opening is not a name), and none of whose words the conversation ever writes in
    lower case ("Thanks", "Hey" and "Wow" are; "Caroline" and "Melanie" are not); the
    longest phrases first, each canonical name once.
    """
    texts = [str(turn.get("text", "")) for _, _, turn in turns(conversation)]
    lowercase = {word for text in texts for word in _WORD.findall(text) if word.islower()}
    speakers = [
        str(conversation[key]) for key in ("speaker_a", "speaker_b") if conversation.get(key)
    ]
    seen = {canonical_entity_name(name) for name in speakers}
    counts: Counter[str] = Counter()
    mid_sentence: set[str] = set()
    shown: dict[str, str] = {}
    for text in texts:
        for candidate in candidates(text):
            words = _WORD.findall(candidate.text)
            if not words or any(w.lower() in lowercase or len(w) < 2 for w in words):
                continue
            counts[candidate.canonical] += 1
            shown.setdefault(candidate.canonical, candidate.text)
            if _mid_sentence(text, candidate.text):
                mid_sentence.add(candidate.canonical)
    out = [(name, "person") for name in dict.fromkeys(speakers)]
    ranked = sorted(counts, key=lambda c: (-len(c.split()), -counts[c], c))
    for canonical in ranked:
        frequent = counts[canonical] >= MIN_NAME_OCCURRENCES and canonical in mid_sentence
        if frequent and canonical not in seen:
            seen.add(canonical)
            out.append((shown[canonical], "unknown"))
    return out


def _mid_sentence(text: str, phrase: str) -> bool:
    """Does `phrase` occur somewhere in `text` that is not the start of a sentence?"""
    for match in re.finditer(rf"(?<!\w){re.escape(phrase)}(?!\w)", text):
        if not _SENTENCE_START.search(text[: match.start()]):
            return True
    return False


def seed_entities(service: SignetService, entities: Iterable[tuple[str, str]]) -> int:
    """Create the entities (the default agent's) before any turn is remembered.

    Through the facade's explicit entity creation (`service.knowledge.create_entity`, as a
    user or agent would), so remember-time mention linking then links every memory that names
    one (it links to existing entities only). Returns the number created.
    """
    actor = Actor(changed_by="bench", actor_type="agent")
    created = 0
    for name, kind in entities:
        _, new = service.knowledge.create_entity(
            DEFAULT_AGENT_ID, name, actor=actor, entity_type=kind
        )
        created += int(new)
    return created


class QueryCache:
    """The shared embedder, with single-text embeddings (queries) memoised for every variant.

    Batches (remembered turns) pass through uncached; a query embedded once is reused by every
    variant of the same question, so the run embeds each question once.
    """

    def __init__(self, inner: EmbeddingProvider) -> None:
        self._inner = inner
        self._cache: dict[str, Vectors] = {}
        self._lock = threading.Lock()
        self.query_ms: list[float] = []  # each question's embedding, as the recall path runs it

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def model(self) -> str:
        return self._inner.model

    @property
    def dimensions(self) -> int:
        return self._inner.dimensions

    def embed(self, texts: Sequence[str]) -> Vectors:
        if len(texts) != 1:
            return self._inner.embed(texts)
        with self._lock:
            found = self._cache.get(texts[0])
        if found is None:
            started = time.perf_counter()
            found = np.array(self._inner.embed(texts), copy=True)
            self.query_ms.append((time.perf_counter() - started) * 1000)
            with self._lock:
                self._cache[texts[0]] = found
        return found


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


def asked_on(sample: dict[str, Any]) -> str:
    """When the questions are asked: the conversation's last session date (they follow it)."""
    return max(date for _, date, _ in turns(sample["conversation"]))


def ranked_dia_ids(
    service: SignetService,
    question: str,
    variant: Variant,
    dia_of: dict[str, str],
    as_of: str | None = None,
) -> tuple[list[str], float, Any]:
    started = time.perf_counter()
    result = service.recall.search(
        RecallQuery(
            query=question,
            limit=LIMIT,
            channels=variant.channels,
            min_score=0.0,
            context=variant.context,
            stages=variant.stages,
            as_of=as_of,
        )
    )
    elapsed = (time.perf_counter() - started) * 1000
    return [dia_of[h.memory.id] for h in result.hits], elapsed, result


@dataclass(slots=True)
class Run:
    """Everything one evaluation run collects."""

    overall: dict[str, Scores] = field(default_factory=lambda: defaultdict(Scores))
    by_category: dict[tuple[str, int], Scores] = field(default_factory=lambda: defaultdict(Scores))
    latency_ms: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    category_latency: dict[tuple[str, int], list[float]] = field(
        default_factory=lambda: defaultdict(list)
    )
    default_threshold: Scores = field(default_factory=Scores)
    candidates: list[dict[str, Any]] = field(default_factory=list)
    ingest_s: float = 0.0
    turns: int = 0
    variants: list[Variant] = field(default_factory=list)
    entities: int = 0
    mentions: int = 0
    reranked: int = 0  # flat hybrid + rerank answers whose hits carry a rerank adjustment
    completeness: set[str] = field(default_factory=set)
    captions: bool = False  # off-protocol variant: append image captions to image turns


def registered(service: SignetService) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The engine's channel and stage names (read underneath the facade, like context_facts)."""
    engine = service.recall._engine
    return engine.channel_names, engine.stage_names


def mention_rows(service: SignetService) -> int:
    row = service._db.reader().execute("SELECT COUNT(*) FROM memory_entity_mentions").fetchone()
    return int(row[0])


def evaluate_sample(
    sample: dict[str, Any], run: Run, embedder: EmbeddingProvider, *, sweep: bool
) -> None:
    config = SignetConfig.model_validate(BENCH_CONFIG)
    with tempfile.TemporaryDirectory() as tmp:
        paths = WorkspacePaths.for_root(Path(tmp))
        service = build_service(paths, config, BuildOptions(embedder=embedder))
        run.variants = run.variants or variants(*registered(service))
        started = time.perf_counter()
        run.entities += seed_entities(service, conversation_entities(sample["conversation"]))
        dia_of = ingest(service, sample, run.captions)
        run.ingest_s += time.perf_counter() - started
        run.turns += len(dia_of)
        run.mentions += mention_rows(service)
        facts = context_facts(service, dia_of) if sweep else {}
        for question in questions(sample):
            embedder.embed([question.text])  # once per question; every variant reuses it
            for variant in run.variants:
                name = variant.name
                try:
                    ranked, ms, result = ranked_dia_ids(
                        service, question.text, variant, dia_of, asked_on(sample)
                    )
                except InvalidInput as exc:  # a variant the engine cannot run: a bench bug
                    raise SystemExit(f"variant {name!r}: {exc}") from exc
                run.overall[name].add(ranked, question.evidence)
                run.by_category[(name, question.category)].add(ranked, question.evidence)
                run.latency_ms[name].append(ms)
                run.category_latency[(name, question.category)].append(ms)
                if result.vector_completeness:
                    run.completeness.add(result.vector_completeness)
                if name == FLAT_HYBRID:
                    kept = [h for h in result.hits if h.score >= DEFAULT_MIN_SCORE]
                    run.default_threshold.add(
                        [dia_of[h.memory.id] for h in kept], question.evidence
                    )
                if variant.stages == (RERANK,) and any(
                    a.stage == RERANK for h in result.hits for a in h.adjustments
                ):
                    run.reranked += 1
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
          f"{run.entities} entities seeded, {run.mentions} mention links; "
          f"vectorCompleteness seen: {sorted(run.completeness)}; "
          f"answers with rerank adjustments: {run.reranked}\n")  # fmt: skip
    print(header)
    print("| --- | ---: |" + " ---: |" * (2 * len(KS) + 3))
    names = [variant.name for variant in run.variants]
    for name in names:
        scores = run.overall[name]
        lat = run.latency_ms[name]
        print(_row(name, scores) + f" {percentile(lat, 50):.1f} | {percentile(lat, 95):.1f} |")
    label = f"{FLAT_HYBRID}, min_score {DEFAULT_MIN_SCORE:g}"
    print(_row(label, run.default_threshold) + " | |")
    print("\nper category (recall@10 / MRR / p50 ms):\n")
    print("| variant | " + " | ".join(f"{c} {label}" for c, label in CATEGORY_NAMES.items()) + " |")
    print("| --- |" + " ---: |" * len(CATEGORY_NAMES))
    counts = " | ".join(f"n={run.by_category[(FLAT_HYBRID, c)].count}" for c in CATEGORY_NAMES)
    print(f"| (questions) | {counts} |")
    for name in names:
        cells = []
        for category in CATEGORY_NAMES:
            row = run.by_category[(name, category)].row()
            p50 = percentile(run.category_latency[(name, category)], 50)
            cells.append(f"{row['recall@10']:.3f} / {row['mrr']:.3f} / {p50:.1f}")
        print(f"| {name} | " + " | ".join(cells) + " |")


def _row(name: str, scores: Scores) -> str:
    row = scores.row()
    cells = [f"{row[f'hit@{k}']:.3f}" for k in KS] + [f"{row[f'recall@{k}']:.3f}" for k in KS]
    return f"| {name} | {scores.count} | " + " | ".join(cells) + f" | {row['mrr']:.3f} |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--conversations", type=int, default=0, help="0 = all")
    parser.add_argument("--cache", type=Path, help="a file keeping the turns' vectors across runs")
    parser.add_argument("--sweep", action="store_true", help="replay fusion variants offline")
    parser.add_argument("--save-candidates", type=Path, help="write sweep candidates (JSON)")
    parser.add_argument(
        "--captions",
        action="store_true",
        help="off-protocol: append each image turn's blip_caption to its memory text "
        "(what a capture path that keeps image descriptions would store)",
    )
    add_variant_argument(parser)
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
    native = bench_embedder(args.embedder_variant)
    print(f"embedder: {native.name} {native.model}")
    if args.cache:
        native = CachedEmbedder(native, args.cache)  # the vectors do not depend on the build
    embedder = QueryCache(native)  # loaded once for every conversation
    started = time.perf_counter()
    for sample in samples:
        evaluate_sample(sample, run, embedder, sweep=args.sweep)
    print(f"run time: {time.perf_counter() - started:.0f} s")
    if len(embedder.query_ms) > 1:
        times = embedder.query_ms[1:]  # the first pays the model's load when not cached
        print(
            f"query embedding: {len(times)} questions, p50 {percentile(times, 50):.2f} ms, "
            f"p95 {percentile(times, 95):.2f} ms"
        )
    if args.cache:
        native.save()
    print_tables(run)
    if args.sweep:
        from locomo_sweep import print_sweep

        if args.save_candidates:
            args.save_candidates.write_text(json.dumps(run.candidates), encoding="utf-8")
        print_sweep(run.candidates)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
