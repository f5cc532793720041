"""/api/secrets: list an agent's secret names, store one, delete one (never read one back).

Signet's routes and shapes: `GET /api/secrets` → `{secrets: [names]}`;
`POST /api/secrets/{name} {value}` → `{success: true, name}` (plus `created`);
`DELETE /api/secrets/{name}` → `{success: true, name}`, 404 `secret_not_found`. There is no
route that returns a value (as in Signet). Listing needs `read`; storing and deleting need
`admin` (a stored key is what the daemon's providers authenticate with: permissions.py).
Agent-scoped like every route (`agentId` or `x-signet-agent-id`).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Path, Query, Request
from fastapi.responses import JSONResponse
from pydantic import AliasChoices, Field, SecretStr

from signet_desktop.api.http.schemas import AgentParams
from signet_desktop.api.http.schemas import Body as JsonBody
from signet_desktop.api.http.schemas import _agent_field as agent_field
from signet_desktop.api.http.scope import (
    body_agent,
    get_service,
    off_loop,
    resolve_actor,
    resolve_agent,
)

router = APIRouter(tags=["secrets"])

SecretName = Annotated[str, Path(min_length=1, max_length=128)]


class SecretBody(JsonBody):
    """POST /api/secrets/{name}: the value (kept out of every repr, log and error)."""

    value: str | None = Field(
        default=None,
        repr=False,
        max_length=65_536,
        json_schema_extra={"writeOnly": True, "format": "password"},
    )
    changed_by: str | None = Field(
        default=None, validation_alias=AliasChoices("changed_by", "changedBy")
    )
    agent_id: str | None = agent_field()


@router.get("/api/secrets", operation_id="secrets_list")
async def list_secrets(params: Annotated[AgentParams, Query()], request: Request) -> JSONResponse:
    """The agent's secret names, sorted; never a value."""
    agent_id = resolve_agent(request, params.agent_id)
    names = await off_loop(get_service(request).secrets.names, agent_id)
    return JSONResponse({"secrets": list(names)})


@router.post("/api/secrets/{name}", operation_id="secret_put")
async def put_secret(
    name: SecretName,
    params: Annotated[AgentParams, Query()],
    request: Request,
    body: Annotated[SecretBody | None, Body()] = None,
) -> JSONResponse:
    """Store (or replace) a secret; a refused request writes nothing."""
    body = body or SecretBody()
    agent_id = body_agent(request, body, params)
    value = None if body.value is None else SecretStr(body.value)
    stored = await off_loop(
        get_service(request).secrets.put,
        agent_id,
        name,
        value,
        actor=resolve_actor(request, body.changed_by),
    )
    return JSONResponse({"success": True, "name": stored.name, "created": stored.created})


@router.delete("/api/secrets/{name}", operation_id="secret_delete")
async def delete_secret(
    name: SecretName, params: Annotated[AgentParams, Query()], request: Request
) -> JSONResponse:
    """Delete a secret (404 `secret_not_found` when the agent has none of that name)."""
    agent_id = resolve_agent(request, params.agent_id)
    deleted = await off_loop(
        get_service(request).secrets.delete, agent_id, name, actor=resolve_actor(request)
    )
    return JSONResponse({"success": True, "name": deleted})
