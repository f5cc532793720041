"""MEMORY.md rebuild time at 10k memories (plus the session-start head and re-indexing).

    uv run python bench/memory_md.py [--memories 10000] [--sessions 200] [--runs 7]

Builds a workspace with `--memories` memories (remember_many, no embedder: MEMORY.md reads
no vectors) in a realistic mix — 14 types, 20 projects and global ones, 2% pinned, ~10%
important — and `--sessions` compaction artifacts spread over 60 days, then times:

- build: choose, gate and render the text (no write), through the real content-safety
  service with its decision ledger empty (every shown item scanned on the fly: the cost
  right after an import), with every decision recorded (what the content-safety worker
  leaves behind), and through a pass-through gate (the projection alone);
- rebuild after a change: one memory changed, then build + backup + atomic write;
- rebuild unchanged: build + compare, nothing written;
- head: the Global Head as session start asks for it (4,000 characters);
- reindex: the artifact index rebuilt from the files after its rows were deleted.

No previous build had MEMORY.md, so there is no previous-build column.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.memory import Actor, MemoryPatch
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest
from signet_desktop.service.memory_md.service import MemoryMdService

TYPES = (
    "fact", "preference", "decision", "rule", "learning", "issue", "episodic", "procedural",
    "semantic", "rationale", "constraint", "daily-log", "system", "fact",
)  # fmt: skip
WORDS = "billing postgres deploy rollout cache queue invoice schema migration backup".split()


class PassThrough:
    def prompt_texts(
        self, agent_id: str, source_kind: str, items: Sequence[tuple[str, str]]
    ) -> list[str]:
        return [text for _, text in items]


def seed(service: SignetService, count: int, sessions: int) -> str:
    """Memories and artifacts; returns the id of an important global memory (in the head)."""
    requests = []
    for i in range(count):
        words = " ".join(WORDS[(i * 7 + k) % len(WORDS)] for k in range(12))
        requests.append(
            RememberRequest(
                content=f"Memory {i}: the {words} note number {i}.",
                type=TYPES[i % len(TYPES)],
                pinned=i % 50 == 0,
                importance=0.9 if i % 10 == 3 else 0.3 + (i % 5) / 10,
                project=None if i % 3 == 0 else f"/work/project-{i % 20}",
                created_at=f"2026-{1 + i % 11:02d}-{1 + i % 28:02d}T10:00:00.000Z",
            )
        )
    outcomes = service.memories.remember_many(requests, Actor())
    for s in range(sessions):
        service.artifacts.write_compaction(
            "default", f"session-{s}", f"Session {s} settled the {WORDS[s % 10]} question.",
            harness="claude-code", project=f"/work/project-{s % 20}",
        )  # fmt: skip
    return outcomes[3].memory.id


def timed(fn: Callable[[], object], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        service = build_service(
            WorkspacePaths.for_root(root), SignetConfig(), BuildOptions(no_embedder=True)
        )
        started = time.perf_counter()
        victim = seed(service, args.memories, args.sessions)
        seeded_s = time.perf_counter() - started
        md = service.memory_md
        bare = MemoryMdService(
            service._db,  # a second projection over the same database
            root,
            safety=PassThrough(),
        )
        now = "2026-12-01T00:00:00Z"
        first = md.rebuild("default", now)
        flip = iter(range(10_000))

        def change_then_rebuild() -> None:
            patch = MemoryPatch(pinned=next(flip) % 2 == 0)  # shows as "pinned" or not
            service.memories.modify(
                "default", victim, patch, reason="bench", if_version=None, actor=Actor()
            )
            md.rebuild("default", now)

        rows = {
            "build, content-safety gate, no decisions yet": timed(
                lambda: md.build("default", now), args.runs
            ),
            "build, pass-through gate (the projection alone)": timed(
                lambda: bare.build("default", now), args.runs
            ),
            "rebuild after a change (pin toggled; backup + write)": timed(
                change_then_rebuild, args.runs
            ),
            "rebuild unchanged (nothing written)": timed(
                lambda: md.rebuild("default", now), args.runs
            ),
            "session-start head (4,000 chars)": timed(lambda: md.head("default", 4000), args.runs),
        }

        while service.safety.scan_pending("default", 5_000):
            pass  # what the content-safety worker does in the background
        rows["build, content-safety gate, decisions recorded"] = timed(
            lambda: md.build("default", now), args.runs
        )

        def reindex() -> None:
            with service._db.write() as conn:
                conn.execute("DELETE FROM memory_artifacts")
            service.artifacts.reindex("default")

        rows[f"artifact reindex from {args.sessions} files"] = timed(reindex, args.runs)
        size_kb = (root / "MEMORY.md").stat().st_size / 1024
        backups = len(list((root / "memory").glob("MEMORY.backup-*.md")))
        service.close()
    print(
        f"MEMORY.md over {args.memories:,} memories and {args.sessions} session artifacts "
        f"(seeded in {seeded_s:.1f} s), {args.runs} runs, ms; file {size_kb:.1f} KB, "
        f"{first.shown} entries shown, {backups} backups kept\n"
    )
    print("| case | p50 | p95 |")
    print("| --- | ---: | ---: |")
    for name, samples in rows.items():
        print(f"| {name} | {statistics.median(samples):.1f} | {percentile(samples, 95):.1f} |")


if __name__ == "__main__":
    main()
