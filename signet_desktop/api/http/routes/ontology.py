"""/api/ontology*: proposals, contradictions and manual applies through the apply seam;
/api/dream/attention and /api/dream/passes/{id}/revert.

- `GET /api/ontology/proposals?status&limit` (status pending|applied|rejected|failed|all);
- `POST /api/ontology/proposals/{id}/apply` / `.../reject {reason}`;
- `POST /api/ontology/proposals/bulk {ids, action: apply|reject, reason?}`;
- `GET /api/ontology/contradictions?status&limit`;
- `POST /api/ontology/apply {operations, dryRun}`: the seam's per-operation report;
- `GET /api/dream/attention?status&limit`;
- `POST /api/dream/passes/{pass_id}/revert {dryRun}`: 200 `{passId, dryRun, reverted, changes,
  blockers}`; 409 `revert_blocked` with the same body when blockers and not a dry run.
Scoped by agent (`agentId` or `x-signet-agent-id`): another agent's proposal or pass is 404.
"""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse
from pydantic import AliasChoices, Field

from signet_desktop.api.http.errors import ErrorBody
from signet_desktop.api.http.schemas import AgentParams, Body, RowId
from signet_desktop.api.http.scope import (
    body_agent,
    get_service,
    off_loop,
    resolve_actor,
    resolve_agent,
)
from signet_desktop.api.ontology_views import (
    apply_report_json,
    attention_json,
    bulk_item_json,
    contradiction_json,
    proposal_json,
    proposal_outcome_json,
    revert_json,
)

router = APIRouter(tags=["ontology"])

PassId = Annotated[str, Path(min_length=1, max_length=128)]
AgentField = Field(None, validation_alias=AliasChoices("agentId", "agent_id"))
REVERT_RESPONSES: dict[int | str, dict[str, Any]] = {
    409: {"model": ErrorBody, "description": "revert_blocked: a later pass or edit depends on it"},
}


class ListParams(AgentParams):
    status: str | None = Field(None, max_length=16)
    limit: int = Field(50, ge=1, le=500)


class ReasonBody(Body):
    reason: str | None = Field(None, max_length=1000)
    agent_id: str | None = AgentField


class BulkBody(Body):
    ids: list[Annotated[str, Field(min_length=1, max_length=64)]] = Field(max_length=100)
    action: Literal["apply", "reject"]
    reason: str | None = Field(None, max_length=1000)
    agent_id: str | None = AgentField


class ApplyBody(Body):
    operations: list[Any] = Field(max_length=1000)
    dry_run: bool = Field(False, validation_alias=AliasChoices("dryRun", "dry_run"))
    agent_id: str | None = AgentField


class RevertBody(Body):
    dry_run: bool = Field(False, validation_alias=AliasChoices("dryRun", "dry_run"))
    agent_id: str | None = AgentField


def _actor(request: Request) -> str:
    return resolve_actor(request).changed_by


@router.get("/api/ontology/proposals", operation_id="ontology_proposals")
async def ontology_proposals(
    request: Request, params: Annotated[ListParams, Query()]
) -> JSONResponse:
    """The agent's proposals (pending by default), newest first."""
    service = get_service(request).ontology
    agent_id = resolve_agent(request, params.agent_id)
    found = await off_loop(
        service.proposals, agent_id, status=params.status or "pending", limit=params.limit
    )
    return JSONResponse({"proposals": [proposal_json(p) for p in found], "count": len(found)})


@router.post("/api/ontology/proposals/bulk", operation_id="ontology_proposals_bulk")
async def ontology_proposals_bulk(
    body: BulkBody, request: Request, params: Annotated[AgentParams, Query()]
) -> JSONResponse:
    """Apply or reject many proposals; each id gets its own outcome."""
    service = get_service(request).ontology
    agent_id = body_agent(request, body, params)
    found = await off_loop(
        service.bulk,
        agent_id,
        body.ids,
        action=body.action,
        actor=_actor(request),
        reason=body.reason,
    )
    ids = list(dict.fromkeys(body.ids))
    return JSONResponse(
        {"results": [bulk_item_json(i, r) for i, r in zip(ids, found, strict=True)]}
    )


@router.post("/api/ontology/proposals/{proposal_id}/apply", operation_id="ontology_proposal_apply")
async def ontology_proposal_apply(
    proposal_id: RowId,
    request: Request,
    params: Annotated[AgentParams, Query()],
    body: ReasonBody | None = None,
) -> JSONResponse:
    """Apply one pending proposal through the seam (re-validated)."""
    return await _decide(proposal_id, request, params, body, reject=False)


@router.post(
    "/api/ontology/proposals/{proposal_id}/reject", operation_id="ontology_proposal_reject"
)
async def ontology_proposal_reject(
    proposal_id: RowId,
    request: Request,
    params: Annotated[AgentParams, Query()],
    body: ReasonBody | None = None,
) -> JSONResponse:
    """Reject one pending proposal with a reason."""
    return await _decide(proposal_id, request, params, body, reject=True)


async def _decide(
    proposal_id: str,
    request: Request,
    params: AgentParams,
    body: ReasonBody | None,
    *,
    reject: bool,
) -> JSONResponse:
    """Apply or reject one proposal as the caller (the body's agent over the query's)."""
    service = get_service(request).ontology
    agent_id = body_agent(request, body, params)
    actor = _actor(request)
    if reject:
        reason = body.reason if body else None
        call = partial(service.reject_proposal, agent_id, proposal_id, actor=actor, reason=reason)
    else:
        call = partial(service.apply_proposal, agent_id, proposal_id, actor=actor)
    return JSONResponse(proposal_outcome_json(await off_loop(call)))


@router.get("/api/ontology/contradictions", operation_id="ontology_contradictions")
async def ontology_contradictions(
    request: Request, params: Annotated[ListParams, Query()]
) -> JSONResponse:
    """Advisory contradictions between active claim values (active by default)."""
    service = get_service(request).ontology
    agent_id = resolve_agent(request, params.agent_id)
    found = await off_loop(
        service.contradictions, agent_id, status=params.status or "active", limit=params.limit
    )
    return JSONResponse({"contradictions": [contradiction_json(c) for c in found]})


@router.post("/api/ontology/apply", operation_id="ontology_apply")
async def ontology_apply(
    body: ApplyBody, request: Request, params: Annotated[AgentParams, Query()]
) -> JSONResponse:
    """Apply operations through the seam (no pass); `dryRun` only validates."""
    service = get_service(request).ontology
    agent_id = body_agent(request, body, params)
    report = await off_loop(
        service.apply, agent_id, body.operations, actor=_actor(request), dry_run=body.dry_run
    )
    return JSONResponse(apply_report_json(report))


@router.get("/api/dream/attention", operation_id="dream_attention")
async def dream_attention(request: Request, params: Annotated[ListParams, Query()]) -> JSONResponse:
    """The agent's Dreaming attention records (pending by default), highest priority first."""
    service = get_service(request).ontology
    agent_id = resolve_agent(request, params.agent_id)
    found = await off_loop(
        service.attention, agent_id, status=params.status or "pending", limit=params.limit
    )
    return JSONResponse({"attention": [attention_json(a) for a in found]})


@router.post(
    "/api/dream/passes/{pass_id}/revert",
    operation_id="dream_pass_revert",
    responses=REVERT_RESPONSES,
)
async def dream_pass_revert(
    pass_id: PassId,
    request: Request,
    params: Annotated[AgentParams, Query()],
    body: RevertBody | None = None,
) -> JSONResponse:
    """Undo a pass's graph mutations, or show exactly what would change (`dryRun`)."""
    service = get_service(request).ontology
    agent_id = body_agent(request, body, params)
    dry_run = bool(body and body.dry_run)
    outcome = await off_loop(
        service.revert_pass, agent_id, pass_id, actor=_actor(request), dry_run=dry_run
    )
    payload = revert_json(outcome)
    if outcome.blockers and not dry_run:
        first = outcome.blockers[0]
        more = len(outcome.blockers) - 1
        why = f"{first.target_table} {first.target_id}: {first.reason}"
        blocked = {
            "error": f"pass {pass_id} cannot be reverted: {why}"
            + (f" (and {more} more)" if more else ""),
            "code": "revert_blocked",
            **payload,
        }
        return JSONResponse(blocked, status_code=409)
    return JSONResponse(payload)
