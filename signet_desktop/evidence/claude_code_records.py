"""Claude Code transcript records -> turns, with the harness's own records kept out.

A user or assistant record with text is a turn unless Claude Code wrote it for itself:
`isMeta` records (skill banners, caveats, hook context in `<system-reminder>`), the summary a
compaction leaves (`isCompactSummary`), a slash command's output (`<local-command-stdout>`),
a `!` shell command and its output (`<bash-input>`, `<bash-stdout>`), background task notices
(`<task-notification>`) and the "[Request interrupted by user]" marker. A slash command the
person typed (`<command-name>/review</command-name><command-args>the parser</command-args>`)
is their turn, as `/review the parser`. Sidechain records in a session file belong to a
subagent and are counted apart; a subagent's own file is read with `subagent=True`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from signet_desktop.domain.sessions import Turn
from signet_desktop.evidence.turn_reading import (
    IndexedTurn,
    TurnRead,
    str_or_none,
    text_of,
    turn_id,
)

# Leading tag of a user record's text -> why it is not conversation.
_HARNESS_TAGS = {
    "<local-command-stdout>": "command-output",
    "<local-command-stderr>": "command-output",
    "<local-command-caveat>": "meta",
    "<bash-input>": "shell",
    "<bash-stdout>": "shell",
    "<bash-stderr>": "shell",
    "<task-notification>": "notification",
    "<system-reminder>": "meta",
}
_INTERRUPTED = "[Request interrupted by user"
_COMMAND_TAGS = ("<command-name>", "<command-message>", "<command-args>")
_COMMAND_NAME = re.compile(r"<command-name>(.*?)</command-name>", re.S)
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)


def read_turns(records: Iterable[dict[str, Any]], *, subagent: bool = False) -> TurnRead:
    """The turns of a Claude Code transcript and the text records kept out, by reason."""
    turns: list[IndexedTurn] = []
    kept: Counter[str] = Counter()
    for index, record in enumerate(records):
        message = record.get("message")
        if record.get("type") not in ("user", "assistant") or not isinstance(message, dict):
            continue
        role = message.get("role") or record.get("type")
        text = text_of(message.get("content"), ("text",))
        if role not in ("user", "assistant") or not text:
            continue  # tool calls, tool results, thinking: not messages with text
        reason = kept_out_reason(record, role, text, subagent=subagent)
        if reason is not None:
            kept[reason] += 1
            continue
        if role == "user" and text.startswith(_COMMAND_TAGS):
            text = command_text(text)
        uuid = record.get("uuid")
        turns.append(
            IndexedTurn(
                index,
                Turn(
                    turn_id=str(uuid) if uuid else turn_id(index, role, text),
                    role=role,
                    text=text,
                    timestamp=str_or_none(record.get("timestamp")),
                ),
            )
        )
    return TurnRead(turns, kept)


def kept_out_reason(
    record: dict[str, Any], role: str, text: str, *, subagent: bool = False
) -> str | None:
    """Why a text record is not a turn (None: it is one)."""
    if record.get("isSidechain") and not subagent:
        return "sidechain"
    if role != "user":
        return None
    if record.get("isMeta"):
        return "meta"
    if record.get("isCompactSummary"):
        return "compact-summary"
    if text.startswith(_INTERRUPTED):
        return "interrupted"
    return next((why for tag, why in _HARNESS_TAGS.items() if text.startswith(tag)), None)


def command_text(text: str) -> str:
    """`/name args` from Claude Code's slash-command wrapper (the text as is without one)."""
    name = _COMMAND_NAME.search(text)
    if name is None:
        return text
    command = name.group(1).strip()
    if command and not command.startswith("/"):
        command = "/" + command
    args = _COMMAND_ARGS.search(text)
    return f"{command} {args.group(1).strip() if args else ''}".strip()
