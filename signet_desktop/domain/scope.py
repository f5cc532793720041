"""Who is asking: the rules for agent ids, actors and session keys, in one place.

Every capability service checks its arguments with these before touching data, so HTTP, MCP,
hooks, the CLI (through HTTP) and the inspector (in-process) get the same rules and the same
error codes. The edges only extract the values from headers and bodies. (A memory's
`project` is one of its fields and follows the remember rules in `domain/remember.py`.)
"""

from __future__ import annotations

import re

from signet_desktop.domain.errors import InvalidInput, check_match
from signet_desktop.domain.memory import Actor

AGENT_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}")
ACTOR_TYPE_PATTERN = re.compile(r"[a-z][a-z0-9_-]{0,31}")
MAX_ACTOR_CHARS = 128
MAX_SESSION_KEY_CHARS = 512
MAX_REQUEST_ID_CHARS = 128


def check_agent_id(agent_id: object) -> str:
    """An agent id: 1-128 of letters, digits and `. _ : @ -`, starting alphanumeric."""
    return check_match(
        agent_id,
        AGENT_ID_PATTERN,
        "agentId must be 1-128 characters of letters, digits and . _ : @ -, "
        "starting with a letter or digit",
        "agent_id_invalid",
    )


def check_session_key(session: str | None) -> str | None:
    """A harness session key (opaque text): printable, at most 512 characters."""
    if session is None:
        return None
    if not isinstance(session, str) or len(session) > MAX_SESSION_KEY_CHARS:
        raise InvalidInput("session key is too long or invalid", code="session_invalid")
    if not session.isprintable():
        raise InvalidInput("session key is too long or invalid", code="session_invalid")
    return session


def make_actor(
    name: str | None,
    actor_type: str | None = None,
    *,
    request_id: str | None = None,
    session_id: str | None = None,
) -> Actor:
    """An `Actor` from raw edge values (blank name: `user`; blank type: `user`)."""
    return check_actor(
        Actor(
            changed_by=(name or "").strip() or "user",
            actor_type=(actor_type or "user").strip().lower(),
            request_id=request_id,
            session_id=session_id,
        )
    )


def check_actor(actor: Actor) -> Actor:
    """Refuse an actor whose name, type, session or request id could not be stored as given."""
    name = actor.changed_by
    if not name or len(name) > MAX_ACTOR_CHARS or not name.isprintable():
        raise InvalidInput(
            "changed_by / x-signet-actor is too long or invalid", code="actor_invalid"
        )
    if not ACTOR_TYPE_PATTERN.fullmatch(actor.actor_type):
        raise InvalidInput("x-signet-actor-type is invalid", code="actor_invalid")
    check_session_key(actor.session_id)
    request_id = actor.request_id
    if request_id is not None and (
        len(request_id) > MAX_REQUEST_ID_CHARS or not request_id.isprintable()
    ):
        raise InvalidInput("request id is too long or invalid", code="request_id_invalid")
    return actor
