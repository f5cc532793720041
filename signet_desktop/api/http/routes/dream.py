"""/api/dream: trigger a Dreaming pass, its status, the passes and one pass in full.

`POST /api/dream/trigger {mode, agentId}` answers 202 `{passId, agentId, mode, status}` at
once and runs the pass in the background; 409 `pass_running` (with `details.pass_id`) while
the agent has one running, 503 `inference_not_configured` naming the key to set when no
model serves the `memoryExtraction` workload. `GET /api/dream/status`, `GET
/api/dream/passes?status&limit`, `GET /api/dream/passes/{id}` (the pass with its evidence
window, runbook, ordered tool calls, operations and exclusions). Scoped by agent (`agentId`
or `x-signet-agent-id`): another agent's pass is 404.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import AliasChoices, Field

from signet_desktop.api.dreaming_views import dream_status_json, pass_detail_json, pass_json
from signet_desktop.api.http.errors import ErrorBody
from signet_desktop.api.http.schemas import AgentParams, Body
from signet_desktop.api.http.scope import body_agent, get_service, off_loop, resolve_agent

router = APIRouter(tags=["dreaming"])

Mode = Literal["incremental", "compact", "incremental-hygiene", "incremental-content"]
Status = Literal["running", "completed", "failed", "cancelled"]
TRIGGER_RESPONSES: dict[int | str, dict[str, Any]] = {
    409: {"model": ErrorBody, "description": "pass_running: the agent has a running pass"},
    503: {
        "model": ErrorBody,
        "description": "inference_not_configured: set inference.workloads.memoryExtraction",
    },
}


class TriggerBody(Body):
    """POST /api/dream/trigger."""

    mode: Mode = "incremental"
    agent_id: str | None = Field(None, validation_alias=AliasChoices("agentId", "agent_id"))


class PassListParams(AgentParams):
    """GET /api/dream/passes."""

    status: Status | None = None
    limit: int = Field(50, ge=1, le=200)


@router.post(
    "/api/dream/trigger",
    operation_id="dream_trigger",
    status_code=202,
    responses=TRIGGER_RESPONSES,
)
async def dream_trigger(
    request: Request, params: Annotated[AgentParams, Query()], body: TriggerBody | None = None
) -> JSONResponse:
    """Begin a pass for the agent and run it in the background."""
    body = body or TriggerBody.model_validate({})
    agent_id = body_agent(request, body, params)
    pass_id = await off_loop(get_service(request).dreaming.trigger, agent_id, body.mode)
    return JSONResponse(
        {"passId": pass_id, "agentId": agent_id, "mode": body.mode, "status": "running"},
        status_code=202,
    )


@router.get("/api/dream/status", operation_id="dream_status")
async def dream_status(request: Request, params: Annotated[AgentParams, Query()]) -> JSONResponse:
    """Running, due or idle, and why (disabled, no inference, no evidence, deferred, ...)."""
    agent_id = resolve_agent(request, params.agent_id)
    status = await off_loop(get_service(request).dreaming.status, agent_id)
    return JSONResponse(dream_status_json(status))


@router.get("/api/dream/passes", operation_id="dream_passes")
async def dream_passes(
    request: Request, params: Annotated[PassListParams, Query()]
) -> JSONResponse:
    """The agent's passes, newest first."""
    agent_id = resolve_agent(request, params.agent_id)
    found = await off_loop(
        get_service(request).dreaming.list_passes,
        agent_id,
        status=params.status,
        limit=params.limit,
    )
    return JSONResponse({"passes": [pass_json(p) for p in found], "count": len(found)})


@router.get("/api/dream/passes/{pass_id}", operation_id="dream_pass")
async def dream_pass(
    pass_id: str, request: Request, params: Annotated[AgentParams, Query()]
) -> JSONResponse:
    """One pass with its evidence window, runbook, tool calls, operations and exclusions."""
    agent_id = resolve_agent(request, params.agent_id)
    detail = await off_loop(get_service(request).dreaming.get_pass, agent_id, pass_id)
    return JSONResponse(pass_detail_json(detail))


@router.post(
    "/api/dream/passes/{pass_id}/cancel",
    operation_id="dream_pass_cancel",
    status_code=202,
    responses={
        404: {"model": ErrorBody, "description": "not_found: no such pass for this agent"},
        409: {"model": ErrorBody, "description": "pass_not_running: it already ended"},
    },
)
async def dream_pass_cancel(
    pass_id: str, request: Request, params: Annotated[AgentParams, Query()]
) -> JSONResponse:
    """Stop a running pass; it ends `cancelled` (its applied operations stay)."""
    agent_id = resolve_agent(request, params.agent_id)
    await off_loop(get_service(request).dreaming.cancel_pass, agent_id, pass_id)
    return JSONResponse({"passId": pass_id, "agentId": agent_id, "cancelling": True}, 202)
