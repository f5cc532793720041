"""LoCoMo through the real path: the dev conversations as harness sessions, recalled as turns.

Run: uv run python bench/locomo_transcripts.py [--data PATH] [--conversations N]

Per conversation a fresh workspace. Every LoCoMo session becomes one Claude Code session sent
through the session-end hook (`HookService.session_end` with its turns, what
`POST /api/hooks/session-end {transcript: [...]}` runs — nothing goes through remember): the
first speaker's turns as `user`, the other's as `assistant`, each turn's text "<speaker>:
<text>" and the session date as its time. No LLM, no memories: what the session said is only
reachable through recall's `transcript` channel. Each category 1-4 question with evidence is
recalled with `channels: ["transcript"]`, limit 10, min_score 0 (ranking only, like
bench/locomo.py), and a hit's (session, turn) is mapped back to its dia_id (a question's
reply, shown with it, counts as the next rank). Scores: hit@k,
recall@k (k = 1, 5, 10), MRR, overall and per category, with latency per recall.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from locomo import CATEGORY_NAMES, DEFAULT_DATA, KS, LIMIT, Scores, questions, turns

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.recall import RecallQuery
from signet_desktop.domain.sessions import Turn
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from signet_desktop.service.hooks.service import HookContext

TRANSCRIPT = ("transcript",)


def send_sessions(service: SignetService, sample: dict[str, Any]) -> dict[tuple[str, int], str]:
    """Each LoCoMo session through the session-end hook; (session key, turn) -> dia_id."""
    by_session: dict[int, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
    for number, date, turn in turns(sample["conversation"]):
        by_session[number].append((date, turn))
    first_speaker = sample["conversation"]["speaker_a"]
    dia_of: dict[tuple[str, int], str] = {}
    for number, items in sorted(by_session.items()):
        key = f"{sample['sample_id']}-session-{number}"
        said = []
        for ordinal, (date, turn) in enumerate(items):
            role = "user" if turn["speaker"] == first_speaker else "assistant"
            said.append(Turn(turn["dia_id"], role, f"{turn['speaker']}: {turn['text']}", date))
            dia_of[(key, ordinal)] = turn["dia_id"]
        ctx = HookContext(agent_id="default", harness="claude-code", session_key=key)
        service.hooks.session_end(ctx, turns=said)
    return dia_of


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--conversations", type=int, default=0)
    args = parser.parse_args()
    if not args.data.exists():
        print(f"skipped: {args.data} not found (LoCoMo data is not shipped with the project)")
        return
    samples = json.loads(args.data.read_text(encoding="utf-8"))
    if args.conversations:
        samples = samples[: args.conversations]
    overall = Scores()
    by_category: dict[int, Scores] = defaultdict(Scores)
    latencies: list[float] = []
    for sample in samples:
        with tempfile.TemporaryDirectory() as tmp:
            options = BuildOptions(embedder=HashEmbedder(64))
            service = build_service(WorkspacePaths.for_root(Path(tmp)), SignetConfig(), options)
            dia_of = send_sessions(service, sample)
            for question in questions(sample):
                query = RecallQuery(question.text, limit=LIMIT, channels=TRANSCRIPT, min_score=0.0)
                started = time.perf_counter()
                result = service.recall.search(query)
                latencies.append((time.perf_counter() - started) * 1000)
                ranked = []  # a question's reply is shown with it: it counts right after it
                for t in result.turns:
                    ranked.append(dia_of[(t.session_key, t.turn_index)])
                    if t.reply is not None:
                        ranked.append(dia_of[(t.session_key, t.reply.turn_index)])
                overall.add(ranked, question.evidence)
                by_category[question.category].add(ranked, question.evidence)
            service.close()
    columns = [f"hit@{k}" for k in KS] + [f"recall@{k}" for k in KS] + ["mrr"]
    print(f"\nLoCoMo {args.data.name}: {len(samples)} conversations, {overall.count} questions")
    print("transcript channel only, sessions sent through the session-end hook\n")
    print("| questions | " + " | ".join(columns) + " |")
    print("| --- |" + " ---: |" * len(columns))
    rows = [("all", overall)] + [(CATEGORY_NAMES[c], by_category[c]) for c in sorted(by_category)]
    for name, scores in rows:
        row = scores.row()
        cells = " | ".join(f"{row[c]:.3f}" for c in columns)
        print(f"| {name} ({scores.count}) | {cells} |")
    ordered = sorted(latencies)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    print(f"\nlatency per recall: p50 {statistics.median(latencies):.1f} ms, p95 {p95:.1f} ms")


if __name__ == "__main__":
    main()
