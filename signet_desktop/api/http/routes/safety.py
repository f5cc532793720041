"""GET /api/diagnostics/memory-safety: one agent's content-safety ledger at a glance.

Decisions of the current policy version per status (`clean` is the only prompt-eligible
one) and per reason, decisions of an older version waiting for the background rescan
(`stale`), and memories, transcripts, artifacts and summaries with no current decision
(`pending`). Signet serves the same facts at /api/analytics/memory-safety; that path answers too.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from signet_desktop.api.http.schemas import AgentParams
from signet_desktop.api.http.scope import get_service, off_loop, resolve_agent
from signet_desktop.api.safety_views import safety_status_json

router = APIRouter(tags=["diagnostics"])


@router.get("/api/diagnostics/memory-safety", operation_id="memory_safety")
async def memory_safety(params: Annotated[AgentParams, Query()], request: Request) -> JSONResponse:
    """Counts per status and reason at the current policy version, stale and pending."""
    agent_id = resolve_agent(request, params.agent_id)
    status = await off_loop(get_service(request).safety.status, agent_id)
    return JSONResponse(safety_status_json(status))


@router.get("/api/analytics/memory-safety", operation_id="memory_safety_analytics")
async def memory_safety_analytics(
    params: Annotated[AgentParams, Query()], request: Request
) -> JSONResponse:
    """Signet's path for the same answer."""
    return await memory_safety(params, request)
