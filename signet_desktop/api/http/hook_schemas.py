"""Request bodies of the hook routes: Signet's `/api/hooks/*` and Claude Code's own payloads.

Unknown fields are ignored (harnesses add fields over time); the fields we read are typed
strictly. `harness/adapters.py` turns a body plus headers into the core's `HookContext`.
"""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, Field

from signet_desktop.api.http.schemas import Body

MAX_TEXT = 200_000
MAX_SUMMARY = 50_000
MAX_COUNT = 2**53  # any count a JSON number holds exactly; beyond it is a 422


def _alias(*names: str) -> Any:
    return Field(default=None, validation_alias=AliasChoices(*names))


class HookBody(Body):
    """Fields every Signet hook body may carry."""

    harness: str | None = None
    agent_id: str | None = _alias("agentId", "agent_id")
    session_key: str | None = _alias("sessionKey", "session_key")
    session_id: str | None = _alias("sessionId", "session_id")
    project: str | None = _alias("project", "cwd")
    runtime_path: str | None = _alias("runtimePath", "runtime_path")


class SessionStartBody(HookBody):
    context: str | None = None
    harness_agent_id: str | None = _alias("harnessAgentId")
    parent_session_key: str | None = _alias("parentSessionKey")


class PromptSubmitBody(HookBody):
    user_message: str | None = _alias("userMessage", "userPrompt", "prompt", "user_prompt")
    last_assistant_message: str | None = _alias("lastAssistantMessage", "last_assistant_message")
    transcript_path: str | None = _alias("transcriptPath", "transcript_path")


class SessionEndBody(HookBody):
    transcript_path: str | None = _alias("transcriptPath", "transcript_path")
    transcript: list[dict[str, Any]] | None = None
    reason: str | None = None


class PreCompactionBody(HookBody):
    session_context: str | None = _alias("sessionContext", "session_context")
    message_count: int | None = Field(
        default=None,
        ge=0,
        le=MAX_COUNT,
        validation_alias=AliasChoices("messageCount", "message_count"),
    )


class CompactionCompleteBody(HookBody):
    summary: str | None = Field(default=None, max_length=MAX_SUMMARY)


class HookRememberBody(HookBody):
    content: str | None = None
    who: str | None = None
    idempotency_key: str | None = _alias("idempotencyKey", "idempotency_key")


class HookRecallBody(HookBody):
    query: str | None = None
    limit: int | None = Field(default=None, ge=1, le=50)


class ClaudeCodeHookBody(Body):
    """What Claude Code POSTs to an HTTP hook (and pipes to a command hook)."""

    session_id: str | None = None
    transcript_path: str | None = None
    cwd: str | None = None
    hook_event_name: str | None = None
    permission_mode: str | None = None
    source: str | None = None  # SessionStart: startup | resume | clear | compact
    prompt: str | None = None  # UserPromptSubmit
    trigger: str | None = None  # PreCompact: manual | auto
    custom_instructions: str | None = None
    reason: str | None = None  # SessionEnd
    agent_id: str | None = None  # set inside subagents; not Signet's agent scope
