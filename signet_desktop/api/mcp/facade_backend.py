"""The in-process backend of the daemon's `/mcp`: the facade, as the HTTP routes call it.

Each call does what its route does: the same pydantic body model (so a bad argument gets the
route's 422 message), the same facade method with the agent and actor taken from the request's
headers as HTTP takes them, the same view from `api/views.py`, encoded in the worker thread.
Core refusals keep their message and code, escaped as HTTP escapes them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.requests import Request

from signet_desktop.api.feedback_views import feedback_json
from signet_desktop.api.hook_views import (
    bypass_json,
    session_hits_json,
    session_page_json,
    turns_json,
)
from signet_desktop.api.http.errors import describe_validation, escape_text
from signet_desktop.api.http.rendering import encode_json
from signet_desktop.api.http.routes.feedback import FeedbackBody
from signet_desktop.api.http.routes.hooks import BypassBody, SessionSearchBody
from signet_desktop.api.http.routes.knowledge import DetailParams, ExpandBody
from signet_desktop.api.http.routes.knowledge import ListParams as EntityListParams
from signet_desktop.api.http.schemas import (
    ForgetBody,
    ListParams,
    PatchBody,
    RecallBody,
    RememberBody,
)
from signet_desktop.api.http.scope import (
    ACTOR_HEADER,
    ACTOR_TYPE_HEADER,
    SESSION_HEADER,
    off_loop,
    resolve_agent,
)
from signet_desktop.api.knowledge_views import (
    entity_detail_json,
    entity_page_json,
    expansion_json,
)
from signet_desktop.api.mcp.backend import Body, ToolFailure
from signet_desktop.api.recall_views import recall_json
from signet_desktop.api.views import change_json, memory_json, modify_json, page_json, remember_json
from signet_desktop.domain.errors import SignetError
from signet_desktop.domain.memory import DEFAULT_AGENT_ID, Actor
from signet_desktop.domain.scope import make_actor
from signet_desktop.service.facade import SignetService
from signet_desktop.service.hooks.service import HookContext

MCP_ACTOR = "mcp"  # changed_by when the client names no actor (x-signet-actor)
MCP_ACTOR_TYPE = "agent"

M = TypeVar("M", bound=BaseModel)
DEFAULT_SESSION_HITS = 10
DEFAULT_SESSION_PAGE = 50  # GET /api/sessions' default
UNKNOWN_HARNESS = "unknown"  # a bypass names no harness (as the route without one)


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is asking, as extracted from one HTTP request (the core checks the values)."""

    agent_id: str
    actor: str
    actor_type: str
    session_key: str | None = None
    request_id: str | None = None

    @classmethod
    def of(cls, request: Request | None) -> Caller:
        """From the request's headers, as HTTP resolves them (no request: the default agent)."""
        if request is None:
            return cls(DEFAULT_AGENT_ID, MCP_ACTOR, MCP_ACTOR_TYPE)
        headers = request.headers
        return cls(
            agent_id=resolve_agent(request, None),
            actor=headers.get(ACTOR_HEADER) or MCP_ACTOR,
            actor_type=headers.get(ACTOR_TYPE_HEADER) or MCP_ACTOR_TYPE,
            session_key=headers.get(SESSION_HEADER) or None,
            request_id=request.scope.get("state", {}).get("request_id"),
        )

    def make_actor(self) -> Actor:
        return make_actor(
            self.actor, self.actor_type, request_id=self.request_id, session_id=self.session_key
        )


def parse(model: type[M], data: Body, where: str = "body") -> M:
    """`data` as the route's model, or the route's 422 refusal."""
    try:
        return model.model_validate(dict(data))
    except ValidationError as exc:
        errors = [{**error, "loc": (where, *error["loc"])} for error in exc.errors()]
        message, _ = describe_validation(errors)
        raise ToolFailure(message, "invalid_request") from None


class FacadeBackend:
    """The memory routes' work done in-process for one caller."""

    def __init__(self, service: SignetService, caller: Caller) -> None:
        self.service = service
        self.caller = caller

    async def _run(self, work: Callable[[], Any]) -> str:
        """`work()` (facade call and view) and its encoding, in the worker thread pool."""
        try:
            encoded = await off_loop(lambda: encode_json(work))
        except SignetError as exc:
            raise ToolFailure(escape_text(exc.message), exc.code) from None
        return encoded.decode("utf-8")

    async def search(self, body: Body) -> str:
        query = parse(RecallBody, body).to_query(self.caller.agent_id)
        return await self._run(lambda: recall_json(self.service.recall.search(query)))

    async def store(self, body: Body) -> str:
        request = parse(RememberBody, body).to_request(self.caller.agent_id)
        memories = self.service.memories
        return await self._run(
            lambda: remember_json(memories.remember(request, self.caller.make_actor()))
        )

    async def get(self, memory_id: str) -> str:
        agent_id = self.caller.agent_id
        return await self._run(lambda: memory_json(self.service.memories.get(agent_id, memory_id)))

    async def list(self, params: Body) -> str:
        page = parse(ListParams, params, "query")
        agent_id = self.caller.agent_id
        memories = self.service.memories
        return await self._run(
            lambda: page_json(memories.list_page(agent_id, page.limit, page.offset, page.type))
        )

    async def modify(self, memory_id: str, body: Body) -> str:
        patch = parse(PatchBody, body)

        def work() -> Any:
            change = self.service.memories.modify(
                self.caller.agent_id,
                memory_id,
                patch.to_patch(),
                reason=patch.reason or "",
                if_version=patch.if_version,
                actor=self.caller.make_actor(),
            )
            return modify_json(change)

        return await self._run(work)

    async def forget(self, memory_id: str, body: Body) -> str:
        forget = parse(ForgetBody, body)

        def work() -> Any:
            change = self.service.memories.forget(
                self.caller.agent_id,
                memory_id,
                reason=forget.reason or "",
                force=bool(forget.force),
                if_version=forget.if_version,
                actor=self.caller.make_actor(),
            )
            return change_json("deleted", change)

        return await self._run(work)

    async def session_search(self, body: Body) -> str:
        search = parse(SessionSearchBody, body)
        if not search.query or not search.query.strip():  # as the route refuses it
            raise ToolFailure("query is required", "query_required")
        text = search.query

        def work() -> Any:
            hits = self.service.transcripts.search(
                self.caller.agent_id,
                text,
                session_key=search.session_key,
                project=search.project,
                limit=search.limit or DEFAULT_SESSION_HITS,
            )
            return session_hits_json(hits)

        return await self._run(work)

    async def feedback(self, body: Body) -> str:
        parsed = parse(FeedbackBody, body)
        agent_id, key = self.caller.agent_id, parsed.session_key or ""
        feedback = self.service.feedback
        return await self._run(lambda: feedback_json(feedback.rate(agent_id, key, parsed.feedback)))

    async def secret_names(self) -> str:
        secrets, agent_id = self.service.secrets, self.caller.agent_id
        return await self._run(lambda: {"secrets": list(secrets.names(agent_id))})

    async def session_bypass(self, session_key: str, body: Body) -> str:
        parsed = parse(BypassBody, body)
        ctx = HookContext(
            agent_id=self.caller.agent_id,
            harness=UNKNOWN_HARNESS,
            session_key=session_key,
            actor=self.caller.make_actor(),
        )
        hooks = self.service.hooks
        return await self._run(lambda: bypass_json(hooks.set_bypass(ctx, parsed.enabled)))

    async def sessions(self, params: Body) -> str:
        limit = int(params.get("limit", DEFAULT_SESSION_PAGE))
        agent_id, transcripts = self.caller.agent_id, self.service.transcripts

        def work() -> Any:
            listing = transcripts.sessions(agent_id, limit=limit)
            return session_page_json(listing.rows, listing.total, limit, 0)

        return await self._run(work)

    async def session_transcript(self, session_key: str) -> str:
        agent_id, transcripts = self.caller.agent_id, self.service.transcripts
        return await self._run(
            lambda: turns_json(session_key, transcripts.turns(agent_id, session_key))
        )

    async def knowledge_expand(self, body: Body) -> str:
        parsed = parse(ExpandBody, body)
        agent_id, expansion = self.caller.agent_id, self.service.expansion
        return await self._run(
            lambda: expansion_json(
                expansion.expand(
                    agent_id,
                    parsed.entity,
                    aspect=parsed.aspect,
                    question=parsed.question,
                    max_tokens=parsed.max_tokens,
                )
            )
        )

    async def knowledge_entities(self, params: Body) -> str:
        query = parse(EntityListParams, params, "query")
        agent_id, knowledge = self.caller.agent_id, self.service.knowledge
        return await self._run(
            lambda: entity_page_json(
                knowledge.list_entities(
                    agent_id,
                    query=query.q,
                    entity_type=query.type,
                    status=query.status,
                    limit=query.limit,
                    offset=query.offset,
                )
            )
        )

    async def knowledge_entity(self, entity_id: str, params: Body) -> str:
        query = parse(DetailParams, params, "query")
        agent_id, knowledge = self.caller.agent_id, self.service.knowledge
        return await self._run(
            lambda: entity_detail_json(
                knowledge.get_entity(agent_id, entity_id, mention_limit=query.mention_limit)
            )
        )
