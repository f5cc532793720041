"""/api/diagnostics/queue and /api/diagnostics/queue/repair: the queue's health and its repair.

`GET` reports one agent's jobs per state and type, the health signals with their thresholds
and the oldest dead jobs; retired `extract` rows of old databases are left out. `POST …/repair
{action requeue|release|cancel|prune, dryRun, ids, jobType, olderThanMs, errorPattern,
maxBatch}` is a dry run unless `dryRun` is `false`: it answers the jobs that would change,
and applying right after changes exactly those. An applied repair spends the action's budget
(`repair.requeueCooldownMs`, `requeueHourlyBudget`): a refusal is 429 in the same
RepairResult shape with `Retry-After`. Signet's `tables: ["summary"]` is 410 (that queue is
retired); `retentionMs` is accepted as `olderThanMs` for prune. Scoped by agent (`agentId`
or `x-signet-agent-id`); the `repair` rate limit of `auth.rateLimits` applies in team and
hybrid modes.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import AliasChoices, Field

from signet_desktop.api.http.errors import ErrorBody, error_response
from signet_desktop.api.http.ratelimit import retry_after
from signet_desktop.api.http.schemas import AgentParams, Body
from signet_desktop.api.http.scope import (
    body_agent,
    get_service,
    header_reason,
    off_loop,
    resolve_agent,
)
from signet_desktop.api.queue_views import queue_diagnostics_json, repair_result_json
from signet_desktop.queue.repair import DEFAULT_MAX_BATCH, MAX_BATCH, MAX_IDS, RepairRequest

router = APIRouter(tags=["queue"])

# A century: `now - olderThanMs` must stay a date (2**53 ms overflowed into a 500).
MAX_MS = 100 * 366 * 24 * 3600 * 1000
REPAIR_RESPONSES: dict[int | str, dict[str, Any]] = {
    410: {
        "model": ErrorBody,
        "description": "summary_retired: Signet's summary queue does not exist here",
    },
    429: {
        "model": ErrorBody,
        "description": "repair_budget: refused by the action's cooldown or hourly budget "
        "(the RepairResult with success false, error, code, retryAfterSec; Retry-After), "
        "or rate_limited by auth.rateLimits.repair",
    },
}


class RepairBody(Body):
    """POST /api/diagnostics/queue/repair."""

    action: Literal["requeue", "release", "cancel", "prune"]
    dry_run: bool = Field(True, validation_alias=AliasChoices("dryRun", "dry_run"))
    ids: list[Annotated[str, Field(min_length=1, max_length=64)]] | None = Field(
        None, max_length=MAX_IDS
    )
    job_type: str | None = Field(
        None, min_length=1, max_length=64, validation_alias=AliasChoices("jobType", "job_type")
    )
    older_than_ms: int | None = Field(
        None, ge=0, le=MAX_MS, validation_alias=AliasChoices("olderThanMs", "older_than_ms")
    )
    retention_ms: int | None = Field(
        None, ge=0, le=MAX_MS, validation_alias=AliasChoices("retentionMs", "retention_ms")
    )
    error_pattern: str | None = Field(
        None,
        min_length=1,
        max_length=200,
        validation_alias=AliasChoices("errorPattern", "error_pattern"),
    )
    max_batch: int = Field(
        DEFAULT_MAX_BATCH,
        ge=1,
        le=MAX_BATCH,
        validation_alias=AliasChoices("maxBatch", "max_batch"),
    )
    tables: list[Literal["memory", "summary"]] | None = Field(None, max_length=2)
    reason: str | None = Field(None, max_length=500)
    agent_id: str | None = Field(None, validation_alias=AliasChoices("agentId", "agent_id"))

    def request(self, reason: str | None) -> RepairRequest:
        older = self.older_than_ms
        if older is None and self.action == "prune":
            older = self.retention_ms
        return RepairRequest(
            action=self.action,
            dry_run=self.dry_run,
            ids=tuple(dict.fromkeys(self.ids or ())),
            job_type=self.job_type,
            older_than_ms=older,
            error_pattern=self.error_pattern,
            max_batch=self.max_batch,
            reason=reason,
        )


@router.get("/api/diagnostics/queue", operation_id="queue_diagnostics")
async def queue_diagnostics(
    request: Request, params: Annotated[AgentParams, Query()]
) -> JSONResponse:
    """Jobs per state and type, health signals and thresholds, the oldest dead jobs."""
    ops = get_service(request).pipeline.queue
    report = await off_loop(ops.diagnostics, resolve_agent(request, params.agent_id))
    return JSONResponse(queue_diagnostics_json(report))


@router.post(
    "/api/diagnostics/queue/repair", operation_id="queue_repair", responses=REPAIR_RESPONSES
)
async def queue_repair(
    body: RepairBody, request: Request, params: Annotated[AgentParams, Query()]
) -> JSONResponse:
    """Requeue, release, cancel or prune jobs; a dry run unless `dryRun: false`."""
    if body.tables is not None and "summary" in body.tables:
        return error_response(410, "the summary queue is retired in this daemon", "summary_retired")
    agent_id = body_agent(request, body, params)
    repair = body.request(header_reason(request, body.reason))
    result = await off_loop(get_service(request).pipeline.queue.repair, agent_id, repair)
    if result.refused:
        headers = {"Retry-After": retry_after(result.retry_after_s)}
        return JSONResponse(repair_result_json(result), status_code=429, headers=headers)
    return JSONResponse(repair_result_json(result))
