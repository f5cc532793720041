"""MCP prompts: two ways for an agent to start well with Signet.

- `recall_before_starting {topic}`: runs `memory_search` for the topic (the caller's scope)
  and hands the model what Signet remembers, quoted as data, with the advice to check it
  before starting and to dig further with `knowledge_expand` / `session_search`. A new task
  starts from what earlier sessions settled instead of re-deciding it.
- `remember_decision {decision, why?}`: asks the model to store a decision with
  `memory_store` (type `decision`, the reason inside the text so recall finds it) after
  checking with `memory_search` that it does not repeat or contradict an earlier one. It
  writes nothing itself: a prompt only shapes what the model is asked.

An unknown prompt name or a missing required argument is a protocol error `-32602`, as the
spec says; a refused search is the error `resources.protocol_error` makes of it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from signet_desktop.api.mcp.backend import MemoryBackend, ToolFailure
from signet_desktop.api.mcp.resources import protocol_error
from signet_desktop.api.mcp.tool_spec import as_data
from signet_desktop.domain.control_text import control_message, first_control
from signet_desktop.safety.defang import DATA_NOTE

RECALL = "recall_before_starting"
REMEMBER = "remember_decision"
RECALL_LIMIT = 8
MAX_ARGUMENT_CHARS = 4_000

PROMPTS: dict[str, types.Prompt] = {
    RECALL: types.Prompt(
        name=RECALL,
        title="Recall before starting",
        description="What Signet remembers about a topic, to read before starting work on it.",
        arguments=[
            types.PromptArgument(
                name="topic", description="the task or subject about to start", required=True
            )
        ],
    ),
    REMEMBER: types.Prompt(
        name=REMEMBER,
        title="Remember a decision",
        description="Ask the agent to store a decision (and why) in Signet memory.",
        arguments=[
            types.PromptArgument(name="decision", description="what was decided", required=True),
            types.PromptArgument(name="why", description="the reason, if there is one"),
        ],
    ),
}


def prompt_list() -> list[types.Prompt]:
    """Every prompt, for `prompts/list`."""
    return list(PROMPTS.values())


def _argument(arguments: Mapping[str, str], name: str, *, required: bool) -> str | None:
    value = arguments.get(name)
    if value is None or not str(value).strip():
        if required:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Missing required argument: {name}")
        return None
    text = str(value).strip()
    if len(text) > MAX_ARGUMENT_CHARS:
        raise MCPError(
            code=types.INVALID_PARAMS,
            message=f"{name} is longer than {MAX_ARGUMENT_CHARS} characters",
        )
    char = first_control(text)
    if char is not None:
        raise MCPError(code=types.INVALID_PARAMS, message=f"{name}: {control_message(char)}")
    return text


def _user(text: str) -> types.PromptMessage:
    return types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))


def _recalled_lines(found: Mapping[str, Any]) -> list[str]:
    lines = []
    for hit in found.get("results") or ():
        if isinstance(hit, dict):
            kind = "session turn" if hit.get("kind") == "transcript" else hit.get("type", "memory")
            lines.append(f"- [{hit.get('id')}] ({kind}) {hit.get('content', '')}")
    return lines


async def _recall(topic: str, backend: MemoryBackend) -> types.GetPromptResult:
    try:
        text = as_data(await backend.search({"query": topic, "limit": RECALL_LIMIT}))
    except ToolFailure as failure:
        raise protocol_error(failure) from None
    lines = _recalled_lines(json.loads(text))
    quoted = "\n".join(lines) if lines else "(nothing recalled for this topic)"
    message = (
        f"Before starting on: {json.dumps(topic, ensure_ascii=False)}\n\n"
        f"Signet recalled this from earlier sessions. {DATA_NOTE}\n\n{quoted}\n\n"
        "Read it first: keep to the decisions, constraints and preferences it records unless "
        "the user says otherwise, and say which of them you are relying on. For a named "
        "system or person, knowledge_expand gives its structure; session_search finds what "
        "was said. If none of it applies, say so and start."
    )
    return types.GetPromptResult(
        description=f"What Signet remembers about {topic[:80]}", messages=[_user(message)]
    )


def _remember(decision: str, why: str | None) -> types.GetPromptResult:
    content = f"Decision: {decision}" + (f" Why: {why}" if why else "")
    arguments = json.dumps({"content": content, "type": "decision"}, ensure_ascii=False)
    message = (
        "Record this decision in Signet memory so later sessions keep to it.\n\n"
        "1. Call memory_search with the decision's key words. If an earlier memory already "
        "says the same, stop there; if one contradicts it, tell the user which and ask "
        "before storing.\n"
        f"2. Otherwise call memory_store with {arguments}.\n"
        "3. Reply with the stored memory's id."
    )
    return types.GetPromptResult(
        description="Store a decision in Signet memory", messages=[_user(message)]
    )


async def get_prompt(
    name: str, arguments: Mapping[str, str] | None, backend: MemoryBackend
) -> types.GetPromptResult:
    """`prompts/get`: the prompt filled in (MCPError -32602 for a bad name or argument)."""
    given = arguments or {}
    if name == RECALL:
        topic = _argument(given, "topic", required=True)
        assert topic is not None
        return await _recall(topic, backend)
    if name == REMEMBER:
        decision = _argument(given, "decision", required=True)
        assert decision is not None
        return _remember(decision, _argument(given, "why", required=False))
    raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown prompt: {name[:200]}")
