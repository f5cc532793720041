"""What the Queue pane shows, computed without Qt: count pills, job rows, detail, chart history.

Kept apart from the widgets so each piece is unit-tested with plain values.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from signet_desktop.queue.jobs import Job
from signet_desktop.queue.repair import RepairOutcome
from signet_desktop.service.pipeline.queue_ops import QueueDiagnostics

SHOWN_STATES = ("pending", "leased", "completed", "dead", "cancelled")
CHARTED_STATES = ("pending", "leased", "dead")
HISTORY_SAMPLES = 180  # the rebuilt ten minutes, then 25 minutes of samples every 10 s
ERROR_CELL_CHARS = 80
DOCUMENT_JOB = "document_ingest"
DOCUMENT_CANCEL_NOTE = (
    "A cancelled document_ingest job leaves its document queued; to stop a document and "
    "remove its chunks, delete it in the Documents pane."
)
REPAIR_LABELS = {
    "requeue": ("Requeue dead jobs…", "requeue", "back to pending"),
    "release": ("Release expired leases…", "release", "released"),
    "cancel": ("Cancel pending jobs…", "cancel", "cancelled"),
    "prune": ("Prune finished jobs…", "prune", "deleted"),
}


def grouped(n: int) -> str:
    return f"{n:,}"


def short_id(job_id: str) -> str:
    return f"{job_id[:8]}…" if len(job_id) > 9 else job_id


def one_line(text: str | None, width: int = ERROR_CELL_CHARS) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def display_state(job: Job) -> str:
    """A pending job that already failed an attempt is waiting to retry."""
    if job.status == "pending" and job.attempts > 0:
        return "retrying"
    return job.status


def age_text(stamp: str | None, now: datetime | None = None) -> str:
    """`5 s`, `3 min`, `2 h`, `4 d` since `stamp` ("" without one)."""
    if not stamp:
        return ""
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return ""
    seconds = max(0, int(((now or datetime.now(UTC)) - moment).total_seconds()))
    for size, unit in ((86_400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size:
            return f"{seconds // size} {unit}"
    return f"{seconds} s"


@dataclass(frozen=True, slots=True)
class Pill:
    """One count of the header: its state, the words, and whether it wants attention."""

    state: str
    text: str
    alert: bool


def pills(report: QueueDiagnostics) -> list[Pill]:
    """`pending 12 · leased 2 · completed 4,118 · dead 1 ⚠ · cancelled 0` as pills."""
    found = []
    for state in SHOWN_STATES:
        n = int(report.counts.get(state, 0))
        alert = state == "dead" and n > 0
        found.append(Pill(state, f"{state} {grouped(n)}" + (" ⚠" if alert else ""), alert))
    return found


def job_row(job: Job, now: datetime | None = None) -> tuple[str, ...]:
    """The jobs table's cells: job, type, attempts, state, changed, error."""
    return (
        short_id(job.id),
        job.job_type,
        f"{job.attempts}/{job.max_attempts}",
        display_state(job),
        age_text(job.updated_at, now),
        one_line(job.error),
    )


def _pretty(text: str | None) -> str:
    if not text:
        return ""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False, sort_keys=True)
    except ValueError:
        return text


def job_detail(job: Job) -> list[tuple[str, str]]:
    """Label/value lines of the detail panel (empty values left out)."""
    lines = [
        ("Job", job.id),
        ("Type", job.job_type),
        ("State", display_state(job)),
        ("Attempts", f"{job.attempts} of {job.max_attempts}"),
        ("Memory", job.memory_id or ""),
        ("Document", job.document_id or ""),
        ("Created", job.created_at),
        ("Changed", job.updated_at),
        ("Leased", job.leased_at or ""),
        ("Lease expires", job.lease_expires_at or ""),
        ("Next attempt", job.run_after if job.status == "pending" else ""),
        ("Completed", job.completed_at or ""),
        ("Failed", job.failed_at or ""),
    ]
    return [(label, value or "") for label, value in lines if value]


def payload_text(job: Job) -> str:
    return json.dumps(dict(job.payload), indent=2, ensure_ascii=False, sort_keys=True)


def result_text(job: Job) -> str:
    return _pretty(job.result)


def job_actions(job: Job) -> list[str]:
    """The repair actions that apply to this one job (by its state)."""
    if job.status in ("dead", "failed"):
        return ["requeue", "prune"]
    if job.status == "pending":
        return ["cancel"]
    if job.status in ("completed", "cancelled"):
        return ["prune"]
    return ["release"] if job.status == "leased" else []


def preview_text(outcome: RepairOutcome, limit: int = 12) -> str:
    """What a dry run found, for the confirmation: the count and the first jobs."""
    n = outcome.affected
    verb = REPAIR_LABELS[outcome.action][2]
    if not n:
        return "No job matches: nothing would change."
    noun = "job" if n == 1 else "jobs"
    lines = [f"{n} {noun} would be {verb}:"]
    for job in outcome.jobs[:limit]:
        error = f" — {one_line(job.error, 60)}" if job.error else ""
        lines.append(f"• {short_id(job.id)} {job.job_type} ({job.status} → {job.to_status}){error}")
    if n > limit:
        lines.append(f"…and {n - limit} more")
    if outcome.action == "cancel" and any(j.job_type == DOCUMENT_JOB for j in outcome.jobs):
        lines += ["", DOCUMENT_CANCEL_NOTE]
    return "\n".join(lines)


def applied_text(planned: Sequence[str], outcome: RepairOutcome) -> tuple[str, str]:
    """The banner after an apply, and its level: `warn` when the queue moved in between."""
    n = outcome.affected
    noun = "job" if n == 1 else "jobs"
    verb = REPAIR_LABELS[outcome.action][2]
    if set(outcome.ids) == set(planned):
        return f"{n} {noun} {verb}.", "info"
    return (
        f"{n} {noun} {verb}; the queue changed since the dry run "
        f"({len(planned)} were listed). Review the table.",
        "warn",
    )


class CountHistory:
    """Samples of the charted counts over time, bounded (oldest dropped)."""

    def __init__(self, size: int = HISTORY_SAMPLES) -> None:
        self._samples: deque[tuple[float, Mapping[str, int]]] = deque(maxlen=size)

    def add(self, at: float, counts: Mapping[str, int]) -> None:
        self._samples.append((at, {s: int(counts.get(s, 0)) for s in CHARTED_STATES}))

    def __len__(self) -> int:
        return len(self._samples)

    def series(self, now: float) -> dict[str, tuple[list[float], list[int]]]:
        """Per charted state: x (seconds before `now`, negative) and y."""
        xs = [at - now for at, _ in self._samples]
        return {s: (xs, [c[s] for _, c in self._samples]) for s in CHARTED_STATES}


def job_types(reports: Iterable[str], current: Iterable[str]) -> list[str]:
    """The type filter's choices: every type seen, sorted, none repeated."""
    return sorted(set(reports) | set(current))
