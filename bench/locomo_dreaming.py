"""Does a Dreaming pass with a real local model change LoCoMo recall? Per category, before/after.

Opt-in, never in CI (it needs a running OpenAI-compatible server, e.g. llama.cpp's):

    uv run python bench/locomo_dreaming.py --llm-url http://127.0.0.1:8091 \
        [--conversations conv-30] [--passes 1] [--mode compact] [--max-input-tokens 12000]

Without `--llm-url`, or when the server does not answer, it prints why and exits 0; without
the LoCoMo data likewise. Per conversation, in a fresh workspace whose agent.yaml is
`bench/locomo.py`'s bench config plus the llama.cpp `memoryExtraction` workload:

1. `bench/locomo.py`'s protocol, by import: the conversation's entities seeded
   (`conversation_entities`, `seed_entities`), every turn remembered (`ingest`), each
   category 1-4 question with evidence recalled (limit 10) by "flat hybrid" and
   "graph-aware hybrid" (`variants`, `ranked_dia_ids`), scored (`Scores`);
2. `--passes` real Dreaming passes through `service.dreaming` over that conversation's
   evidence (its turns as memories: recall returns memories, so only graph rows that cite
   memories can move a ranking); each pass's window is bounded by `--max-input-tokens`, so
   later passes are continuations over the turns an earlier one left out;
3. the same questions again; the graph's row counts before and after (entities, aspects,
   claims, links, mention links) and the passes' own tables (`bench/dream_real_model.py`).

Reports recall@10 and MRR per category before → after for both variants. Nothing is
extrapolated: a subset (fewer conversations or passes) is said as such in the output.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dream_real_model import (
    PassReport,
    agent_settings,
    merge,
    open_workspace,
    print_reports,
    run_pass,
    server_model,
)
from locomo import (
    BENCH_CONFIG,
    CATEGORY_NAMES,
    DEFAULT_DATA,
    FLAT_HYBRID,
    GRAPH_HYBRID,
    QueryCache,
    Scores,
    conversation_entities,
    ingest,
    questions,
    ranked_dia_ids,
    registered,
    seed_entities,
    variants,
)

from signet_desktop.config.models import SignetConfig
from signet_desktop.domain.memory import DEFAULT_AGENT_ID
from signet_desktop.embedding.provider import EmbeddingProvider
from signet_desktop.service.container import configured_embedder
from signet_desktop.service.facade import SignetService

COMPARED = (FLAT_HYBRID, GRAPH_HYBRID)
GRAPH_TABLES = {
    "entities": "entities",
    "aspects": "entity_aspects",
    "claims": "entity_attributes",
    "links": "entity_dependencies",
    "mentions": "memory_entity_mentions",
}

Board = dict[tuple[str, int], Scores]  # (variant, category) -> scores; category 0 = all


@dataclass(slots=True)
class ConversationResult:
    sample_id: str
    questions: int
    before: Board = field(default_factory=lambda: defaultdict(Scores))
    after: Board = field(default_factory=lambda: defaultdict(Scores))
    graph_before: dict[str, int] = field(default_factory=dict)
    graph_after: dict[str, int] = field(default_factory=dict)
    passes: list[PassReport] = field(default_factory=list)
    seconds: float = 0.0


def graph_counts(service: SignetService) -> dict[str, int]:
    """Active rows of the agent's graph tables (read underneath the facade, as locomo.py does)."""
    conn = service._db.reader()
    out = {}
    for name, table in GRAPH_TABLES.items():
        live = "" if table == "memory_entity_mentions" else " AND status = 'active'"
        where = "agent_id = ?" + live
        row = conn.execute(f"SELECT COUNT(*) FROM {table} WHERE {where}", (DEFAULT_AGENT_ID,))
        out[name] = int(row.fetchone()[0])
    return out


def evaluate(service: SignetService, sample: dict[str, Any], dia_of: dict[str, str]) -> Board:
    """flat hybrid and graph-aware hybrid over every scored question of the sample."""
    chosen = [v for v in variants(*registered(service)) if v.name in COMPARED]
    board: Board = defaultdict(Scores)
    for question in questions(sample):
        for variant in chosen:
            ranked, _, _ = ranked_dia_ids(service, question.text, variant, dia_of)
            board[(variant.name, 0)].add(ranked, question.evidence)
            board[(variant.name, question.category)].add(ranked, question.evidence)
    return board


def run_conversation(
    sample: dict[str, Any],
    settings: dict[str, Any],
    embedder: EmbeddingProvider,
    *,
    passes: int,
    mode: str,
    timeout_s: float,
) -> ConversationResult:
    started = time.perf_counter()
    result = ConversationResult(sample["sample_id"], len(questions(sample)))
    with tempfile.TemporaryDirectory() as tmp:
        service = open_workspace(Path(tmp), settings, embedder=embedder)
        try:
            seed_entities(service, conversation_entities(sample["conversation"]))
            dia_of = ingest(service, sample)
            result.graph_before = graph_counts(service)
            result.before = evaluate(service, sample, dia_of)
            print(f"{sample['sample_id']}: {len(dia_of)} turns, {result.questions} questions; "
                  f"before: {_brief(result.before)}", flush=True)  # fmt: skip
            for n in range(passes):
                report = run_pass(service, mode, timeout_s)
                result.passes.append(report)
                print(f"  pass {n + 1}/{passes} ({mode}): {report.status} in "
                      f"{report.seconds:.0f} s, operations {dict(report.operations)}",
                      flush=True)  # fmt: skip
            result.graph_after = graph_counts(service)
            result.after = evaluate(service, sample, dia_of)
            print(f"  after: {_brief(result.after)}", flush=True)
        finally:
            service.dreaming.close(timeout=30)
            service.close()
    result.seconds = time.perf_counter() - started
    return result


def _brief(board: Board) -> str:
    rows = {name: board[(name, 0)].row() for name in COMPARED}
    return "; ".join(
        f"{name} R@10 {row['recall@10']:.3f} MRR {row['mrr']:.3f}" for name, row in rows.items()
    )


def combine(results: list[ConversationResult], attr: str) -> Board:
    """Question-weighted totals over conversations."""
    total: Board = defaultdict(Scores)
    for result in results:
        for key, scores in getattr(result, attr).items():
            into = total[key]
            into.count += scores.count
            into.mrr += scores.mrr
            for k in scores.hit:
                into.hit[k] += scores.hit[k]
                into.recall[k] += scores.recall[k]
    return total


def print_tables(results: list[ConversationResult], total_questions: int) -> None:
    before, after = combine(results, "before"), combine(results, "after")
    scored = sum(r.questions for r in results)
    print(f"\nconversations: {', '.join(r.sample_id for r in results)} "
          f"({scored} of the dev split's {total_questions} scored questions)\n")  # fmt: skip
    print("recall@10 / MRR, before → after the passes:\n")
    print("| variant | category | n | recall@10 before | after | MRR before | after |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for name in COMPARED:
        for category, label in [(0, "all"), *CATEGORY_NAMES.items()]:
            b, a = before[(name, category)].row(), after[(name, category)].row()
            n = before[(name, category)].count
            print(f"| {name} | {label} | {n} | {b['recall@10']:.3f} | {a['recall@10']:.3f} | "
                  f"{b['mrr']:.3f} | {a['mrr']:.3f} |")  # fmt: skip
    print("\ngraph rows (active) before → after, and the passes' time:\n")
    print("| conversation | " + " | ".join(GRAPH_TABLES) + " | passes | pass s | total s |")
    print("| --- |" + " ---: |" * (len(GRAPH_TABLES) + 3))
    for r in results:
        cells = [f"{r.graph_before.get(k, 0)} → {r.graph_after.get(k, 0)}" for k in GRAPH_TABLES]
        pass_s = sum(p.seconds for p in r.passes)
        print(f"| {r.sample_id} | " + " | ".join(cells)
              + f" | {len(r.passes)} | {pass_s:.0f} | {r.seconds:.0f} |")  # fmt: skip
    print_reports([p for r in results for p in r.passes], examples=3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--llm-url", help="the OpenAI-compatible server, e.g. http://127.0.0.1:8091"
    )
    parser.add_argument("--model", help="model name to send (default: the server's first)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument(
        "--conversations", default="", help="comma-separated sample ids (default: all five)"
    )
    parser.add_argument("--passes", type=int, default=1, help="Dreaming passes per conversation")
    parser.add_argument("--mode", default="compact")
    parser.add_argument("--max-input-tokens", type=int, default=12_000)
    parser.add_argument("--timeout-s", type=int, default=900, help="one pass's deadline")
    parser.add_argument("--max-turns", type=int, default=12)
    args = parser.parse_args()
    if not args.llm_url:
        print("skipped: no --llm-url given (this bench needs a running llama.cpp server)")
        return 0
    listed, why = server_model(args.llm_url)
    if listed is None:
        print(f"skipped: {why}")
        return 0
    if not args.data.exists():
        print(f"skipped: {args.data} not found (LoCoMo data is not shipped with the project)")
        return 0
    samples = json.loads(args.data.read_text(encoding="utf-8"))
    total_questions = sum(len(questions(s)) for s in samples)
    wanted = [c for c in args.conversations.split(",") if c]
    if wanted:
        samples = [s for s in samples if s["sample_id"] in wanted]
    settings = merge(
        BENCH_CONFIG,
        agent_settings(
            args.llm_url, args.model or listed, max_input=args.max_input_tokens,
            timeout_s=args.timeout_s, max_turns=args.max_turns,
        ),
    )  # fmt: skip
    native = configured_embedder(SignetConfig())
    if native is None:
        raise SystemExit("the bench needs the native embedder")
    embedder = QueryCache(native)
    print(f"model {args.model or listed} at {args.llm_url}; {args.passes} {args.mode} pass(es) "
          f"per conversation, window ≤ {args.max_input_tokens} tokens", flush=True)  # fmt: skip
    results = [
        run_conversation(
            sample,
            settings,
            embedder,
            passes=args.passes,
            mode=args.mode,
            timeout_s=args.timeout_s,
        )
        for sample in samples
    ]
    print_tables(results, total_questions)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
