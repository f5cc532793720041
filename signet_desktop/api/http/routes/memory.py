"""/api/memory/*: remember, recall, search, get, modify, forget, history and recover.

Signet's fixed paths (`/api/memory/forget`, `/api/memory/modify`, `/api/memory/jobs/{id}`)
are declared before `/api/memory/{memory_id}`, which would otherwise take them.
"""

from __future__ import annotations

from functools import partial
from typing import Annotated

from fastapi import APIRouter, Body, Path, Query, Request
from fastapi.responses import JSONResponse, Response

from signet_desktop.api.http.batch_schemas import BatchForgetBody, BatchModifyBody
from signet_desktop.api.http.json_route import JsonBodyRoute
from signet_desktop.api.http.rendering import json_off_loop
from signet_desktop.api.http.schemas import (
    AgentParams,
    ForgetBody,
    ForgetParams,
    HistoryParams,
    PatchBody,
    RecallBody,
    RecoverBody,
    RememberBody,
    SearchParams,
)
from signet_desktop.api.http.scope import (
    body_agent,
    first_set,
    get_service,
    header_reason,
    off_loop,
    resolve_actor,
    resolve_agent,
)
from signet_desktop.api.recall_views import recall_json
from signet_desktop.api.views import (
    change_json,
    forget_batch_json,
    forget_preview_json,
    history_json,
    job_json,
    memory_json,
    modify_batch_json,
    modify_json,
    recover_json,
    remember_json,
)
from signet_desktop.domain.errors import InvalidInput
from signet_desktop.domain.memory import MemorySelector
from signet_desktop.domain.recall import MAX_RECALL_LIMIT, RecallFilters, RecallQuery
from signet_desktop.service.facade import SignetService

router = APIRouter(tags=["memory"], route_class=JsonBodyRoute)

MemoryId = Annotated[str, Path(min_length=1, max_length=256)]
# Signet's words, so its clients see the refusal they expect.
BATCH_IF_VERSION = (
    "if_version is not supported for batch forget; use DELETE /api/memory/:id for "
    "version-guarded deletes"
)
REMEMBER_PATHS = (
    ("/api/memory/remember", "remember"),
    ("/api/memory/save", "remember_save_alias"),
    ("/api/hook/remember", "remember_hook_alias"),
)


async def remember(
    body: RememberBody, params: Annotated[AgentParams, Query()], request: Request
) -> JSONResponse:
    """Store a memory (deduped on sourceId, idempotencyKey, then content)."""
    agent_id = body_agent(request, body, params)
    actor = resolve_actor(request, session_id=body.session_id)
    outcome = await off_loop(
        get_service(request).memories.remember, body.to_request(agent_id), actor
    )
    return JSONResponse(remember_json(outcome))


for _path, _operation in REMEMBER_PATHS:
    router.add_api_route(_path, remember, methods=["POST"], operation_id=_operation)


@router.post("/api/memory/recall", operation_id="recall")
async def recall(
    body: RecallBody, params: Annotated[AgentParams, Query()], request: Request
) -> Response:
    """Ranked memories for a query, with per-channel evidence."""
    query = body.to_query(body_agent(request, body, params))
    return await json_off_loop(partial(get_service(request).recall.search, query), recall_json)


@router.get("/api/memory/search", operation_id="search")
async def search(params: Annotated[SearchParams, Query()], request: Request) -> Response:
    """GET alias of recall: `?q=...` plus the same filters as query parameters."""
    query = params.to_query(resolve_agent(request, params.agent_id))
    return await json_off_loop(partial(get_service(request).recall.search, query), recall_json)


@router.post("/api/memory/forget", operation_id="forget_batch")
async def forget_batch(
    body: BatchForgetBody, params: Annotated[AgentParams, Query()], request: Request
) -> JSONResponse:
    """Signet's batch forget: `mode: preview` lists the candidates and a confirm token;
    `execute` soft-deletes them (a reason is required; above 25 the token is too; an
    `if_version` is refused, as Signet refuses it)."""
    if body.mode == "execute" and body.sent_if_version:
        raise InvalidInput(BATCH_IF_VERSION, code="if_version_unsupported")
    service = get_service(request)
    agent_id = body_agent(request, body, params)
    selector = await off_loop(_forget_selector, service, agent_id, body)
    if body.mode == "preview":
        preview = await off_loop(service.memories.preview_forget, agent_id, selector)
        return JSONResponse(forget_preview_json(preview))
    outcome = await off_loop(
        service.memories.forget_batch,
        agent_id,
        selector,
        reason=header_reason(request, body.reason) or "",
        force=body.force,
        confirm_token=body.confirm_token,
        actor=resolve_actor(request, body.changed_by),
    )
    return JSONResponse(forget_batch_json(outcome))


def _forget_selector(
    service: SignetService, agent_id: str, body: BatchForgetBody
) -> MemorySelector:
    """The body's selector; a `query` is ranked by recall first (with the same filters)."""
    if body.query is None:
        return body.to_selector()
    selector = body.to_selector()
    query = RecallQuery(
        query=body.query,
        agent_id=agent_id,
        limit=min(body.limit, MAX_RECALL_LIMIT),
        filters=RecallFilters(
            type=selector.type,
            tags=selector.tags,
            who=selector.who,
            since=selector.since,
            until=selector.until,
        ),
    )
    hits = service.recall.search(query).hits
    ranked = tuple(hit.memory.id for hit in hits)
    return body.to_selector(ranked, {hit.memory.id: hit.score for hit in hits})


@router.post("/api/memory/modify", operation_id="modify_batch")
async def modify_batch(
    body: BatchModifyBody, params: Annotated[AgentParams, Query()], request: Request
) -> JSONResponse:
    """Signet's batch modify: up to 200 patches, each validated before anything is written."""
    agent_id = body_agent(request, body, params)
    items = await off_loop(
        get_service(request).memories.modify_batch,
        agent_id,
        [patch.to_patch() for patch in body.patches],
        reason=header_reason(request, body.reason),
        actor=resolve_actor(request, body.changed_by),
    )
    return JSONResponse(modify_batch_json(items))


@router.get("/api/memory/jobs/{job_id}", operation_id="memory_job")
async def memory_job(
    job_id: MemoryId, params: Annotated[AgentParams, Query()], request: Request
) -> JSONResponse:
    """One queue job of the agent (another agent's: 404)."""
    agent_id = resolve_agent(request, params.agent_id)
    job = await off_loop(get_service(request).pipeline.job, agent_id, job_id)
    return JSONResponse(job_json(job))


@router.get("/api/memory/{memory_id}", operation_id="get_memory")
async def get_memory(
    memory_id: MemoryId, params: Annotated[AgentParams, Query()], request: Request
) -> JSONResponse:
    """One live memory in the agent's scope (deleted or foreign: 404)."""
    agent_id = resolve_agent(request, params.agent_id)
    memory = await off_loop(get_service(request).memories.get, agent_id, memory_id)
    return JSONResponse(memory_json(memory))


@router.patch("/api/memory/{memory_id}", operation_id="modify_memory")
async def modify_memory(
    memory_id: MemoryId,
    body: PatchBody,
    params: Annotated[AgentParams, Query()],
    request: Request,
) -> JSONResponse:
    """Change content, type, tags, importance or pinned; needs a reason; `if_version`
    guards races. A content change re-embeds and flags rows citing the old text."""
    agent_id = body_agent(request, body, params)
    change = await off_loop(
        get_service(request).memories.modify,
        agent_id,
        memory_id,
        body.to_patch(),
        reason=header_reason(request, body.reason) or "",
        if_version=body.if_version,
        actor=resolve_actor(request, body.changed_by),
    )
    return JSONResponse(modify_json(change))


@router.delete("/api/memory/{memory_id}", operation_id="forget_memory")
async def forget_memory(
    memory_id: MemoryId,
    params: Annotated[ForgetParams, Query()],
    request: Request,
    body: Annotated[ForgetBody | None, Body()] = None,
) -> JSONResponse:
    """Soft-delete (recoverable for 30 days). Fields may come in the body or the query."""
    body = body or ForgetBody()
    agent_id = body_agent(request, body, params)
    reason = first_set(body.reason, params.reason)
    force = first_set(body.force, params.force)
    change = await off_loop(
        get_service(request).memories.forget,
        agent_id,
        memory_id,
        reason=header_reason(request, reason) or "",
        force=bool(force),
        if_version=first_set(body.if_version, params.if_version),
        actor=resolve_actor(request, body.changed_by),
    )
    return JSONResponse(change_json("deleted", change))


@router.get("/api/memory/{memory_id}/history", operation_id="memory_history")
async def memory_history(
    memory_id: MemoryId, params: Annotated[HistoryParams, Query()], request: Request
) -> JSONResponse:
    """Every lifecycle event of the memory, oldest first."""
    agent_id = resolve_agent(request, params.agent_id)
    events = await off_loop(
        get_service(request).memories.history, agent_id, memory_id, params.limit
    )
    return JSONResponse(history_json(memory_id, events))


@router.post("/api/memory/{memory_id}/recover", operation_id="recover_memory")
async def recover_memory(
    memory_id: MemoryId,
    params: Annotated[AgentParams, Query()],
    request: Request,
    body: Annotated[RecoverBody | None, Body()] = None,
) -> JSONResponse:
    """Undo a soft delete within the recovery window."""
    body = body or RecoverBody()
    agent_id = body_agent(request, body, params)
    change = await off_loop(
        get_service(request).memories.recover,
        agent_id,
        memory_id,
        reason=header_reason(request, body.reason) or "",
        if_version=body.if_version,
        actor=resolve_actor(request, body.changed_by),
    )
    return JSONResponse(recover_json(change))
