"""/api/connectors*: folder sources kept in step with document ingest (Signet's routes).

`POST /api/connectors` registers a folder (`{provider: "filesystem", displayName?,
settings: {rootPath, patterns?, ignorePatterns?, watch?}}`, or the short `{path, globs,
excludes, watch, name}`) and starts its first sync unless `sync: false`: 201 with the
connector. `POST /api/connectors/{id}/sync` starts an incremental sync (202);
`/sync/full?confirm=true` re-reads every file (without `confirm` it is 400). Add
`?wait=true` to either to sync in the request and get the counters. `GET
/api/connectors/{id}/health` reports the folder, the cursor and the documents per state;
`DELETE /api/connectors/{id}` disconnects: the connector's documents are deleted (their chunk
memories forgotten) and nothing else. Everything is scoped by agent.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import AliasChoices, Field

from signet_desktop.api.connector_views import (
    connector_json,
    disconnect_json,
    health_json,
    sync_json,
)
from signet_desktop.api.http.principal import principal_of
from signet_desktop.api.http.schemas import AgentParams, Body, RowId
from signet_desktop.api.http.scope import (
    body_agent,
    first_set,
    get_service,
    off_loop,
    resolve_agent,
)
from signet_desktop.domain.connectors import PROVIDER_FILESYSTEM
from signet_desktop.domain.errors import InvalidInput
from signet_desktop.service.documents.connectors import FolderRequest

router = APIRouter(tags=["connectors"])

Patterns = list[Annotated[str, Field(max_length=200)]]


class FolderSettings(Body):
    """Signet's filesystem connector settings."""

    root_path: str | None = Field(
        None, max_length=4096, validation_alias=AliasChoices("rootPath", "root_path", "path")
    )
    patterns: Patterns | None = Field(None, max_length=32)
    ignore_patterns: Patterns | None = Field(
        None, max_length=32, validation_alias=AliasChoices("ignorePatterns", "ignore_patterns")
    )
    watch: bool = False


class ConnectorBody(Body):
    """POST /api/connectors."""

    provider: str = Field(PROVIDER_FILESYSTEM, max_length=32)
    display_name: str | None = Field(
        None, max_length=200, validation_alias=AliasChoices("displayName", "display_name", "name")
    )
    settings: FolderSettings | None = None
    path: str | None = Field(None, max_length=4096)
    globs: Patterns | None = Field(None, max_length=32)
    excludes: Patterns | None = Field(None, max_length=32)
    watch: bool | None = None
    sync: bool = True
    agent_id: str | None = Field(None, validation_alias=AliasChoices("agentId", "agent_id"))


class SyncParams(AgentParams):
    """POST /api/connectors/{id}/sync[/full]."""

    wait: bool = False
    confirm: bool = False


class ListParams(AgentParams):
    """GET /api/connectors."""

    include_removed: bool = Field(
        False, validation_alias=AliasChoices("includeRemoved", "include_removed")
    )


def folder_request(body: ConnectorBody) -> FolderRequest:
    """The folder the body names, from Signet's `settings` or the short fields."""
    if body.provider != PROVIDER_FILESYSTEM:
        raise InvalidInput(
            f"provider {body.provider!r} is not available here (only filesystem)",
            code="provider_unsupported",
        )
    settings = body.settings or FolderSettings.model_validate({})
    path = first_set(body.path, settings.root_path)
    if not path:
        raise InvalidInput("settings.rootPath (or path) is required", code="path_invalid")
    return FolderRequest(
        path=path,
        name=body.display_name,
        globs=tuple(first_set(body.globs, settings.patterns) or ()),
        excludes=tuple(first_set(body.excludes, settings.ignore_patterns) or ()),
        watch=bool(first_set(body.watch, settings.watch)),
    )


@router.get("/api/connectors", operation_id="connectors_list")
async def connectors_list(request: Request, params: Annotated[ListParams, Query()]) -> JSONResponse:
    """The agent's connectors (`includeRemoved=true` lists disconnected ones too)."""
    service = get_service(request).connectors
    found = await off_loop(
        service.list,
        resolve_agent(request, params.agent_id),
        include_disabled=params.include_removed,
    )
    return JSONResponse({"connectors": [connector_json(c) for c in found]})


@router.post("/api/connectors", operation_id="connector_create", status_code=201)
async def connector_create(
    body: ConnectorBody, params: Annotated[AgentParams, Query()], request: Request
) -> JSONResponse:
    """Register a folder (validated before anything is written) and start its first sync."""
    agent_id = body_agent(request, body, params)
    service = get_service(request).connectors
    local = principal_of(request).local  # only the local user reads its default roots
    connector = await off_loop(service.add_folder, agent_id, folder_request(body), local=local)
    if body.sync:
        await off_loop(service.sync_in_background, agent_id, connector.id)
    return JSONResponse({**connector_json(connector), "syncStarted": body.sync}, status_code=201)


@router.get("/api/connectors/{connector_id}", operation_id="connector_get")
async def connector_get(
    connector_id: RowId, request: Request, params: Annotated[AgentParams, Query()]
) -> JSONResponse:
    """One connector."""
    service = get_service(request).connectors
    found = await off_loop(service.get, resolve_agent(request, params.agent_id), connector_id)
    return JSONResponse(connector_json(found))


@router.delete("/api/connectors/{connector_id}", operation_id="connector_remove")
async def connector_remove(
    connector_id: RowId, request: Request, params: Annotated[AgentParams, Query()]
) -> JSONResponse:
    """Disconnect: delete the connector's documents and nothing else; the folder untouched."""
    service = get_service(request).connectors
    report = await off_loop(service.remove, resolve_agent(request, params.agent_id), connector_id)
    return JSONResponse(disconnect_json(report))


@router.post("/api/connectors/{connector_id}/sync", operation_id="connector_sync")
async def connector_sync(
    connector_id: RowId, request: Request, params: Annotated[SyncParams, Query()]
) -> JSONResponse:
    """An incremental sync: only files whose content changed are re-ingested."""
    return await _sync(request, connector_id, params, full=False)


@router.post("/api/connectors/{connector_id}/sync/full", operation_id="connector_sync_full")
async def connector_sync_full(
    connector_id: RowId, request: Request, params: Annotated[SyncParams, Query()]
) -> JSONResponse:
    """Re-read every file (`confirm=true` required, as in Signet)."""
    if not params.confirm:
        raise InvalidInput("a full sync needs confirm=true", code="confirm_required")
    return await _sync(request, connector_id, params, full=True)


@router.get("/api/connectors/{connector_id}/health", operation_id="connector_health")
async def connector_health(
    connector_id: RowId, request: Request, params: Annotated[AgentParams, Query()]
) -> JSONResponse:
    """The folder's readability, files in the cursor, documents per state, the last error."""
    service = get_service(request).connectors
    found = await off_loop(service.health, resolve_agent(request, params.agent_id), connector_id)
    return JSONResponse(health_json(found))


async def _sync(
    request: Request, connector_id: str, params: SyncParams, *, full: bool
) -> JSONResponse:
    service = get_service(request).connectors
    agent_id = resolve_agent(request, params.agent_id)
    if params.wait:
        report = await off_loop(service.sync, agent_id, connector_id, full=full)
        return JSONResponse(sync_json(report))
    await off_loop(service.sync_in_background, agent_id, connector_id, full=full)
    body: dict[str, Any] = {"id": connector_id, "status": "syncing", "full": full}
    return JSONResponse(body, status_code=202)
