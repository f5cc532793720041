"""/api/artifacts: the index of Markdown session artifacts, its re-index, session removal.

`GET /api/artifacts` lists the agent's indexed artifacts (no bodies). `POST
/api/artifacts/reindex` rebuilds the agent's index from the files under `memory/`.
`DELETE /api/artifacts/sessions/{sessionKey}` tombstones the session and deletes its
files; re-indexing never brings it back.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import AliasChoices, Field

from signet_desktop.api.artifact_views import artifact_json, reindex_json, removed_session_json
from signet_desktop.api.http.schemas import AgentParams, ReasonParams, SessionKey, StrictBody
from signet_desktop.api.http.scope import (
    body_agent,
    get_service,
    header_reason,
    off_loop,
    resolve_agent,
)

router = APIRouter(tags=["artifacts"])


class ReindexBody(StrictBody):
    """POST /api/artifacts/reindex."""

    agent_id: str | None = Field(None, validation_alias=AliasChoices("agentId", "agent_id"))


@router.get("/api/artifacts", operation_id="artifacts_list")
async def artifacts_list(request: Request, params: Annotated[AgentParams, Query()]) -> JSONResponse:
    """The agent's indexed artifacts, oldest first."""
    agent_id = resolve_agent(request, params.agent_id)
    found = await off_loop(get_service(request).artifacts.indexed, agent_id)
    return JSONResponse({"artifacts": [artifact_json(a) for a in found]})


@router.post("/api/artifacts/reindex", operation_id="artifacts_reindex")
async def artifacts_reindex(
    request: Request, params: Annotated[AgentParams, Query()], body: ReindexBody | None = None
) -> JSONResponse:
    """Rebuild the agent's artifact index from the files (tombstoned sessions stay out)."""
    agent_id = body_agent(request, body, params)
    report = await off_loop(get_service(request).artifacts.reindex, agent_id)
    return JSONResponse(reindex_json(report))


@router.delete("/api/artifacts/sessions/{session_key}", operation_id="artifacts_remove_session")
async def artifacts_remove_session(
    session_key: SessionKey, request: Request, params: Annotated[ReasonParams, Query()]
) -> JSONResponse:
    """Tombstone the session, drop its rows and delete its files."""
    agent_id = resolve_agent(request, params.agent_id)
    reason = header_reason(request, params.reason) or "removed over HTTP"
    removed = await off_loop(
        get_service(request).artifacts.remove_session, agent_id, session_key, reason
    )
    return JSONResponse(removed_session_json(removed))
