"""Request bodies of the hook routes: Signet's `/api/hooks/*` and Claude Code's own payloads.

Unknown fields are ignored (harnesses add fields over time); the fields we read are typed
strictly. `harness/adapters.py` turns a body plus headers into the core's `HookContext`.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import AliasChoices, BeforeValidator, Field

from signet_desktop.api.http.schemas import Body, as_of_field
from signet_desktop.domain.control_text import drop_controls

MAX_TEXT = 200_000
MAX_SUMMARY = 50_000
MAX_COUNT = 2**53  # any count a JSON number holds exactly; beyond it is a 422


def _alias(*names: str) -> Any:
    return Field(default=None, validation_alias=AliasChoices(*names))


# Conversation text a harness relays (prompts, replies, transcripts, summaries): control
# characters are dropped, not refused, so a prompt with a pasted ANSI log is still recorded.
# Identifiers and every other field keep the refusal every route applies.
RelayedText = Annotated[str | None, BeforeValidator(drop_controls)]
RelayedTurns = Annotated[list[dict[str, Any]] | None, BeforeValidator(drop_controls)]
RELAYED_KEYS = frozenset(
    {
        "userMessage",
        "userPrompt",
        "prompt",
        "user_prompt",
        "lastAssistantMessage",
        "last_assistant_message",
        "transcript",
        "context",
        "sessionContext",
        "session_context",
        "summary",
        "content",
        "query",
        "custom_instructions",
    }
)


class HookBody(Body):
    """Fields every Signet hook body may carry."""

    RAW_TEXT_FIELDS: ClassVar[frozenset[str]] = RELAYED_KEYS

    harness: str | None = None
    agent_id: str | None = _alias("agentId", "agent_id")
    session_key: str | None = _alias("sessionKey", "session_key")
    session_id: str | None = _alias("sessionId", "session_id")
    project: str | None = _alias("project", "cwd")
    runtime_path: str | None = _alias("runtimePath", "runtime_path")


class SessionStartBody(HookBody):
    context: RelayedText = None
    harness_agent_id: str | None = _alias("harnessAgentId")
    parent_session_key: str | None = _alias("parentSessionKey")


class PromptSubmitBody(HookBody):
    user_message: RelayedText = _alias("userMessage", "userPrompt", "prompt", "user_prompt")
    last_assistant_message: RelayedText = _alias("lastAssistantMessage", "last_assistant_message")
    transcript_path: str | None = _alias("transcriptPath", "transcript_path")


class SessionEndBody(HookBody):
    transcript_path: str | None = _alias("transcriptPath", "transcript_path")
    transcript: RelayedTurns = None
    reason: str | None = None


class PreCompactionBody(HookBody):
    session_context: RelayedText = _alias("sessionContext", "session_context")
    message_count: int | None = Field(
        default=None,
        ge=0,
        le=MAX_COUNT,
        validation_alias=AliasChoices("messageCount", "message_count"),
    )


class CompactionCompleteBody(HookBody):
    summary: RelayedText = Field(default=None, max_length=MAX_SUMMARY)


class HookRememberBody(HookBody):
    content: RelayedText = None
    who: str | None = None
    idempotency_key: str | None = _alias("idempotencyKey", "idempotency_key")


class HookRecallBody(HookBody):
    query: RelayedText = None
    limit: int | None = Field(default=None, ge=1, le=50)
    as_of: str | None = as_of_field()


class ClaudeCodeHookBody(Body):
    """What Claude Code POSTs to an HTTP hook (and pipes to a command hook)."""

    RAW_TEXT_FIELDS: ClassVar[frozenset[str]] = RELAYED_KEYS

    session_id: str | None = None
    transcript_path: str | None = None
    cwd: str | None = None
    hook_event_name: str | None = None
    permission_mode: str | None = None
    source: str | None = None  # SessionStart: startup | resume | clear | compact
    prompt: RelayedText = None  # UserPromptSubmit
    trigger: str | None = None  # PreCompact: manual | auto
    custom_instructions: RelayedText = None
    reason: str | None = None  # SessionEnd
    agent_id: str | None = None  # set inside subagents; not Signet's agent scope
