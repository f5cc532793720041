"""POST /api/memory/feedback: an agent rates recalled memories (Signet's route and body).

Body `{sessionKey, feedback: {memoryId: -1..1}}` (`ratings` is accepted for `feedback`).
Answers Signet's `{ok: true, recorded}` plus each memory's running mean in the session; a
rating of a memory the agent does not have is 404 and nothing is recorded
(`service/memories/feedback.py`).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import AliasChoices, Field

from signet_desktop.api.feedback_views import feedback_json
from signet_desktop.api.http.json_route import JsonBodyRoute
from signet_desktop.api.http.schemas import Body
from signet_desktop.api.http.scope import get_service, off_loop, resolve_agent

router = APIRouter(tags=["memory"], route_class=JsonBodyRoute)


class FeedbackBody(Body):
    session_key: str | None = Field(
        None, max_length=512, validation_alias=AliasChoices("sessionKey", "session_key")
    )
    feedback: dict[str, Any] | None = Field(
        None, validation_alias=AliasChoices("feedback", "ratings")
    )
    agent_id: str | None = Field(None, validation_alias=AliasChoices("agentId", "agent_id"))


@router.post("/api/memory/feedback", operation_id="memory_feedback")
async def memory_feedback(body: FeedbackBody, request: Request) -> JSONResponse:
    """Fold each rating into the memory's running mean for the session; all or nothing."""
    service = get_service(request).feedback
    outcome = await off_loop(
        service.rate,
        resolve_agent(request, body.agent_id),
        body.session_key or "",
        body.feedback,
    )
    return JSONResponse(feedback_json(outcome))
