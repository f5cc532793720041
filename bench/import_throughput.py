"""Claude Code history import: messages/s for a clean import, and the resume after a kill -9.

    uv run python bench/import_throughput.py [--sessions 100] [--messages 20000] [--runs 3]

Writes a synthetic Claude Code history (`--sessions` files under projects/<slug>/, together
`--messages` user/assistant messages, each assistant turn with thinking and a tool call, the
first exchange with a tool result and a sidechain line, as real files have), then times
`ImportService.start(..., wait=True)` — staging every file, parsing, appending the canonical
JSONL (fsync per session) and committing each session's rows:

- clean: a fresh workspace, the whole history;
- rerun: the same import again (every file unchanged: stat and skip);
- resume: a child process is killed with SIGKILL (SIGNET_IMPORT_FAULT=record.finalised:N)
  after half the sessions were finalised; then the time of the restart (`recover()`) plus
  the rerun that finishes the import, beside what half a clean import costs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from support.history_files import write_claude_project

from signet_desktop.service.imports.faults import ENV, FaultPoints
from signet_desktop.service.imports.harness import claude_code_importer
from signet_desktop.service.imports.service import ImportService
from signet_desktop.service.transcripts.service import TranscriptService
from signet_desktop.storage.database import open_database

CHILD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from signet_desktop.service.imports.harness import claude_code_importer
    from signet_desktop.service.imports.service import ImportService
    from signet_desktop.service.transcripts.service import TranscriptService
    from signet_desktop.storage.database import open_database

    root, history = Path(sys.argv[1]), Path(sys.argv[2])
    db = open_database(root / "memory" / "memories.db")
    transcripts = TranscriptService(db, root)
    imports = ImportService(
        db, root, transcripts, importers=[claude_code_importer()], allowed_roots=[history]
    )
    imports.start("default", "claude-code", str(history), wait=True)
    """
)


def run_import(root: Path, history: Path) -> tuple[float, int, int]:
    """Seconds for recover() + one import; records and turns it imported."""
    (root / "memory").mkdir(parents=True, exist_ok=True)
    db = open_database(root / "memory" / "memories.db")
    try:
        started = time.perf_counter()
        transcripts = TranscriptService(db, root)
        transcripts.recover()
        imports = ImportService(
            db,
            root,
            transcripts,
            importers=[claude_code_importer()],
            allowed_roots=[history],
            faults=FaultPoints(),
        )
        ticket = imports.start("default", "claude-code", str(history), wait=True)
        elapsed = time.perf_counter() - started
        run = imports.run("default", ticket.run_id)
        return elapsed, run.counts.records_imported, run.counts.turns_imported
    finally:
        db.close()


def killed_at(root: Path, history: Path, sessions: int) -> float:
    (root / "memory").mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), str(history)],
        env={**os.environ, ENV: f"record.finalised:{sessions}"},
        capture_output=True,
        text=True,
        check=False,
    )
    if child.returncode != -9:
        raise SystemExit(f"the child was not killed: {child.returncode} {child.stderr}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    exchanges = max(1, args.messages // args.sessions // 2)
    messages = exchanges * 2 * args.sessions
    with tempfile.TemporaryDirectory(prefix="signet-import-bench-") as tmp:
        base = Path(tmp)
        history = base / "claude" / "projects"
        write_claude_project(history, args.sessions, exchanges)
        size = sum(p.stat().st_size for p in history.rglob("*.jsonl"))
        clean, rerun, resume, child, half = [], [], [], [], []
        for n in range(args.runs):
            root = base / f"clean{n}"
            elapsed, records, turns = run_import(root, history)
            assert (records, turns) == (args.sessions, messages), (records, turns)
            clean.append(elapsed)
            rerun.append(run_import(root, history)[0])
            killed = base / f"killed{n}"
            child.append(killed_at(killed, history, args.sessions // 2))
            elapsed, records, turns = run_import(killed, history)
            assert records == args.sessions - args.sessions // 2, records
            resume.append(elapsed)
            half.append(statistics.median(clean) / 2)
    median = statistics.median
    print(
        f"Claude Code history: {args.sessions} sessions, {messages:,} messages "
        f"({size / 2**20:.1f} MB of JSONL), median of {args.runs} runs\n"
    )
    rows = [
        ("clean import", median(clean), f"{messages / median(clean):,.0f} msg/s"),
        ("rerun, nothing new", median(rerun), f"{args.sessions / median(rerun):,.0f} files/s"),
        ("child killed at 50%", median(child), "process start + half the import"),
        (
            "restart + resume to 100%",
            median(resume),
            f"{median(resume) / median(half):.2f}x half a clean import",
        ),
    ]
    print(f"| {'step':<26} | {'seconds':>8} | {'rate':<34} |")
    print(f"| {'-' * 26} | {'-' * 7}: | {'-' * 34} |")
    for name, seconds, rate in rows:
        print(f"| {name:<26} | {seconds:>8.3f} | {rate:<34} |")


if __name__ == "__main__":
    main()
