"""/api/tokens: issue, list and revoke scoped API tokens (admin only; docs/HTTP.md).

`POST /api/tokens {name, permissions[], agents[], projects?[], ttlSeconds?, session?}` answers
201 with the token and its `secret`, the only time the secret is ever shown. `GET /api/tokens`
lists every token issued (state active|expired|revoked, never a secret). `DELETE
/api/tokens/{id or name}` revokes one (idempotent); the row stays as the audit.
"""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from fastapi.responses import JSONResponse
from pydantic import AliasChoices, Field

from signet_desktop.api.http.schemas import Body
from signet_desktop.api.http.scope import get_service, off_loop
from signet_desktop.domain.tokens import MAX_TTL_SECONDS, MIN_TTL_SECONDS, ApiToken
from signet_desktop.service.tokens import TokenService

router = APIRouter(tags=["tokens"])

TokenRef = Annotated[str, Path(min_length=1, max_length=64)]


class TokenBody(Body):
    """POST /api/tokens."""

    name: str = Field(min_length=1, max_length=64)
    permissions: list[str] = Field(min_length=1, max_length=3)
    agents: list[str] = Field(min_length=1, max_length=64)
    projects: list[str] | None = Field(None, min_length=1, max_length=64)
    ttl_seconds: int | None = Field(
        None,
        ge=MIN_TTL_SECONDS,
        le=MAX_TTL_SECONDS,
        validation_alias=AliasChoices("ttlSeconds", "ttl_seconds"),
    )
    session: bool = False


def token_json(token: ApiToken) -> dict[str, Any]:
    """A token's public fields (never its secret or hash)."""
    return {
        "id": token.id,
        "name": token.name,
        "kind": token.kind,
        "permissions": sorted(token.permissions),
        "agents": sorted(token.agents),
        "projects": None if token.projects is None else sorted(token.projects),
        "createdAt": token.created_at,
        "expiresAt": token.expires_at,
        "revokedAt": token.revoked_at,
        "state": token.state(TokenService.now()),
    }


@router.post("/api/tokens", operation_id="token_create", status_code=201)
async def token_create(body: TokenBody, request: Request) -> JSONResponse:
    """Issue a token; its `secret` is in this answer and nowhere else, ever."""
    tokens = get_service(request).tokens
    spec = tokens.spec(
        body.name,
        body.permissions,
        body.agents,
        projects=body.projects,
        ttl_seconds=body.ttl_seconds,
        session=body.session,
    )
    issued = await off_loop(tokens.create, spec)
    return JSONResponse({**token_json(issued.token), "secret": issued.secret}, status_code=201)


@router.get("/api/tokens", operation_id="token_list")
async def token_list(request: Request) -> JSONResponse:
    """Every token issued, oldest first, without secrets."""
    found = await off_loop(get_service(request).tokens.list)
    return JSONResponse({"tokens": [token_json(token) for token in found]})


@router.delete("/api/tokens/{token_ref}", operation_id="token_revoke")
async def token_revoke(token_ref: TokenRef, request: Request) -> JSONResponse:
    """Revoke the token with this id or name; requests showing it get 401 `token_revoked`."""
    revoked = await off_loop(partial(get_service(request).tokens.revoke, token_ref))
    return JSONResponse({"token": token_json(revoked)})
