"""Harness payloads -> the core's `HookContext`: one small function per source of hooks.

Signet's own clients (its `signet hook` command, the OpenCode plugin) name the harness in the
body and use camelCase; Claude Code's HTTP hooks send its native snake_case payload. Either
way the agent comes from the body or the `x-signet-agent-id` header (default `default`), the
session from `sessionKey`/`sessionId`/`session_id` or `x-signet-session-key`, the project from
`project`/`cwd`, and the runtime path from the body or `x-signet-runtime-path`.
"""

from __future__ import annotations

from collections.abc import Mapping

from signet_desktop.domain.memory import DEFAULT_AGENT_ID, Actor
from signet_desktop.service.hooks.service import HookContext

AGENT_HEADER = "x-signet-agent-id"
SESSION_HEADER = "x-signet-session-key"
RUNTIME_PATH_HEADER = "x-signet-runtime-path"
NO_HOOKS_HEADER = "x-signet-no-hooks"
CLAUDE_CODE = "claude-code"


def hooks_disabled(headers: Mapping[str, str]) -> bool:
    """`x-signet-no-hooks: 1` asks for empty answers (Signet's contract)."""
    return headers.get(NO_HOOKS_HEADER, "").strip().lower() in ("1", "true", "yes")


def signet_context(
    headers: Mapping[str, str],
    *,
    harness: str | None,
    agent_id: str | None,
    session_key: str | None,
    session_id: str | None,
    project: str | None,
    runtime_path: str | None,
    actor: Actor,
) -> HookContext:
    """A Signet hook body (`harness` required; the core refuses a missing or bad one)."""
    return HookContext(
        agent_id=agent_id or headers.get(AGENT_HEADER) or DEFAULT_AGENT_ID,
        harness=harness or "",
        session_key=session_key or session_id or headers.get(SESSION_HEADER) or None,
        project=project or None,
        runtime_path=runtime_path or headers.get(RUNTIME_PATH_HEADER) or None,
        actor=actor,
    )


def claude_code_context(
    headers: Mapping[str, str],
    *,
    session_id: str | None,
    cwd: str | None,
    actor: Actor,
    agent_id: str | None = None,
) -> HookContext:
    """Claude Code's HTTP hook payload: its `session_id` and `cwd`; the legacy runtime path."""
    return HookContext(
        agent_id=agent_id or headers.get(AGENT_HEADER) or DEFAULT_AGENT_ID,
        harness=CLAUDE_CODE,
        session_key=session_id or headers.get(SESSION_HEADER) or None,
        project=cwd or None,
        runtime_path=headers.get(RUNTIME_PATH_HEADER) or "legacy",
        actor=actor,
    )


def claude_code_output(event: str, context: str) -> dict[str, object]:
    """Claude Code's JSON hook output carrying additional context (empty: nothing to add)."""
    if not context:
        return {}
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}
