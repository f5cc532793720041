"""/api/memories: a page of the agent's live memories with counts."""

from __future__ import annotations

from functools import partial
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from signet_desktop.api.http.rendering import json_off_loop
from signet_desktop.api.http.schemas import ListParams
from signet_desktop.api.http.scope import get_service, resolve_agent
from signet_desktop.api.views import page_json

router = APIRouter(tags=["memory"])


@router.get("/api/memories", operation_id="list_memories")
async def list_memories(params: Annotated[ListParams, Query()], request: Request) -> Response:
    """Newest first (`?type=` keeps one memory type); `stats` counts the whole scope."""
    agent_id = resolve_agent(request, params.agent_id)
    fetch = partial(
        get_service(request).memories.list_page,
        agent_id,
        params.limit,
        params.offset,
        params.type,
    )
    return await json_off_loop(fetch, page_json)  # megabytes at limit=1000
