"""Who is asking, extracted from a request (the core checks it), and off-loop service calls."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import ParamSpec, Protocol, TypeVar

import anyio.to_thread
from fastapi import Request

from signet_desktop.api.http.principal import principal_of
from signet_desktop.domain.errors import Forbidden
from signet_desktop.domain.memory import DEFAULT_AGENT_ID, Actor
from signet_desktop.domain.scope import make_actor
from signet_desktop.service.facade import SignetService

AGENT_HEADER = "x-signet-agent-id"
ACTOR_HEADER = "x-signet-actor"
ACTOR_TYPE_HEADER = "x-signet-actor-type"
SESSION_HEADER = "x-signet-session-key"
REASON_HEADER = "x-signet-reason"

P = ParamSpec("P")
T = TypeVar("T")


def get_service(request: Request) -> SignetService:
    """The facade this app serves (set by create_app)."""
    service: SignetService = request.app.state.service
    return service


def resolve_agent(request: Request, explicit: str | None) -> str:
    """`agentId` from the body/query, else the x-signet-agent-id header, else the caller's
    own agent: the one agent its scoped token is bound to, or `default`.

    The one place an agent is taken from a request, so the one place a scoped token's agent
    binding is enforced: naming an agent the caller may not act for is 403
    `agent_not_allowed` (nothing read or written). The capability services validate the id
    itself (`domain/scope.py`).
    """
    value = explicit
    if value is None:
        value = request.headers.get(AGENT_HEADER) or None
    principal = principal_of(request)
    if value is None:
        value = principal.only_agent or DEFAULT_AGENT_ID
    if not principal.may_act_for(value):
        bound = ", ".join(sorted(principal.agents or ()))
        raise Forbidden(
            f"this token may not act for agent {value[:128]!r}; it is bound to {bound} "
            "(name one with agentId or x-signet-agent-id)",
            code="agent_not_allowed",
        )
    return value


class _NamesAgent(Protocol):
    @property
    def agent_id(self) -> str | None: ...


def body_agent(request: Request, body: _NamesAgent | None, params: _NamesAgent) -> str:
    """The agent a write acts for: the body's `agentId` over the query's (see resolve_agent)."""
    return resolve_agent(request, first_set(body.agent_id if body else None, params.agent_id))


def resolve_actor(
    request: Request, changed_by: str | None = None, session_id: str | None = None
) -> Actor:
    """The actor from `changed_by` or x-signet-actor, typed by x-signet-actor-type."""
    name = changed_by if changed_by is not None else request.headers.get(ACTOR_HEADER)
    return make_actor(
        name,
        request.headers.get(ACTOR_TYPE_HEADER),
        request_id=getattr(request.state, "request_id", None),
        session_id=session_id or request.headers.get(SESSION_HEADER) or None,
    )


def first_set(*values: T | None) -> T | None:
    """The first value that is not None (body beats query beats default)."""
    return next((value for value in values if value is not None), None)


def header_reason(request: Request, explicit: str | None) -> str | None:
    """The change reason from the body/query, else the x-signet-reason header."""
    return explicit if explicit is not None else request.headers.get(REASON_HEADER)


async def off_loop(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Run a blocking service call in the worker thread pool; the event loop stays free."""
    return await anyio.to_thread.run_sync(partial(fn, *args, **kwargs))
