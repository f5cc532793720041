"""Dreaming with a real small local model: passes, operations and the seam's rejections.

Opt-in, never in CI (it needs a running OpenAI-compatible server, e.g. llama.cpp's):

    uv run python bench/dream_real_model.py --llm-url http://127.0.0.1:8091 \
        [--model gemma3-270m] [--conversation conv-26] [--sessions 2] \
        [--modes incremental,compact] [--max-input-tokens 12000] [--timeout-s 900]

Without `--llm-url`, or when the server does not answer `/v1/models`, it prints why and
exits 0. Per mode a fresh workspace is built whose `agent.yaml` points the
`memoryExtraction` workload at the server (`executor: llama-cpp`), with realistic evidence:
the first `--sessions` sessions of one LoCoMo dev conversation captured as completed
transcripts through `service.transcripts.capture` (the hooks' capture path; speaker A as the
user, speaker B as the assistant, each turn "<speaker>: <text>"), plus the same turns
remembered as memories through the facade (`bench/locomo.py: ingest`). Then one real pass per
mode through `service.dreaming.trigger` / `wait` / `get_pass`.

Reported as tables: the passes (status, duration, tokens in/out, tool calls by name and
status), the operations proposed / applied / rejected by the seam's reason code (and the tool
calls refused before the seam), a few rejected operations verbatim, and an independent
re-check of every applied content operation: each cited quote must occur verbatim in its
source as `dreaming/sources.py` renders it now (an applied operation failing that is a seam
bug and is printed as such).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from locomo import DEFAULT_DATA, ingest, parse_session_date

from signet_desktop.config.loader import load_config
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.dreaming import PassDetail
from signet_desktop.domain.memory import DEFAULT_AGENT_ID
from signet_desktop.domain.sessions import Turn
from signet_desktop.dreaming import sources
from signet_desktop.embedding.provider import EmbeddingProvider
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService

CONTENT_OPS = frozenset(
    {
        "create_entity",
        "create_aspect",
        "add_claim_value",
        "set_claim_value",
        "supersede_claim_value",
        "create_link",
        "update_link",
        "rename_entity",
        "rename_aspect",
    }
)
HARNESS = "locomo"


def server_model(url: str) -> tuple[str | None, str]:
    """(the first model id the server lists, or None, and why)."""
    try:
        answer = httpx.get(url.rstrip("/") + "/v1/models", timeout=5.0)
        answer.raise_for_status()
        data = answer.json().get("data") or []
    except (httpx.HTTPError, ValueError, AttributeError) as exc:
        return None, f"no OpenAI-compatible server at {url}: {exc}"
    if not data:
        return None, f"{url}/v1/models lists no model"
    return str(data[0].get("id")), "ok"


def agent_settings(
    url: str, model: str, *, max_input: int, timeout_s: int, max_turns: int
) -> dict[str, Any]:
    """agent.yaml's content: llama.cpp for the memoryExtraction workload, bounded Dreaming."""
    return {
        "inference": {
            "targets": {"llama": {"executor": "llama-cpp", "endpoint": url, "models": {model: {}}}},
            "workloads": {"memoryExtraction": "llama"},
        },
        "memory": {
            "dreaming": {
                "enabled": False,
                "maxInputTokens": max_input,
                "maxOutputTokens": 1024,
                "timeoutMs": timeout_s * 1000,
                "maxTurns": max_turns,
            }
        },
    }


def merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """`base` with `extra` merged in, mapping by mapping."""
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def to_yaml(value: dict[str, Any], indent: int = 0) -> str:
    """Block-style YAML for nested mappings of scalars (strings JSON-quoted)."""
    lines = []
    for key, item in value.items():
        head = " " * indent + json.dumps(str(key)) + ":"
        if isinstance(item, dict):
            lines.append(head + (" {}" if not item else ""))
            if item:
                lines.append(to_yaml(item, indent + 2).rstrip("\n"))
        elif isinstance(item, bool):
            lines.append(f"{head} {'true' if item else 'false'}")
        elif isinstance(item, int | float):
            lines.append(f"{head} {item}")
        else:
            lines.append(f"{head} {json.dumps(str(item))}")
    return "\n".join(lines) + "\n"


def open_workspace(
    root: Path, settings: dict[str, Any], *, embedder: EmbeddingProvider | None = None
) -> SignetService:
    """A service over a fresh workspace whose agent.yaml holds `settings` (loaded as a user's)."""
    (root / "agent.yaml").write_text(to_yaml(settings), encoding="utf-8")
    paths = WorkspacePaths.for_root(root)
    config = load_config(paths).config
    options = BuildOptions(embedder=embedder) if embedder else BuildOptions(no_embedder=True)
    return build_service(paths, config, options)


def subset(sample: dict[str, Any], sessions: int) -> dict[str, Any]:
    """The sample with only its first `sessions` sessions (0: all)."""
    if not sessions:
        return sample
    conversation = {
        key: value
        for key, value in sample["conversation"].items()
        if not key.startswith("session_") or int(key.split("_")[1]) <= sessions
    }
    return {**sample, "conversation": conversation}


def capture_transcripts(service: SignetService, sample: dict[str, Any]) -> list[str]:
    """Each session of the sample as one completed transcript (the capture path); keys."""
    conversation = sample["conversation"]
    speaker_a = conversation.get("speaker_a")
    keys = []
    numbers = sorted(
        int(key.split("_")[1])
        for key, value in conversation.items()
        if key.startswith("session_") and isinstance(value, list)
    )
    for number in numbers:
        date = parse_session_date(conversation[f"session_{number}_date_time"])
        turns = [
            Turn(
                turn_id=str(turn["dia_id"]),
                role="user" if turn["speaker"] == speaker_a else "assistant",
                text=f"{turn['speaker']}: {turn['text']}",
                timestamp=date,
            )
            for turn in conversation[f"session_{number}"]
        ]
        key = f"{sample['sample_id']}-session-{number}"
        service.transcripts.capture(DEFAULT_AGENT_ID, key, HARNESS, turns, complete=True)
        keys.append(key)
    return keys


@dataclass(slots=True)
class PassReport:
    """One finished pass, summarised for the tables."""

    mode: str
    pass_id: str
    status: str
    seconds: float
    input_tokens: int
    output_tokens: int
    window_tokens: int
    window_sources: int
    tools: Counter[str] = field(default_factory=Counter)
    tool_status: Counter[str] = field(default_factory=Counter)
    operations: Counter[str] = field(default_factory=Counter)  # status
    codes: Counter[str] = field(default_factory=Counter)  # "status code"
    rejected: list[dict[str, Any]] = field(default_factory=list)
    refused_calls: list[dict[str, Any]] = field(default_factory=list)
    seam_bugs: list[str] = field(default_factory=list)
    applied: list[dict[str, Any]] = field(default_factory=list)
    summary: str = ""
    error: str | None = None


def run_pass(service: SignetService, mode: str, timeout_s: float) -> PassReport:
    """Trigger one pass through `service.dreaming`, wait for it, and summarise it."""
    started = time.perf_counter()
    pass_id = service.dreaming.trigger(DEFAULT_AGENT_ID, mode)
    if not service.dreaming.wait(pass_id, timeout=timeout_s + 60):
        service.dreaming.close(timeout=60)
    seconds = time.perf_counter() - started
    detail = service.dreaming.get_pass(DEFAULT_AGENT_ID, pass_id)
    return summarise(service, mode, detail, seconds)


def summarise(service: SignetService, mode: str, detail: PassDetail, seconds: float) -> PassReport:
    record = detail.record
    window = record.evidence_window or {}
    report = PassReport(
        mode=mode,
        pass_id=record.id,
        status=record.status,
        seconds=seconds,
        input_tokens=record.usage.input_tokens,
        output_tokens=record.usage.output_tokens,
        window_tokens=int(window.get("tokens", 0)),
        window_sources=len(window.get("items") or []),
        summary=record.summary or "",
        error=record.error,
    )
    for call in detail.tool_calls:
        report.tools[call.tool_name] += 1
        report.tool_status[f"{call.tool_name} {call.status}"] += 1
        if call.status != "ok":
            report.refused_calls.append(
                {"tool": call.tool_name, "status": call.status, "error": call.error,
                 "arguments": call.input}
            )  # fmt: skip
    reader = sources.SourceReader(service._db.reader(), DEFAULT_AGENT_ID)  # the re-check
    for op in detail.operations:
        report.operations[op.status] += 1
        report.codes[f"{op.status} {op.code or '-'}"] += 1
        shown = {
            "operation": op.operation,
            "payload": dict(op.payload),
            "evidence": [dict(e) for e in op.evidence],
            "provenance": op.provenance,
            "status": op.status,
            "code": op.code,
            "reason": op.reason,
        }
        if op.status in ("failed", "skipped") and op.code != "no_change":
            report.rejected.append(shown)
        if op.status == "applied":
            report.applied.append(shown)
            report.seam_bugs += recheck(reader, shown)
    return report


def recheck(reader: sources.SourceReader, op: dict[str, Any]) -> list[str]:
    """Why an applied operation should not have been applied (empty: it was right to)."""
    if op["operation"] not in CONTENT_OPS:
        return []
    found = []
    verbatim = 0
    for item in op["evidence"]:
        source = reader.load(item.get("source_ref"))
        if source.contains(str(item.get("quote", ""))):
            verbatim += 1
        elif not source.ok:
            found.append(f"{op['operation']}: source {item.get('source_ref')!r} is {source.code}")
    if verbatim == 0:
        found.append(f"{op['operation']} applied without a verbatim quote: {op['evidence']!r}")
    return found


def print_reports(reports: Sequence[PassReport], examples: int = 6) -> None:
    print("\n| mode | status | s | tokens in | tokens out | window sources, tokens | tools |")
    print("| --- | --- | ---: | ---: | ---: | ---: | --- |")
    for r in reports:
        tools = ", ".join(f"{name} {n}" for name, n in sorted(r.tools.items())) or "none"
        window = f"{r.window_sources}, {r.window_tokens:,}"
        print(f"| {r.mode} | {r.status} | {r.seconds:.0f} | {r.input_tokens:,} | "
              f"{r.output_tokens:,} | {window} | {tools} |")  # fmt: skip
    print("\ntool calls by status:\n")
    print("| mode | tool | status | n |")
    print("| --- | --- | --- | ---: |")
    for r in reports:
        for key, n in sorted(r.tool_status.items()):
            tool, status = key.split(" ", 1)
            print(f"| {r.mode} | {tool} | {status} | {n} |")
    print("\noperations by outcome and reason code (from dreaming_operations):\n")
    print("| mode | status | code | n |")
    print("| --- | --- | --- | ---: |")
    for r in reports:
        if not r.codes:
            print(f"| {r.mode} | (none submitted) | | 0 |")
        for key, n in sorted(r.codes.items()):
            status, code = key.split(" ", 1)
            print(f"| {r.mode} | {status} | {code} | {n} |")
    for r in reports:
        print(f"\n{r.mode} pass {r.pass_id}: {r.status}; error: {r.error}; summary: "
              f"{r.summary[:300]!r}")  # fmt: skip
        for op in r.rejected[:examples]:
            print("  rejected:", json.dumps(op, ensure_ascii=False)[:600])
        for call in r.refused_calls[:examples]:
            print("  tool call", call["status"], json.dumps(call, ensure_ascii=False)[:600])
        for op in r.applied[:examples]:
            print("  applied:", json.dumps(op, ensure_ascii=False)[:400])
        for bug in r.seam_bugs:
            print("  SEAM BUG:", bug)
    bugs = sum(len(r.seam_bugs) for r in reports)
    applied = sum(r.operations["applied"] for r in reports)
    print(f"\nre-check of applied content operations: {applied} applied, {bugs} wrongly applied")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--llm-url", help="the OpenAI-compatible server, e.g. http://127.0.0.1:8091"
    )
    parser.add_argument("--model", help="model name to send (default: the server's first)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--conversation", default="conv-26")
    parser.add_argument("--sessions", type=int, default=2, help="first N sessions (0: all)")
    parser.add_argument("--modes", default="incremental,compact")
    parser.add_argument("--max-input-tokens", type=int, default=12_000)
    parser.add_argument("--timeout-s", type=int, default=900, help="one pass's deadline")
    parser.add_argument("--max-turns", type=int, default=12)
    parser.add_argument("--json", type=Path, help="also write the reports as JSON")
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
    model = args.model or listed
    samples = json.loads(args.data.read_text(encoding="utf-8"))
    sample = next((s for s in samples if s["sample_id"] == args.conversation), None)
    if sample is None:
        raise SystemExit(f"no conversation {args.conversation!r} in {args.data}")
    sample = subset(sample, args.sessions)
    settings = agent_settings(
        args.llm_url, model, max_input=args.max_input_tokens, timeout_s=args.timeout_s,
        max_turns=args.max_turns,
    )  # fmt: skip
    reports = []
    for mode in args.modes.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            service = open_workspace(Path(tmp), settings)
            try:
                keys = capture_transcripts(service, sample)
                memories = ingest(service, sample)
                print(f"{mode}: {len(keys)} transcripts, {len(memories)} memories of "
                      f"{args.conversation}; {model} at {args.llm_url}", flush=True)  # fmt: skip
                report = run_pass(service, mode, args.timeout_s)
                print(f"  {report.status} in {report.seconds:.0f} s", flush=True)
                reports.append(report)
            finally:
                service.dreaming.close(timeout=30)
                service.close()
    print_reports(reports)
    if args.json:
        args.json.write_text(
            json.dumps([_jsonable(r) for r in reports], indent=1, ensure_ascii=False),
            encoding="utf-8",
        )
    return 0


def _jsonable(report: PassReport) -> dict[str, Any]:
    return {
        name: (dict(value) if isinstance(value, Counter) else value)
        for name, value in ((n, getattr(report, n)) for n in report.__slots__)  # type: ignore[attr-defined]
    }


if __name__ == "__main__":
    raise SystemExit(main())
