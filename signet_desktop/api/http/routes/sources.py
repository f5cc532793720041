"""/api/sources*: import a harness's history (or another store) as a source, follow, remove.

`POST /api/sources/import {kind, path?, reimport?}` validates everything before writing and
answers 202 `{sourceId, runId}`; the import runs on a thread of the daemon (follow it with
`GET /api/sources/{id}/runs/{runId}` or `import.progress` / `import.finished` on
`/api/events`). A second import of a source while one runs is 409 `import_running`; a root
whose source was removed is 409 `source_removed` unless `reimport: true`.
`DELETE /api/sources/{id}` is a preview unless `dryRun=false` (the repair routes' rule).
Everything is scoped by agent (`agentId` or `x-signet-agent-id`).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import AliasChoices, Field

from signet_desktop.api.http.principal import principal_of
from signet_desktop.api.http.schemas import AgentParams, RowId, StrictBody
from signet_desktop.api.http.scope import (
    body_agent,
    get_service,
    header_reason,
    off_loop,
    resolve_actor,
    resolve_agent,
)
from signet_desktop.api.source_views import (
    import_run_json,
    import_ticket_json,
    purge_report_json,
    source_detail_json,
    source_json,
)
from signet_desktop.domain.errors import NotFound

router = APIRouter(tags=["sources"])


class ImportBody(StrictBody):
    """POST /api/sources/import."""

    kind: str = Field(min_length=1, max_length=32)
    path: str | None = Field(None, max_length=4096)
    reimport: bool = False
    agent_id: str | None = Field(None, validation_alias=AliasChoices("agentId", "agent_id"))


class RemoveParams(AgentParams):
    """DELETE /api/sources/{id}."""

    dry_run: bool = Field(True, validation_alias=AliasChoices("dryRun", "dry_run"))
    reason: str | None = Field(None, max_length=500)


@router.get("/api/sources", operation_id="sources_list")
async def sources_list(request: Request, params: Annotated[AgentParams, Query()]) -> JSONResponse:
    """The agent's live sources and the kinds this daemon can import."""
    imports = get_service(request).imports
    found = await off_loop(imports.sources, resolve_agent(request, params.agent_id))
    return JSONResponse({"sources": [source_json(s) for s in found], "kinds": list(imports.kinds)})


@router.post("/api/sources/import", operation_id="sources_import", status_code=202)
async def sources_import(
    body: ImportBody, params: Annotated[AgentParams, Query()], request: Request
) -> JSONResponse:
    """Register the root as a source (or reuse it) and start a run; 202 with its ids."""
    agent_id = body_agent(request, body, params)
    actor = resolve_actor(request)
    ticket = await off_loop(
        get_service(request).imports.start,
        agent_id,
        body.kind,
        body.path,
        reimport=body.reimport,
        triggered_by=actor.changed_by,
        local=principal_of(request).local,  # only the local user reads its default roots
    )
    return JSONResponse(import_ticket_json(ticket), status_code=202)


@router.get("/api/sources/{source_id}", operation_id="source_get")
async def source_get(
    source_id: RowId, request: Request, params: Annotated[AgentParams, Query()]
) -> JSONResponse:
    """The source, its recent runs with their counters, and what it holds now."""
    detail = await off_loop(
        get_service(request).imports.source, resolve_agent(request, params.agent_id), source_id
    )
    return JSONResponse(source_detail_json(detail))


@router.get("/api/sources/{source_id}/runs/{run_id}", operation_id="source_run_get")
async def source_run_get(
    source_id: RowId, run_id: RowId, request: Request, params: Annotated[AgentParams, Query()]
) -> JSONResponse:
    """One run's status and counters (what `signet import` polls)."""
    agent_id = resolve_agent(request, params.agent_id)
    run = await off_loop(get_service(request).imports.run, agent_id, run_id)
    if run.source_id != source_id:
        raise NotFound(f"run {run_id} is not a run of {source_id}", code="run_not_found")
    return JSONResponse(import_run_json(run))


@router.delete("/api/sources/{source_id}", operation_id="source_remove")
async def source_remove(
    source_id: RowId, request: Request, params: Annotated[RemoveParams, Query()]
) -> JSONResponse:
    """Purge what the source brought and tombstone it; a preview unless `dryRun=false`."""
    actor = resolve_actor(request)
    report = await off_loop(
        get_service(request).imports.remove,
        resolve_agent(request, params.agent_id),
        source_id,
        dry_run=params.dry_run,
        reason=header_reason(request, params.reason),
        removed_by=actor.changed_by,
    )
    return JSONResponse(purge_report_json(report))
