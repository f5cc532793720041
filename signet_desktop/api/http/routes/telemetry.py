"""The opt-in search telemetry ledger: GET and DELETE /api/telemetry/memory-search.

Local only and off by default (`search.telemetry.enabled`). Reading or clearing it needs the
analytics permission: agent callers (`x-signet-actor-type: agent`) get 403. Always one agent's
records (`agentId` / `x-signet-agent-id`), and one project's with `project`.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import Field

from signet_desktop.api.http.schemas import AgentParams
from signet_desktop.api.http.scope import get_service, off_loop, resolve_actor, resolve_agent
from signet_desktop.api.telemetry_views import search_history_json
from signet_desktop.domain.memory import Actor
from signet_desktop.service.recall.telemetry import MAX_HISTORY_LIMIT, SearchTelemetry

router = APIRouter(tags=["telemetry"])
PATH = "/api/telemetry/memory-search"


class HistoryParams(AgentParams):
    """GET /api/telemetry/memory-search."""

    project: str | None = Field(None, max_length=512)
    q: str | None = Field(None, min_length=1, max_length=4000, description="only this query")
    limit: int = Field(50, ge=1, le=MAX_HISTORY_LIMIT)


def _ledger(request: Request, params: AgentParams) -> tuple[str, Actor, SearchTelemetry | None]:
    """The agent and actor asking, and the ledger (None: a service without a database)."""
    agent_id = resolve_agent(request, params.agent_id)
    return agent_id, resolve_actor(request), get_service(request).recall.telemetry


@router.get(PATH, operation_id="search_telemetry")
async def search_history(
    params: Annotated[HistoryParams, Query()], request: Request
) -> JSONResponse:
    """Recorded recalls, newest first: query, method, timing, ranked ids and scores."""
    agent_id, actor, telemetry = _ledger(request, params)
    if telemetry is None:  # a service built without a database: nothing was ever recorded
        return JSONResponse(search_history_json([], enabled=False))
    records = await off_loop(
        telemetry.history,
        actor,
        agent_id,
        project=params.project,
        query=params.q,
        limit=params.limit,
    )
    return JSONResponse(search_history_json(records, enabled=telemetry.enabled))


@router.delete(PATH, operation_id="search_telemetry_clear")
async def clear_search_history(
    params: Annotated[AgentParams, Query()], request: Request
) -> JSONResponse:
    """Forget every recorded recall of the agent."""
    agent_id, actor, telemetry = _ledger(request, params)
    removed = 0 if telemetry is None else await off_loop(telemetry.clear, actor, agent_id)
    return JSONResponse({"removed": removed})
