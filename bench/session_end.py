"""Session end of a long Claude Code session: time to canonical JSONL + completed row.

    uv run python bench/session_end.py [--turns 2000] [--runs 5]

Writes a Claude Code transcript of `--turns` conversation turns (user/assistant text, with a
tool call and its result between every pair, as real sessions have), then times
`service.hooks.session_end` — what `POST /api/hooks/session-end` and the native Claude Code
route run: path checks, parsing the JSONL, appending the turns to
memory/claude-code/transcripts/transcript.jsonl (fsync) and committing the completed
`session_transcripts` row. Also a retried session-end (nothing new to append) and a grown
session (+10% turns). The build before this issue had no session capture, so there is no
previous-build column.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.hooks.service import HookContext


def transcript_lines(session: str, turns: int) -> list[dict[str, object]]:
    lines: list[dict[str, object]] = []
    for i in range(turns):
        role = "user" if i % 2 == 0 else "assistant"
        text = f"turn {i}: " + ("we discussed the billing migration and its rollout " * 4)
        content: object = text if role == "user" else [{"type": "text", "text": text}]
        lines.append({"type": role, "uuid": f"{session}-{i}", "sessionId": session,
                      "timestamp": "2026-11-30T10:00:00Z",
                      "message": {"role": role, "content": content}})  # fmt: skip
        if role == "assistant":
            lines.append(
                {
                    "type": "assistant",
                    "uuid": f"{session}-{i}-tool",
                    "message": {
                        "role": "assistant",
                        "content": [
                            {"type": "tool_use", "id": f"t{i}", "name": "Read", "input": {"p": "x"}}
                        ],
                    },
                }
            )
            lines.append(
                {
                    "type": "user",
                    "uuid": f"{session}-{i}-result",
                    "message": {
                        "role": "user",
                        "content": [
                            {"type": "tool_result", "tool_use_id": f"t{i}", "content": "y" * 400}
                        ],
                    },
                }
            )
    return lines  # fmt: skip


def write(path: Path, lines: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    first: list[float] = []
    retry: list[float] = []
    grown: list[float] = []
    size_mb = 0.0
    for run in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            service = build_service(
                WorkspacePaths.for_root(root), SignetConfig(), BuildOptions(no_embedder=True)
            )
            session = f"bench-{run}"
            path = root / "claude" / f"{session}.jsonl"
            write(path, transcript_lines(session, args.turns))
            size_mb = path.stat().st_size / 2**20
            ctx = HookContext(agent_id="default", harness="claude-code", session_key=session)
            for into in (first, retry):
                started = time.perf_counter()
                service.hooks.session_end(ctx, transcript_path=str(path))
                into.append((time.perf_counter() - started) * 1000)
            write(path, transcript_lines(session, args.turns + args.turns // 10))
            started = time.perf_counter()
            service.hooks.session_end(ctx, transcript_path=str(path))
            grown.append((time.perf_counter() - started) * 1000)
            assert service.transcripts.get("default", session).turn_count == (
                args.turns + args.turns // 10
            )
            service.close()
    print(f"session-end of a {args.turns}-turn Claude Code session ({size_mb:.1f} MB JSONL), "
          f"{args.runs} runs, ms\n")  # fmt: skip
    print("| case | p50 | p95 |")
    print("| --- | ---: | ---: |")
    for name, samples in (
        ("first session-end (parse, append, commit)", first),
        ("retried session-end (nothing new)", retry),
        (f"grown session (+{args.turns // 10} turns)", grown),
    ):
        print(f"| {name} | {statistics.median(samples):.0f} | {percentile(samples, 95):.0f} |")


if __name__ == "__main__":
    main()
