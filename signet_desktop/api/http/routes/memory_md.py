"""/api/memory-md: rebuild an agent's MEMORY.md now, and what its last rebuild did.

`POST /api/memory-md/rebuild {agentId?, now?}` builds and writes the file (the debounced
worker does the same a few seconds after memory changes); `now` pins the ledger's 30 days
to an explicit time. An unwritable target is 503 `memory_md_unwritable` with the path, the
previous file left as it was. `GET /api/memory-md` says where the file is, whether it exists
and how the last rebuild ended.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import AliasChoices, Field

from signet_desktop.api.artifact_views import rebuild_json
from signet_desktop.api.http.schemas import AgentParams, StrictBody
from signet_desktop.api.http.scope import body_agent, get_service, off_loop, resolve_agent

router = APIRouter(tags=["memory-md"])


class RebuildBody(StrictBody):
    """POST /api/memory-md/rebuild."""

    agent_id: str | None = Field(None, validation_alias=AliasChoices("agentId", "agent_id"))
    now: str | None = Field(None, max_length=64, description="ISO-8601; the ledger counts back")


@router.post("/api/memory-md/rebuild", operation_id="memory_md_rebuild")
async def memory_md_rebuild(
    request: Request, params: Annotated[AgentParams, Query()], body: RebuildBody | None = None
) -> JSONResponse:
    """Build and write the agent's MEMORY.md; `changed: false` when the bytes were the same."""
    agent_id = body_agent(request, body, params)
    now = body.now if body else None
    outcome = await off_loop(get_service(request).memory_md.rebuild, agent_id, now)
    return JSONResponse(rebuild_json(outcome))


@router.get("/api/memory-md", operation_id="memory_md_status")
async def memory_md_status(
    request: Request, params: Annotated[AgentParams, Query()]
) -> JSONResponse:
    """Where the agent's MEMORY.md is, whether it exists, and its last rebuild."""
    memory_md = get_service(request).memory_md
    agent_id = resolve_agent(request, params.agent_id)
    path = await off_loop(memory_md.path_for, agent_id)
    last = await off_loop(memory_md.last_outcome, agent_id)
    return JSONResponse(
        {"agentId": agent_id, "path": str(path), "exists": path.is_file(), "last": last}
    )
