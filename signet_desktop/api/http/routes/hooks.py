"""/api/hooks/*: Signet's hook routes, Claude Code's native HTTP hooks, and /api/sessions.

Signet's clients POST `{harness, …}` bodies and read Signet's shapes; Claude Code's HTTP hooks
POST its own payload to `/api/hooks/claude-code/<event>` and read its JSON hook output
(`hookSpecificOutput.additionalContext`), so no adapter process starts per prompt. A request
with `x-signet-no-hooks: 1` gets the empty answer and writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response

from signet_desktop.api.hook_views import (
    bypass_json,
    compaction_complete_json,
    pre_compaction_json,
    prompt_submit_json,
    session_end_json,
    session_hits_json,
    session_page_json,
    session_start_json,
    transcript_json,
    turns_json,
)
from signet_desktop.api.http.hook_schemas import (
    ClaudeCodeHookBody,
    CompactionCompleteBody,
    HookBody,
    HookRecallBody,
    HookRememberBody,
    PreCompactionBody,
    PromptSubmitBody,
    SessionEndBody,
    SessionStartBody,
)
from signet_desktop.api.http.json_route import JsonBodyRoute
from signet_desktop.api.http.principal import principal_of
from signet_desktop.api.http.rendering import json_off_loop
from signet_desktop.api.http.schemas import SessionKey
from signet_desktop.api.http.scope import get_service, off_loop, resolve_actor, resolve_agent
from signet_desktop.api.recall_views import recall_json
from signet_desktop.domain.errors import InvalidInput
from signet_desktop.domain.recall import RecallQuery
from signet_desktop.evidence.transcript_formats import message_turns
from signet_desktop.harness.adapters import (
    claude_code_context,
    claude_code_output,
    hooks_disabled,
    signet_context,
)
from signet_desktop.recall.transcript_channel import TurnScope
from signet_desktop.service.hooks.service import (
    CompactionResult,
    HookContext,
    HookService,
    Identity,
    PreCompactionResult,
    PromptResult,
    SessionEndResult,
    SessionStartResult,
)
from signet_desktop.service.memories.service import RememberRequest

router = APIRouter(tags=["hooks"], route_class=JsonBodyRoute)

HOOK_RECALL_LIMIT = 10
MAX_OFFSET = 10_000_000


def _context(request: Request, body: HookBody) -> HookContext:
    return _with_caller(
        request,
        signet_context(
            request.headers,
            harness=body.harness,
            agent_id=resolve_agent(request, body.agent_id or None),  # the token's binding holds
            session_key=body.session_key,
            session_id=body.session_id,
            project=body.project,
            runtime_path=body.runtime_path,
            actor=resolve_actor(request, session_id=body.session_key or body.session_id),
        ),
    )


def _with_caller(request: Request, ctx: HookContext) -> HookContext:
    # A transcriptPath is a server path: only the local user reads its default roots.
    return replace(ctx, local=principal_of(request).local)


def _require_harness(body: HookBody) -> None:
    if not body.harness:
        raise InvalidInput(
            "harness is required (claude-code, codex, opencode, …)", code="harness_required"
        )


def _required_text(value: str | None, field: str) -> str:
    """`value` when it has more than white space, else 422 `<field>_required`."""
    if not value or not value.strip():
        raise InvalidInput(f"{field} is required", code=f"{field}_required")
    return value


R = TypeVar("R")

EMPTY_START = SessionStartResult(Identity("Signet", ""), (), "", "")


async def _hook(
    request: Request,
    body: HookBody,
    view: Callable[[R], dict[str, Any]],
    empty: R,
    bind: Callable[[HookService], Callable[[HookContext], R]],
) -> JSONResponse:
    """One Signet hook: the harness is required; `x-signet-no-hooks` answers `empty` and writes
    nothing; otherwise the bound call runs off the loop with the caller's context."""
    _require_harness(body)
    if hooks_disabled(request.headers):
        return JSONResponse(view(empty))
    call = bind(get_service(request).hooks)
    return JSONResponse(view(await off_loop(call, _context(request, body))))


@router.post("/api/hooks/session-start", operation_id="hook_session_start")
async def session_start(body: SessionStartBody, request: Request) -> JSONResponse:
    """Identity, the memories that matter here, recent context and the text to inject."""
    return await _hook(
        request, body, session_start_json, EMPTY_START, lambda hooks: hooks.session_start
    )


@router.post("/api/hooks/user-prompt-submit", operation_id="hook_user_prompt_submit")
async def user_prompt_submit(body: PromptSubmitBody, request: Request) -> JSONResponse:
    """Memories relevant to this prompt that the session has not been shown yet."""
    return await _hook(
        request,
        body,
        prompt_submit_json,
        PromptResult("", 0, (), "none"),
        lambda hooks: partial(
            hooks.user_prompt_submit,
            prompt=body.user_message or "",
            transcript_path=body.transcript_path,  # captured after the answer (live turns)
        ),
    )


@router.post("/api/hooks/session-end", operation_id="hook_session_end")
async def session_end(body: SessionEndBody, request: Request) -> JSONResponse:
    """Retain the transcript (canonical JSONL, completed row) and close the session."""
    return await _hook(
        request,
        body,
        session_end_json,
        SessionEndResult(None),
        lambda hooks: partial(
            hooks.session_end,
            transcript_path=body.transcript_path,
            turns=None if body.transcript is None else message_turns(body.transcript),
        ),
    )


@router.post("/api/hooks/pre-compaction", operation_id="hook_pre_compaction")
async def pre_compaction(body: PreCompactionBody, request: Request) -> JSONResponse:
    """The summary prompt for the harness's compaction (the epoch does not change yet)."""
    return await _hook(
        request,
        body,
        pre_compaction_json,
        PreCompactionResult("", ""),
        lambda hooks: hooks.pre_compaction,
    )


@router.post("/api/hooks/compaction-complete", operation_id="hook_compaction_complete")
async def compaction_complete(body: CompactionCompleteBody, request: Request) -> JSONResponse:
    """Keep the compaction summary and start the session's next context epoch."""
    return await _hook(
        request,
        body,
        compaction_complete_json,
        CompactionResult(None, 0),
        lambda hooks: partial(hooks.compaction_complete, summary=body.summary or ""),
    )


@router.post("/api/hooks/remember", operation_id="hook_remember")
async def hook_remember(body: HookRememberBody, request: Request) -> JSONResponse:
    """Signet's hook-side remember: `{saved, id}`."""
    _require_harness(body)
    content = _required_text(body.content, "content")
    ctx = _context(request, body)
    remember = RememberRequest(
        content=content,
        agent_id=ctx.agent_id,
        who=body.who or ctx.harness,
        project=ctx.project,
        session_id=ctx.session_key,
        idempotency_key=body.idempotency_key,
    )
    outcome = await off_loop(get_service(request).memories.remember, remember, ctx.actor)
    return JSONResponse({"saved": True, "id": outcome.memory.id, "deduped": outcome.deduped})


@router.post("/api/hooks/recall", operation_id="hook_recall")
async def hook_recall(body: HookRecallBody, request: Request) -> Response:
    """Signet's hook-side recall: the recall response plus its legacy `count`."""
    _require_harness(body)
    text = _required_text(body.query, "query")
    ctx = _context(request, body)
    limit = body.limit or HOOK_RECALL_LIMIT
    query = RecallQuery(query=text, agent_id=ctx.agent_id, limit=limit, as_of=body.as_of)

    def render(result: Any) -> dict[str, Any]:
        answer = recall_json(result)
        answer["count"] = len(answer["results"])
        answer["memories"] = answer["results"]
        return answer

    service = get_service(request)

    # Turns as the prompt hook scopes them: this project's sessions or ones without a project,
    # never the asking session's own.
    turns = TurnScope(ctx.agent_id, ctx.project, "scoped", exclude_session=ctx.session_key)

    def search() -> Any:  # recall's hits come through the safety gate (service/recall/service.py)
        return service.recall.search(query, turn_scope=turns)

    return await json_off_loop(search, render)


# -- Claude Code's own HTTP hooks ---------------------------------------------------------


def _claude_context(request: Request, body: ClaudeCodeHookBody) -> HookContext:
    return _with_caller(
        request,
        claude_code_context(
            request.headers,
            session_id=body.session_id,
            cwd=body.cwd,
            actor=resolve_actor(request, session_id=body.session_id),
            agent_id=resolve_agent(request, None),  # the token's binding holds
        ),
    )


@router.post("/api/hooks/claude-code/session-start", operation_id="claude_code_session_start")
async def claude_session_start(body: ClaudeCodeHookBody, request: Request) -> JSONResponse:
    if hooks_disabled(request.headers):
        return JSONResponse({})
    hooks = get_service(request).hooks
    result = await off_loop(hooks.session_start, _claude_context(request, body))
    return JSONResponse(claude_code_output("SessionStart", result.inject))


@router.post(
    "/api/hooks/claude-code/user-prompt-submit", operation_id="claude_code_user_prompt_submit"
)
async def claude_prompt_submit(body: ClaudeCodeHookBody, request: Request) -> JSONResponse:
    if hooks_disabled(request.headers):
        return JSONResponse({})
    hooks = get_service(request).hooks
    result = await off_loop(
        hooks.user_prompt_submit,
        _claude_context(request, body),
        body.prompt or "",
        transcript_path=body.transcript_path,  # captured after the answer (live turns)
    )
    return JSONResponse(claude_code_output("UserPromptSubmit", result.inject))


@router.post("/api/hooks/claude-code/pre-compact", operation_id="claude_code_pre_compact")
async def claude_pre_compact(body: ClaudeCodeHookBody, request: Request) -> JSONResponse:
    """Claude Code compacts on its own; retain what the transcript holds so far."""
    if hooks_disabled(request.headers):
        return JSONResponse({})
    ctx = _claude_context(request, body)
    service = get_service(request)
    if body.transcript_path and ctx.session_key:
        await off_loop(
            service.transcripts.capture_file,
            ctx.agent_id,
            ctx.session_key,
            ctx.harness,
            body.transcript_path,
            project=ctx.project,
            local=ctx.local,
        )
    return JSONResponse({})


@router.post("/api/hooks/claude-code/session-end", operation_id="claude_code_session_end")
async def claude_session_end(body: ClaudeCodeHookBody, request: Request) -> JSONResponse:
    if hooks_disabled(request.headers):
        return JSONResponse({})
    hooks = get_service(request).hooks
    await off_loop(
        hooks.session_end,
        _claude_context(request, body),
        transcript_path=body.transcript_path,
    )
    return JSONResponse({})


# -- retained sessions --------------------------------------------------------------------


@router.get("/api/sessions", operation_id="sessions_list")
async def sessions_list(
    request: Request,
    agent_id: Annotated[str | None, Query(alias="agentId")] = None,
    harness: str | None = None,
    project: str | None = None,
    status: str | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> JSONResponse:
    transcripts = get_service(request).transcripts
    listing = await off_loop(
        transcripts.sessions,
        resolve_agent(request, agent_id),
        harness=harness,
        project=project,
        status=status,
        limit=limit,
        offset=offset,
    )
    return JSONResponse(session_page_json(listing.rows, listing.total, limit, offset))


@router.get("/api/sessions/{session_key}", operation_id="session_get")
async def session_get(
    session_key: SessionKey,
    request: Request,
    agent_id: Annotated[str | None, Query(alias="agentId")] = None,
) -> JSONResponse:
    transcripts = get_service(request).transcripts
    row = await off_loop(transcripts.get, resolve_agent(request, agent_id), session_key)
    return JSONResponse(transcript_json(row))


@router.get("/api/sessions/{session_key}/transcript", operation_id="session_transcript")
async def session_transcript(
    session_key: SessionKey,
    request: Request,
    agent_id: Annotated[str | None, Query(alias="agentId")] = None,
) -> JSONResponse:
    """The session's retained turns from its canonical JSONL, in order."""
    transcripts = get_service(request).transcripts
    turns = await off_loop(transcripts.turns, resolve_agent(request, agent_id), session_key)
    return JSONResponse(turns_json(session_key, turns))


class SessionSearchBody(HookBody):
    query: str | None = None
    current_session_key: str | None = None
    limit: int | None = None


@router.post("/api/sessions/search", operation_id="sessions_search")
async def sessions_search(body: SessionSearchBody, request: Request) -> JSONResponse:
    """BM25 over retained transcripts: `{hits: [{sessionKey, project, updatedAt, excerpt}]}`."""
    query = _required_text(body.query, "query")
    transcripts = get_service(request).transcripts
    hits = await off_loop(
        transcripts.search,
        resolve_agent(request, body.agent_id),
        query,
        session_key=body.session_key,
        project=body.project,
        limit=body.limit or 10,
    )
    return JSONResponse(session_hits_json(hits))


class BypassBody(HookBody):
    enabled: bool


@router.post("/api/sessions/{session_key}/bypass", operation_id="session_bypass")
async def session_bypass(
    session_key: SessionKey, body: BypassBody, request: Request
) -> JSONResponse:
    """Turn hooks off (`enabled: true`) or back on for one session."""
    ctx = signet_context(
        request.headers,
        harness=body.harness or "unknown",
        agent_id=resolve_agent(request, body.agent_id or None),
        session_key=session_key,
        session_id=None,
        project=body.project,
        runtime_path=None,
        actor=resolve_actor(request),
    )
    session = await off_loop(get_service(request).hooks.set_bypass, ctx, body.enabled)
    return JSONResponse(bypass_json(session))
