"""Who is asking: the agent scope and the actor of a request, and running the service off-loop."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import ParamSpec, TypeVar

import anyio.to_thread
from fastapi import Request

from signet_desktop.domain.errors import InvalidInput
from signet_desktop.domain.memory import DEFAULT_AGENT_ID, Actor
from signet_desktop.service.facade import SignetService

AGENT_HEADER = "x-signet-agent-id"
ACTOR_HEADER = "x-signet-actor"
ACTOR_TYPE_HEADER = "x-signet-actor-type"
SESSION_HEADER = "x-signet-session-key"
REASON_HEADER = "x-signet-reason"
AGENT_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}")
ACTOR_TYPE_PATTERN = re.compile(r"[a-z][a-z0-9_-]{0,31}")
MAX_ACTOR_CHARS = 128

P = ParamSpec("P")
T = TypeVar("T")


def get_service(request: Request) -> SignetService:
    """The facade this app serves (set by create_app)."""
    service: SignetService = request.app.state.service
    return service


def resolve_agent(request: Request, explicit: str | None) -> str:
    """`agentId` from the body/query, else the x-signet-agent-id header, else `default`."""
    value = explicit
    if value is None:
        value = request.headers.get(AGENT_HEADER) or None
    if value is None:
        return DEFAULT_AGENT_ID
    if not AGENT_ID_PATTERN.fullmatch(value):
        raise InvalidInput(
            "agentId must be 1-128 characters of letters, digits and . _ : @ -, "
            "starting with a letter or digit",
            code="agent_id_invalid",
        )
    return value


def resolve_actor(
    request: Request, changed_by: str | None = None, session_id: str | None = None
) -> Actor:
    """The actor from `changed_by` or x-signet-actor, typed by x-signet-actor-type."""
    name = changed_by if changed_by is not None else request.headers.get(ACTOR_HEADER)
    name = (name or "").strip() or "user"
    if len(name) > MAX_ACTOR_CHARS or not name.isprintable():
        raise InvalidInput(
            "changed_by / x-signet-actor is too long or invalid", code="actor_invalid"
        )
    actor_type = (request.headers.get(ACTOR_TYPE_HEADER) or "user").strip().lower()
    if not ACTOR_TYPE_PATTERN.fullmatch(actor_type):
        raise InvalidInput("x-signet-actor-type is invalid", code="actor_invalid")
    session = session_id or request.headers.get(SESSION_HEADER) or None
    if session is not None and (len(session) > 512 or not session.isprintable()):
        raise InvalidInput("session key is too long or invalid", code="session_invalid")
    return Actor(
        changed_by=name,
        actor_type=actor_type,
        request_id=getattr(request.state, "request_id", None),
        session_id=session,
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
