"""Which harness records are turns and which are kept out (and why): one rule per test."""

from __future__ import annotations

from typing import Any

from signet_desktop.evidence import claude_code_records, codex_records
from signet_desktop.evidence.harness_history import claude_session_id


def user(text: str) -> dict[str, Any]:
    return {"type": "user", "uuid": f"u-{text[:8]}", "message": {"role": "user", "content": text}}


def assistant(text: str, **fields: Any) -> dict[str, Any]:
    content = [{"type": "text", "text": text}]
    return {"type": "assistant", "uuid": f"a-{text[:8]}", **fields, "message": {"content": content}}


def test_claude_code_harness_records_are_kept_out_by_reason() -> None:
    records = [
        user("Fix the parser"),
        {**user("Base directory for this skill: /x"), "isMeta": True},
        {**user("This session is being continued from a previous conversation"),
         "isCompactSummary": True},
        user("<local-command-stdout>Compacted</local-command-stdout>"),
        user("<bash-input>ls</bash-input>"),
        user("<task-notification>\n<task-id>b1</task-id>"),
        user("[Request interrupted by user for tool use]"),
        {**assistant("side work"), "isSidechain": True},
        assistant("Fixed."),
    ]  # fmt: skip
    read = claude_code_records.read_turns(records)
    assert [t.turn.text for t in read.turns] == ["Fix the parser", "Fixed."]
    assert dict(read.kept_out) == {
        "meta": 1, "compact-summary": 1, "command-output": 1, "shell": 1,
        "notification": 1, "interrupted": 1, "sidechain": 1,
    }  # fmt: skip
    assert read.messages == len(records)


def test_a_slash_command_is_a_turn_as_typed() -> None:
    text = (
        "<command-message>review</command-message>\n<command-name>/review</command-name>\n"
        "<command-args>the parser, please</command-args>"
    )
    (found,) = claude_code_records.read_turns([user(text)]).turns
    assert found.turn.text == "/review the parser, please"
    assert claude_code_records.command_text("<command-name>compact</command-name>") == "/compact"


def test_a_subagent_file_reads_its_sidechain_records_as_turns() -> None:
    records = [
        {**user("Find the bug"), "isSidechain": True},
        assistant("Found it", isSidechain=True),
    ]
    assert claude_code_records.read_turns(records).turns == []
    read = claude_code_records.read_turns(records, subagent=True)
    assert [t.turn.role for t in read.turns] == ["user", "assistant"]


def test_claude_code_session_identity_comes_from_the_records() -> None:
    sid = "9eda1058-9706-484a-b992-d03f9cfa2546"
    assert claude_session_id(sid, [sid, sid]) == sid
    assert claude_session_id("session-9eda1058", [sid, sid]) == sid  # renamed file
    # a resumed session's file repeats the older session's lines under that older id
    assert claude_session_id("new-id", ["old-id", "new-id"]) == "new-id"
    assert claude_session_id("a-name", []) == "a-name"


def message(role: str, text: str) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def envelope(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2026-11-03T09:00:00Z", "type": kind, "payload": payload}


def test_the_bare_codex_layout_is_read() -> None:
    records = [
        {"id": "c27a914d", "timestamp": "2025-08-20T13:20:47Z", "instructions": None},
        {"record_type": "state"},
        message("user", "<user_instructions>\n\nbe brief\n</user_instructions>"),
        message("user", "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"),
        message("user", "index the rollouts"),
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "x"},
        {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"},
        message("assistant", "Indexed."),
    ]
    assert codex_records.layout(records) == "bare"
    assert codex_records.session_meta(records)["id"] == "c27a914d"
    read = codex_records.read_turns(records)
    assert [t.turn.text for t in read.turns] == ["index the rollouts", "Indexed."]
    assert [t.index for t in read.turns] == [4, 7]
    assert dict(read.kept_out) == {"instructions": 1, "environment-context": 1}


def test_codex_events_are_copies_unless_no_response_item_says_it() -> None:
    records = [
        envelope("session_meta", {"id": "s1"}),
        envelope("response_item", message("developer", "<permissions instructions>")),
        envelope("response_item", message("user", "# AGENTS.md instructions for /w\n\n...")),
        envelope("response_item", message("user", "first question")),
        envelope("event_msg", {"type": "user_message", "message": "first question"}),
        envelope("event_msg", {"type": "user_message", "message": "asked only as an event"}),
        envelope("event_msg", {"type": "agent_message", "message": "An answer."}),
        envelope("response_item", message("assistant", "An answer.")),
    ]
    assert codex_records.layout(records) == "envelope"
    read = codex_records.read_turns(records)
    assert [(t.index, t.turn.text) for t in read.turns] == [
        (3, "first question"), (5, "asked only as an event"), (7, "An answer."),
    ]  # fmt: skip
    assert dict(read.kept_out) == {"developer": 1, "instructions": 1, "event-copy": 2}
    assert read.messages == 7
