"""/api/tokens: issue, list and revoke scoped API tokens (admin only; docs/HTTP.md).

`POST /api/tokens {name, permissions[], agents[], ttlSeconds?, session?}` answers
201 with the token and its `secret`, the only time the secret is ever shown. `GET /api/tokens`
lists every token issued (state active|expired|revoked, never a secret). `DELETE
/api/tokens/{id or name}` revokes one (idempotent); the row stays as the audit.

A caller whose own token is bound to agents (a scoped admin token) manages only tokens
within its own reach: it may issue one for a subset of its agents and permissions (a session
token for its agent, say), and sees and revokes only tokens bound to its agents.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from fastapi.responses import JSONResponse
from pydantic import AliasChoices, Field

from signet_desktop.api.http.principal import Principal, principal_of
from signet_desktop.api.http.schemas import Body
from signet_desktop.api.http.scope import get_service, off_loop
from signet_desktop.domain.errors import Forbidden, NotFound
from signet_desktop.domain.tokens import MAX_TTL_SECONDS, MIN_TTL_SECONDS, ApiToken
from signet_desktop.service.tokens import TokenService

router = APIRouter(tags=["tokens"])

TokenRef = Annotated[str, Path(min_length=1, max_length=64)]


class TokenBody(Body):
    """POST /api/tokens."""

    name: str = Field(min_length=1, max_length=64)
    permissions: list[str] = Field(min_length=1, max_length=3)
    agents: list[str] = Field(min_length=1, max_length=64)
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
        "createdAt": token.created_at,
        "expiresAt": token.expires_at,
        "revokedAt": token.revoked_at,
        "state": token.state(TokenService.now()),
    }


def within_reach(principal: Principal, token: ApiToken) -> bool:
    """The caller could have issued this token itself (every agent of it is the caller's)."""
    return principal.agents is None or token.agents <= principal.agents


@router.post("/api/tokens", operation_id="token_create", status_code=201)
async def token_create(body: TokenBody, request: Request) -> JSONResponse:
    """Issue a token; its `secret` is in this answer and nowhere else, ever."""
    tokens = get_service(request).tokens
    spec = tokens.spec(
        body.name,
        body.permissions,
        body.agents,
        ttl_seconds=body.ttl_seconds,
        session=body.session,
    )
    principal = principal_of(request)
    if principal.agents is not None and not spec.agents <= principal.agents:
        raise Forbidden(
            "a token may only issue tokens for its own agents", code="agent_not_allowed"
        )
    if not spec.permissions <= principal.permissions:
        raise Forbidden(
            "a token may only issue tokens with permissions it holds", code="permission_denied"
        )
    issued = await off_loop(tokens.create, spec)
    return JSONResponse({**token_json(issued.token), "secret": issued.secret}, status_code=201)


@router.get("/api/tokens", operation_id="token_list")
async def token_list(request: Request) -> JSONResponse:
    """Every token issued, oldest first, without secrets."""
    found = await off_loop(get_service(request).tokens.list)
    principal = principal_of(request)
    visible = [token_json(token) for token in found if within_reach(principal, token)]
    return JSONResponse({"tokens": visible})


@router.delete("/api/tokens/{token_ref}", operation_id="token_revoke")
async def token_revoke(token_ref: TokenRef, request: Request) -> JSONResponse:
    """Revoke the token with this id or name; requests showing it get 401 `token_revoked`."""
    tokens = get_service(request).tokens
    found = await off_loop(tokens.get, token_ref)
    if not within_reach(principal_of(request), found):
        raise NotFound(f"no token with id or name {token_ref!r}", code="token_not_found")
    revoked = await off_loop(tokens.revoke, found.id)
    return JSONResponse({"token": token_json(revoked)})
