"""The Queue pane's plain functions: pills, rows, detail, actions, previews, chart history."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from signet_desktop.queue.jobs import Job
from signet_desktop.queue.repair import RepairedJob, RepairOutcome
from signet_desktop.service.pipeline.queue_ops import QueueDiagnostics, Thresholds
from signet_desktop.ui import queue_format as fmt

NOW = datetime(2030, 1, 1, 12, tzinfo=UTC)
JOB = Job(
    id="77ab1234-5678-90ab-cdef-000000000000", agent_id="default", job_type="embedding_backfill",
    status="dead", memory_id="m1", document_id=None, payload={"why": "refused batch"},
    result=None, attempts=3, max_attempts=3, lease_token=None, leased_at=None,
    lease_expires_at=None, run_after=None, completed_at=None, failed_at="2030-01-01T11:00:00.000Z",
    error="timeout after 10 s\nwhile embedding", created_at="2030-01-01T10:00:00.000Z",
    updated_at="2030-01-01T11:58:00.000Z",
)  # fmt: skip


def report(**counts: int) -> QueueDiagnostics:
    full = {s: counts.get(s, 0) for s in ("pending", "leased", "completed", "failed", "dead",
                                           "cancelled")}  # fmt: skip
    return QueueDiagnostics(
        agent_id="default", counts=full, job_types={}, depth=full["pending"],
        oldest_pending_age_s=None, dead_rate=0.0, lease_anomalies=0, score=1.0,
        status="healthy", oldest_dead=(), thresholds=Thresholds(), retired_job_types=("extract",),
    )  # fmt: skip


def test_pills_group_digits_and_flag_dead_jobs() -> None:
    shown = fmt.pills(report(pending=12, leased=2, completed=4118, dead=1))
    assert [p.text for p in shown] == [
        "pending 12", "leased 2", "completed 4,118", "dead 1 ⚠", "cancelled 0"
    ]  # fmt: skip
    assert [p.alert for p in shown] == [False, False, False, True, False]


def test_job_row_and_detail() -> None:
    assert fmt.job_row(JOB, NOW) == (
        "77ab1234…", "embedding_backfill", "3/3", "dead", "2 min",
        "timeout after 10 s while embedding",
    )  # fmt: skip
    retrying = replace(JOB, status="pending", attempts=1, run_after="2030-01-01T12:05:00.000Z")
    assert fmt.display_state(retrying) == "retrying"
    labels = dict(fmt.job_detail(retrying))
    assert labels["Next attempt"] == "2030-01-01T12:05:00.000Z" and "Document" not in labels
    assert '"why": "refused batch"' in fmt.payload_text(JOB)


def test_actions_follow_the_state() -> None:
    assert fmt.job_actions(JOB) == ["requeue", "prune"]
    assert fmt.job_actions(replace(JOB, status="pending")) == ["cancel"]
    assert fmt.job_actions(replace(JOB, status="leased")) == ["release"]
    assert fmt.job_actions(replace(JOB, status="completed")) == ["prune"]


def repaired(n: int) -> RepairedJob:
    return RepairedJob(f"job-{n:04d}-abcdef", "document_ingest", 3, 3, "boom", "t", "dead",
                       "pending")  # fmt: skip


def test_preview_and_applied_texts() -> None:
    outcome = RepairOutcome("requeue", True, tuple(repaired(n) for n in range(14)))
    text = fmt.preview_text(outcome, limit=12)
    assert text.splitlines()[0] == "14 jobs would be back to pending:"
    assert "…and 2 more" in text and "(dead → pending) — boom" in text
    assert fmt.preview_text(RepairOutcome("prune", True, ())).startswith("No job matches")
    done = RepairOutcome("requeue", False, (repaired(1),))
    assert fmt.applied_text([repaired(1).id], done) == ("1 job back to pending.", "info")
    assert fmt.applied_text([repaired(1).id, "x"], done)[1] == "warn"


def test_history_is_bounded_and_relative() -> None:
    history = fmt.CountHistory(size=3)
    for t in range(5):
        history.add(100.0 + t, {"pending": t, "dead": 1})
    xs, ys = history.series(104.0)["pending"]
    assert (xs, ys) == ([-2.0, -1.0, 0.0], [2, 3, 4]) and len(history) == 3
    assert history.series(104.0)["leased"][1] == [0, 0, 0]
