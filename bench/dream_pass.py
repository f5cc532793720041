"""Dreaming pass overhead, the provider's own time excluded, on a 100k-token evidence window.

    uv run python bench/dream_pass.py [--tokens 100000] [--runs 7]

Each run builds a fresh database with `--tokens` of memories (1,000 characters each, 250
tokens), then runs one whole pass (`PassRunner.begin` + `run`) against a provider that answers
instantly from a script: 5 search_evidence, 5 get_evidence, 2 apply_ontology_ops of 10
create_entity operations each (every one citing an exact quote, so the real apply seam
validates and writes them), runbook_write, and a final answer. Stages timed per run:

- window: evidence selection, content-safety gate, rendering and packing, stored with the
  runbook (`PassRunner._prepare`);
- tools: the tool calls served (search/get evidence, the apply seam's validation and writes);
- recording: the tool-call trace and usage rows written after each call;
- finish: the pass ended, consumption rows written, state updated;
- provider: the scripted provider's time (≈ 0; reported to show it is excluded);
- overhead: the pass's wall time minus the provider's.

Prints a table of p50/p95 per stage in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from signet_desktop.config.models import DreamingConfig
from signet_desktop.domain.memory import NewMemory
from signet_desktop.dreaming import tools as tools_module
from signet_desktop.dreaming.apply import PassSeam
from signet_desktop.dreaming.runner import PassRunner
from signet_desktop.inference.types import ChatRequest, ChatResponse, ToolCall, Usage
from signet_desktop.storage import dreaming_passes, memories
from signet_desktop.storage.database import open_database

WORDS = "billing postgres deploy rollout cache queue invoice schema migration backup".split()
CHARS = 1_000

Timings = dict[str, list[float]]


class InstantProvider:
    """Answers each request at once with the next scripted response."""

    name = "instant"
    model = "script"

    def __init__(self, steps: list[ChatResponse]) -> None:
        self.steps = list(steps)

    def complete(self, request: ChatRequest) -> ChatResponse:
        return self.steps.pop(0) if self.steps else _answer("done")


def _answer(text: str, *calls: tuple[str, dict[str, Any]]) -> ChatResponse:
    tool_calls = tuple(ToolCall(f"c{n}", name, json.dumps(a)) for n, (name, a) in enumerate(calls))
    return ChatResponse(text, tool_calls, "tool_calls" if calls else "stop", Usage(1000, 100),
                        "script", "instant", 0.0, 0.0)  # fmt: skip


def _text(n: int) -> str:
    words = " ".join(WORDS[(n * 7 + k) % len(WORDS)] for k in range(400))
    return f"Note {n}: the team moved service {n} to Lisbon. {words}"[:CHARS]


def _script(ids: list[str]) -> list[ChatResponse]:
    steps = [_answer("", ("search_evidence", {"query": f"service {n} Lisbon"})) for n in range(5)]
    steps += [_answer("", ("get_evidence", {"sourceRef": f"memory:{ids[n]}"})) for n in range(5)]
    for batch in range(2):
        ops = [
            {
                "operation": "create_entity",
                "payload": {"name": f"Service {batch * 10 + k}", "type": "system"},
                "evidence": [{"quote": "moved service", "source_ref": f"memory:{ids[k]}"}],
                "confidence": 0.9,
            }
            for k in range(10)
        ]
        steps.append(_answer("", ("apply_ontology_ops", {"operations": ops})))
    steps.append(_answer("", ("runbook_write", {"summary": "bench", "openQuestions": []})))
    steps.append(_answer("done"))
    return steps


@contextmanager
def timed(owner: Any, name: str, bucket: list[float]) -> Iterator[None]:
    """Wrap `owner.name` so each call adds its duration (s) to `bucket`."""
    original: Callable[..., Any] = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            bucket.append(time.perf_counter() - start)

    setattr(owner, name, wrapper)
    try:
        yield
    finally:
        setattr(owner, name, original)


def one_run(tokens: int, root: Path) -> dict[str, float]:
    db = open_database(root / "memories.db", with_vec=False)
    try:
        count = max(1, tokens * 4 // CHARS)
        ids = [f"m{n:05d}" for n in range(count)]
        with db.write() as conn:
            for n, memory_id in enumerate(ids):
                memories.insert_memory(conn, memory_id, NewMemory(agent_id="a", content=_text(n)),
                                       actor="bench", embedding_model=None)  # fmt: skip
        config = DreamingConfig(enabled=True)
        run = PassRunner(db, config=config, seam=lambda a, p: PassSeam(db, a, p))
        provider = InstantProvider(_script(ids))
        parts: dict[str, list[float]] = defaultdict(list)
        with (
            timed(PassRunner, "_prepare", parts["window"]),
            timed(tools_module.PassTools, "call", parts["tools"]),
            timed(dreaming_passes, "record_tool_call", parts["recording"]),
            timed(dreaming_passes, "add_usage", parts["recording"]),
            timed(PassRunner, "_finish", parts["finish"]),
            timed(provider, "complete", parts["provider"]),
        ):
            start = time.perf_counter()
            pass_id = run.begin("a", "incremental", "manual", provider)
            done = run.run("a", pass_id, provider)
            wall = time.perf_counter() - start
        assert done.status == "completed", done.error
        assert done.mutations.applied == 20, done.mutations
        window = done.evidence_window or {}
        assert window.get("tokens", 0) >= tokens * 0.95, window.get("tokens")
        calls = dreaming_passes.tool_calls(db.reader(), "a", pass_id)
        assert len(calls) == 13
        out = {name: sum(values) * 1000 for name, values in parts.items()}
        out["overhead"] = (wall - sum(parts["provider"])) * 1000
        out["window_tokens"] = float(window.get("tokens", 0))
        return out
    finally:
        db.close()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    results: Timings = defaultdict(list)
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            for name, value in one_run(args.tokens, Path(tmp)).items():
                results[name].append(value)
    tokens = int(statistics.median(results.pop("window_tokens")))
    print(f"Dreaming pass overhead, {tokens:,}-token window, {args.runs} runs (ms)")
    print(f"{'stage':<10} {'p50':>9} {'p95':>9}")
    for name in ("window", "tools", "recording", "finish", "provider", "overhead"):
        values = results[name]
        print(f"{name:<10} {pct(values, 0.5):>9.1f} {pct(values, 0.95):>9.1f}")


if __name__ == "__main__":
    main()
