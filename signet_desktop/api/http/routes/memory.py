"""/api/memory/*: remember, recall, search, get, modify, forget, history and recover."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Path, Query, Request
from fastapi.responses import JSONResponse, Response

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
    first_set,
    get_service,
    header_reason,
    off_loop,
    resolve_actor,
    resolve_agent,
)
from signet_desktop.api.views import (
    change_json,
    history_json,
    memory_json,
    recall_json,
    remember_json,
)

router = APIRouter(tags=["memory"])

MemoryId = Annotated[str, Path(min_length=1, max_length=256)]
REMEMBER_PATHS = (
    ("/api/memory/remember", "remember"),
    ("/api/memory/save", "remember_save_alias"),
    ("/api/hook/remember", "remember_hook_alias"),
)


async def remember(
    body: RememberBody, params: Annotated[AgentParams, Query()], request: Request
) -> JSONResponse:
    """Store a memory (deduped on sourceId, idempotencyKey, then content)."""
    agent_id = resolve_agent(request, first_set(body.agent_id, params.agent_id))
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
    query = body.to_query(resolve_agent(request, first_set(body.agent_id, params.agent_id)))
    result = await off_loop(get_service(request).recall.search, query)
    return await json_off_loop(lambda: recall_json(result))


@router.get("/api/memory/search", operation_id="search")
async def search(params: Annotated[SearchParams, Query()], request: Request) -> Response:
    """GET alias of recall: `?q=...` plus the same filters as query parameters."""
    query = params.to_query(resolve_agent(request, params.agent_id))
    result = await off_loop(get_service(request).recall.search, query)
    return await json_off_loop(lambda: recall_json(result))


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
    """Change tags, importance or pinned; needs a reason; `if_version` guards races."""
    agent_id = resolve_agent(request, first_set(body.agent_id, params.agent_id))
    memory = await off_loop(
        get_service(request).memories.modify,
        agent_id,
        memory_id,
        body.to_patch(),
        reason=header_reason(request, body.reason) or "",
        if_version=body.if_version,
        actor=resolve_actor(request, body.changed_by),
    )
    return JSONResponse(change_json("updated", memory))


@router.delete("/api/memory/{memory_id}", operation_id="forget_memory")
async def forget_memory(
    memory_id: MemoryId,
    params: Annotated[ForgetParams, Query()],
    request: Request,
    body: Annotated[ForgetBody | None, Body()] = None,
) -> JSONResponse:
    """Soft-delete (recoverable for 30 days). Fields may come in the body or the query."""
    body = body or ForgetBody()
    agent_id = resolve_agent(request, first_set(body.agent_id, params.agent_id))
    reason = first_set(body.reason, params.reason)
    force = first_set(body.force, params.force)
    memory = await off_loop(
        get_service(request).memories.forget,
        agent_id,
        memory_id,
        reason=header_reason(request, reason) or "",
        force=bool(force),
        if_version=first_set(body.if_version, params.if_version),
        actor=resolve_actor(request, body.changed_by),
    )
    return JSONResponse(change_json("deleted", memory))


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
    agent_id = resolve_agent(request, first_set(body.agent_id, params.agent_id))
    memory = await off_loop(
        get_service(request).memories.recover,
        agent_id,
        memory_id,
        reason=header_reason(request, body.reason) or "",
        if_version=body.if_version,
        actor=resolve_actor(request, body.changed_by),
    )
    return JSONResponse(change_json("recovered", memory))
