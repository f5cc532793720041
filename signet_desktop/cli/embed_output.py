"""Rendering the embedding and vector-repair answers for people: tables, progress, hints.

Like `output`, these functions take decoded JSON and return lines; they never print and never
call the daemon, and a missing field shows as `-` rather than crashing the CLI.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from signet_desktop.cli.output import table

BACKFILL_HINT = "signet embed backfill --all"
RESYNC_HINT = "signet repair resync-vec"
AUDIT_HINT = "signet embed audit"
TABLE_HEADERS = ("id", "model", "dims", "status", "coverage", "vectors", "mirror", "queued")


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def count(value: Any) -> str:
    """`1200` -> `1,200`; anything that is not an integer -> `-`."""
    number = _int(value)
    return "-" if number is None else f"{number:,}"


def plural(n: int, word: str, words: str | None = None) -> str:
    """`1 memory`, `2 memories` (with thousands separators)."""
    return f"{n:,} {word if n == 1 else (words or word + 's')}"


def percent(done: Any, total: Any) -> str:
    """`done/total` as a percentage rounded down (999/1000 is 99.9%, never 100.0%)."""
    d, t = _int(done), _int(total)
    if d is None or t is None:
        return "-"
    if t <= 0:
        return "100.0%"
    return f"{math.floor(d * 1000 / t) / 10:.1f}%"


def coverage_text(coverage: Mapping[str, Any]) -> str:
    """`99.9% (999/1,000)` from a coverage object."""
    embedded, total = coverage.get("embedded"), coverage.get("total")
    return f"{percent(embedded, total)} ({count(embedded)}/{count(total)})"


# -- audit ------------------------------------------------------------------------------------


def _target_id(answer: Mapping[str, Any]) -> int | None:
    coverage = _map(answer.get("coverage"))
    return _int(coverage.get("generation")) or _int(_map(answer.get("generation")).get("id"))


def _mirror_cell(generation: Mapping[str, Any], mirror: Mapping[str, Any]) -> str:
    if mirror.get("enabled") is False:
        return "off"
    vectors, missing = _int(generation.get("vectors")), _int(mirror.get("missing"))
    if vectors is None or missing is None:
        return "-"
    text = f"{max(vectors - missing, 0):,}/{vectors:,}"
    orphans = _int(mirror.get("orphans")) or 0
    return text + (f" +{orphans:,} orphan" if orphans else "")


def _generation_rows(answer: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    target = _target_id(answer)
    coverage = _map(answer.get("coverage"))
    jobs = _map(answer.get("jobs"))
    queued = (_int(jobs.get("pending")) or 0) + (_int(jobs.get("leased")) or 0)
    rows = []
    for item in answer.get("generations") or []:
        generation = _map(item)
        is_target = target is not None and generation.get("id") == target
        rows.append(
            (
                generation.get("id"),
                generation.get("model"),
                generation.get("dimensions"),
                generation.get("status"),
                coverage_text(coverage) if is_target and coverage else "-",
                count(generation.get("vectors")),
                _mirror_cell(generation, _map(answer.get("mirror"))) if is_target else "-",
                f"{queued:,}" if is_target else "-",
            )
        )
    return rows


def _vector_search_text(answer: Mapping[str, Any]) -> str:
    mode = answer.get("vectorSearch")
    mirror = _map(answer.get("mirror"))
    if mode == "complete":
        return "complete (sqlite-vec KNN over every vector)"
    if mode == "recent-window":
        window = count(answer.get("fallbackWindow"))
        return (
            f"recent-window: sqlite-vec is not loaded ({mirror.get('error') or 'unknown'}); "
            f"recall scans the newest {window} vectors"
        )
    if answer.get("provider") == "none":
        return "off (no embedder configured; keyword recall only)"
    generation = _map(answer.get("generation"))
    if generation.get("status") == "building":
        return (
            f"paused while generation {generation.get('id')} is building "
            "(re-embedding every memory with the new model)"
        )
    return str(mode or "-")


def _summary_rows(answer: Mapping[str, Any]) -> list[tuple[str, str]]:
    if answer.get("provider") == "none":
        embedder = "none (embedding.provider: none)"
    else:
        embedder = (
            f"{answer.get('provider', '-')} · {answer.get('model', '-')} · "
            f"{count(answer.get('dimensions'))} dims"
        )
    rows = [("embedder", embedder), ("vector search", _vector_search_text(answer))]
    coverage = _map(answer.get("coverage"))
    if coverage:
        rows.append(
            (
                "coverage",
                f"{coverage_text(coverage)} live memories have a vector in generation "
                f"{coverage.get('generation', '-')}",
            )
        )
    jobs = _map(answer.get("jobs"))
    if jobs:
        queued = (_int(jobs.get("pending")) or 0) + (_int(jobs.get("leased")) or 0)
        rows.append(
            (
                "backfill jobs",
                f"{queued:,} queued ({count(jobs.get('pending'))} pending, "
                f"{count(jobs.get('leased'))} leased) · {count(jobs.get('dead'))} dead",
            )
        )
    worker = _map(answer.get("worker"))
    if worker.get("lastError"):
        rows.append(("worker", f"last error: {worker['lastError']}"))
    return rows


def _audit_hints(answer: Mapping[str, Any]) -> list[str]:
    hints = []
    missing = _int(_map(answer.get("coverage")).get("missing")) or 0
    if missing:
        hints.append(
            f"hint: {plural(missing, 'live memory', 'live memories')} "
            f"{'has' if missing == 1 else 'have'} no vector yet: `{BACKFILL_HINT}`"
        )
    mirror = _map(answer.get("mirror"))
    gap, orphans = _int(mirror.get("missing")) or 0, _int(mirror.get("orphans")) or 0
    if gap or orphans:
        what = ", ".join(
            part
            for part in (
                f"{plural(gap, 'vector')} missing" if gap else "",
                f"{plural(orphans, 'orphan row')}" if orphans else "",
            )
            if part
        )
        hints.append(f"hint: the vec0 mirror is out of step ({what}): `{RESYNC_HINT}`")
    return hints


def audit_lines(answer: Mapping[str, Any]) -> list[str]:
    """`signet embed audit`: summary, one table row per generation, then what to run."""
    summary = _summary_rows(answer)
    width = max(len(label) for label, _ in summary)
    lines = [f"{label:<{width}}  {value}" for label, value in summary]
    rows = _generation_rows(answer)
    lines.append("")
    lines.extend(table(TABLE_HEADERS, rows) if rows else ["No embedding generations yet."])
    hints = _audit_hints(answer)
    if hints:
        lines.extend(["", *hints])
    return lines


# -- backfill ---------------------------------------------------------------------------------


def backfill_dry_run_lines(answer: Mapping[str, Any]) -> list[str]:
    """`--dry-run`: how many live memories lack a vector; nothing was embedded."""
    missing = _int(answer.get("missing")) or 0
    generation = answer.get("generation", "-")
    if not missing:
        return [f"dry run: every live memory has a vector in generation {generation}"]
    return [
        f"dry run: {plural(missing, 'live memory', 'live memories')} "
        f"{'lacks' if missing == 1 else 'lack'} a vector in generation {generation}; "
        "nothing was embedded",
        f"run `{BACKFILL_HINT}` to embed them",
    ]


def backfill_lines(answer: Mapping[str, Any]) -> list[str]:
    """One backfill request: what it embedded, the coverage now, and what is left."""
    embedded = _int(answer.get("embedded")) or 0
    before = _int(answer.get("missingBefore")) or 0
    coverage = _map(answer.get("coverage"))
    if not before and not embedded:
        return [f"nothing to embed: coverage {coverage_text(coverage)}"]
    line = f"embedded {embedded:,}/{before:,}"
    failed = _int(answer.get("failed")) or 0
    if failed:
        line += f" ({failed:,} failed)"
    lines = [f"{line}; coverage {coverage_text(coverage)}"]
    if answer.get("error"):
        lines.append(f"warning: {answer['error']}")
    left = _int(coverage.get("missing")) or 0
    if left:
        lines.append(f"{left:,} still missing: run `{BACKFILL_HINT}`")
    return lines


@dataclass(slots=True)
class BackfillProgress:
    """Running totals of a `backfill --all` loop, fed one daemon answer per round."""

    started: float
    total: int | None = None
    embedded: int = 0
    failed: int = 0
    skipped: int = 0
    missing: int | None = None
    last_embedded: int = 0
    last_error: str | None = None
    elapsed: float = 0.0
    coverage: Mapping[str, Any] = field(default_factory=dict)

    def add(self, answer: Mapping[str, Any], *, now: float) -> None:
        """Fold in one round's answer."""
        self.last_embedded = _int(answer.get("embedded")) or 0
        if self.total is None:
            self.total = _int(answer.get("missingBefore")) or 0
        self.embedded += self.last_embedded
        self.failed += _int(answer.get("failed")) or 0
        self.skipped += _int(answer.get("skipped")) or 0
        self.coverage = _map(answer.get("coverage"))
        missing = _int(self.coverage.get("missing"))
        self.missing = missing if missing is not None else max(self.total - self.embedded, 0)
        # Memories saved during the loop join the work; the total only grows.
        self.total = max(self.total, self.embedded + self.missing)
        error = answer.get("error")
        self.last_error = str(error) if error else None
        self.elapsed = now - self.started

    def line(self) -> str:
        """`embedded 64/1,200 (5.3%) · 0 failed · 1.2 s` (plus the round's error, if any)."""
        total = self.total or 0
        text = (
            f"embedded {self.embedded:,}/{total:,} ({percent(self.embedded, total)}) · "
            f"{self.failed:,} failed · {self.elapsed:.1f} s"
        )
        return text + (f" · {self.last_error}" if self.last_error else "")

    def stopped_line(self) -> str:
        """Said before the daemon's error when it refuses a later round."""
        return f"stopped after embedding {self.embedded:,}/{self.total or 0:,}"

    def final_lines(self) -> list[str]:
        """Done, or how much is left and why."""
        coverage = coverage_text(self.coverage)
        if not self.missing and not self.embedded:
            return [f"nothing to embed: coverage {coverage}"]
        if not self.missing:
            return [
                f"done: embedded {plural(self.embedded, 'memory', 'memories')} in "
                f"{self.elapsed:.1f} s; coverage {coverage}"
            ]
        reason = f"; last error: {self.last_error}" if self.last_error else ""
        return [
            f"stopped: {plural(self.missing, 'memory', 'memories')} still "
            f"{'has' if self.missing == 1 else 'have'} no vector "
            f"({self.failed:,} failed{reason}); coverage {coverage}",
            f"the daemon's worker keeps retrying; see `{AUDIT_HINT}`",
        ]

    def summary_json(self, rounds: list[Any]) -> dict[str, Any]:
        """`--all --json`: totals plus every round's raw answer."""
        return {
            "embedded": self.embedded,
            "failed": self.failed,
            "skipped": self.skipped,
            "missing": self.missing,
            "elapsedSeconds": round(self.elapsed, 3),
            "coverage": dict(self.coverage),
            "rounds": rounds,
        }


# -- resync -----------------------------------------------------------------------------------


def resync_lines(answer: Mapping[str, Any]) -> list[str]:
    """What `repair resync-vec` found, and what it did (or would do, in a dry run)."""
    generation = answer.get("generation", "-")
    canonical = _int(answer.get("canonical")) or 0
    before = _int(answer.get("mirroredBefore")) or 0
    added, removed = _int(answer.get("added")) or 0, _int(answer.get("removed")) or 0
    rebuilt, dry = bool(answer.get("rebuilt")), bool(answer.get("dryRun"))
    state = f"{before:,}/{canonical:,} canonical vectors mirrored"
    prefix = "dry run: " if dry else ""
    if not (added or removed or rebuilt):
        return [f"{prefix}the vec0 mirror of generation {generation} is in step ({state})"]
    actions: list[tuple[str, str]] = []  # (would do, did)
    if rebuilt:
        copied = plural(added, "vector")
        actions.append((f"rebuild the table and copy {copied}", f"rebuilt it with {copied}"))
    elif added:
        actions.append(
            (f"add {plural(added, 'missing vector')}", f"added {plural(added, 'vector')}")
        )
    if removed:
        orphans = plural(removed, "orphan row")
        actions.append((f"remove {orphans}", f"removed {orphans}"))
    if dry:
        would = " and ".join(future for future, _ in actions)
        return [
            f"dry run: generation {generation} has {state}; resync would {would} (nothing changed)"
        ]
    did = " and ".join(past for _, past in actions)
    return [f"resynced the vec0 mirror of generation {generation} (had {state}): {did}"]
