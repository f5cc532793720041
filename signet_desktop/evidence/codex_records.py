"""Codex rollout records -> turns, in both layouts Codex has written.

**Envelope** (Codex from about 0.36, autumn 2025): every line `{timestamp, type, payload}`;
`session_meta` first, then `response_item`, `event_msg`, `turn_context`, ...
**Bare** (earlier Codex): a header line `{id, timestamp, instructions, git?}` without a type,
`{"record_type": "state"}` markers, and response items as they are (`{type: "message", role,
content}`, `function_call`, `reasoning`, ...) with no envelope and no timestamps.

The conversation is the `message` response items. Codex also writes, as user messages, the
instructions it injects (`# AGENTS.md instructions for …`, `<user_instructions>`), its
`<environment_context>` and other tagged blocks, and `developer` messages: they are kept out.
`event_msg` `user_message` / `agent_message` repeat a message for the UI; one that has no
response item with the same text (some rollouts keep only the event) is a turn.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from signet_desktop.domain.sessions import Turn
from signet_desktop.evidence.turn_reading import (
    IndexedTurn,
    TurnRead,
    str_or_none,
    text_of,
    turn_id,
)

RESPONSE_ITEM_TYPES = frozenset(
    {
        "message",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "reasoning",
        "web_search_call",
    }
)
_TEXT_KINDS = ("input_text", "output_text", "text")
# Leading text of a user message Codex wrote itself -> why it is not conversation.
_BOILERPLATE = {
    "# AGENTS.md instructions for": "instructions",
    "<user_instructions>": "instructions",
    "<permissions instructions>": "instructions",
    "<skill>": "instructions",
    "<environment_context>": "environment-context",
    "<user_shell_command>": "shell",
    "<turn_aborted>": "interrupted",
}
_EVENT_ROLES = {"user_message": "user", "agent_message": "assistant"}


def item(record: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A record as (kind, payload) in either layout: `session_meta`, `response_item`,
    `event_msg`, `turn_context`, `state`, `header`, or `other`."""
    payload = record.get("payload")
    if isinstance(record.get("type"), str) and isinstance(payload, dict):
        return str(record["type"]), payload
    if "record_type" in record:
        return "state", record
    if record.get("type") in RESPONSE_ITEM_TYPES:
        return "response_item", record
    if "type" not in record and isinstance(record.get("id"), str) and "timestamp" in record:
        return "header", record
    return "other", record


def layout(records: Sequence[dict[str, Any]]) -> str:
    """`envelope`, `bare` or `unknown`: which layout the rollout was written in."""
    kinds = Counter(item(record)[0] for record in records)
    if kinds["session_meta"] or kinds["event_msg"] or kinds["turn_context"]:
        return "envelope"
    if kinds["header"] or kinds["state"] or kinds["response_item"]:
        return "bare"
    return "unknown"


def session_meta(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The rollout's own description: the first `session_meta` payload, else the bare header."""
    found: dict[str, Any] = {}
    for record in records:
        kind, payload = item(record)
        if kind == "session_meta":
            return payload
        if kind == "header" and not found:
            found = payload
    return found


def read_turns(records: Sequence[dict[str, Any]]) -> TurnRead:
    """The turns of a rollout and the message records kept out, by reason."""
    kept: Counter[str] = Counter()
    found: list[IndexedTurn] = []
    said: Counter[tuple[str, str]] = Counter()  # (role, text) of the message response items
    for index, record in enumerate(records):
        kind, payload = item(record)
        if kind != "response_item" or payload.get("type") != "message":
            continue
        role = str(payload.get("role"))
        text = text_of(payload.get("content"), _TEXT_KINDS)
        if not text:
            continue
        reason = _kept_out_reason(role, text)
        if reason is not None:
            kept[reason] += 1
            continue
        said[(role, text)] += 1
        found.append(_turn(index, role, text, record))
    for index, record in enumerate(records):
        kind, payload = item(record)
        event_role = _EVENT_ROLES.get(str(payload.get("type"))) if kind == "event_msg" else None
        text = str(payload.get("message") or "").strip() if event_role else ""
        if event_role is None or not text:
            continue
        role = event_role
        reason = _kept_out_reason(role, text)
        if said[(role, text)] > 0:
            said[(role, text)] -= 1
            kept["event-copy"] += 1
        elif reason is not None:
            kept[reason] += 1
        else:
            found.append(_turn(index, role, text, record))
    found.sort(key=lambda t: t.index)
    return TurnRead(found, kept)


def _kept_out_reason(role: str, text: str) -> str | None:
    if role in ("developer", "system"):
        return "developer"
    if role not in ("user", "assistant"):
        return "other-role"
    if role == "user":
        return next((why for lead, why in _BOILERPLATE.items() if text.startswith(lead)), None)
    return None


def _turn(index: int, role: str, text: str, record: dict[str, Any]) -> IndexedTurn:
    return IndexedTurn(
        index, Turn(turn_id(index, role, text), role, text, str_or_none(record.get("timestamp")))
    )
