"""Wire shapes of queue diagnostics and repair (`/api/diagnostics/queue*`), beside `views.py`.

camelCase like Signet's diagnostics; jobs in the SDK's JobStatus shape (`views.job_json`).
A repair answers Signet's RepairResult `{action, success, affected, message}` plus what this
daemon adds: `dryRun`, the `ids` and, per job, its state before and after (`status`,
`toStatus`; `deleted` for prune).
"""

from __future__ import annotations

from typing import Any

from signet_desktop.api.views import job_json
from signet_desktop.queue.repair import RepairedJob
from signet_desktop.service.pipeline.queue_ops import QueueDiagnostics, RepairResult


def queue_diagnostics_json(report: QueueDiagnostics) -> dict[str, Any]:
    """GET /api/diagnostics/queue."""
    limits = report.thresholds
    return {
        "agentId": report.agent_id,
        "score": report.score,
        "status": report.status,
        "depth": report.depth,
        "oldestAgeSec": report.oldest_pending_age_s,
        "deadRate": report.dead_rate,
        "leaseAnomalies": report.lease_anomalies,
        "queues": {"memory": dict(report.counts)},
        "jobTypes": {kind: dict(counts) for kind, counts in report.job_types.items()},
        "oldestDead": [job_json(job) for job in report.oldest_dead],
        "thresholds": {
            "depth": limits.depth,
            "deadRate": limits.dead_rate,
            "oldestAgeSec": limits.oldest_pending_s,
            "leaseAnomalyAgeSec": limits.lease_anomaly_age_s,
            "deadRateWindowSec": limits.dead_rate_window_s,
        },
        "excludedJobTypes": list(report.retired_job_types),
    }


def repaired_job_json(job: RepairedJob) -> dict[str, Any]:
    return {
        "id": job.id,
        "jobType": job.job_type,
        "status": job.status,
        "toStatus": job.to_status,
        "attempts": job.attempts,
        "maxAttempts": job.max_attempts,
        "error": job.error,
        "updatedAt": job.updated_at,
    }


def repair_result_json(result: RepairResult) -> dict[str, Any]:
    """POST /api/diagnostics/queue/repair (a 429 refusal has the same shape)."""
    outcome = result.outcome
    body: dict[str, Any] = {
        "action": outcome.action,
        "success": result.success,
        "dryRun": outcome.dry_run,
        "affected": outcome.affected,
        "message": result.message,
        "ids": list(outcome.ids),
        "jobs": [repaired_job_json(job) for job in outcome.jobs],
    }
    if result.refused:  # also readable as the house error body by clients that expect one
        body.update(
            error=result.message, code="repair_budget", retryAfterSec=round(result.retry_after_s, 1)
        )
    return body
