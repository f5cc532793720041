"""Real Claude Code and Codex files (tests/fixtures/real) read to exact turns, nothing dropped.

Every user/assistant message with text in each file is either a turn or kept out with a
reason: counted from the raw lines apart from the readers, and compared.
"""

from __future__ import annotations

import json

import pytest
from support.real_files import (
    CLAUDE_ROOT,
    CODEX_ROOT,
    EXPECTED,
    REAL,
    S258,
    Expected,
    text_messages,
)

from signet_desktop.evidence import harness_history as history
from signet_desktop.evidence.transcript_formats import parse_transcript


def read(name: str) -> history.HistorySession:
    harness, relative = name.split("/", 1)
    if harness == "codex":
        return history.read_codex_session(REAL / name, relative)
    return history.read_claude_code_session(REAL / name, relative)


def test_every_fixture_file_has_its_expectation() -> None:
    found = {p.relative_to(REAL).as_posix() for p in REAL.rglob("*.jsonl")}
    assert found == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_real_file_reads_to_its_exact_turns(name: str) -> None:
    expected: Expected = EXPECTED[name]
    session = read(name)
    roles = [t.turn.role for t in session.turns]
    assert (roles.count("user"), roles.count("assistant")) == (
        expected.users,
        expected.assistants,
    )
    assert dict(session.kept_out) == expected.kept
    assert session.session_id == expected.session
    assert session.parent_session_id == expected.parent
    assert session.skip == expected.skip
    assert session.skipped_lines == 0  # whole lines, even in the trimmed files


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_no_message_with_text_is_dropped_silently(name: str) -> None:
    session = read(name)
    assert len(session.turns) + sum(session.kept_out.values()) == text_messages(REAL / name)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_turn_points_at_the_line_it_came_from(name: str) -> None:
    raw = (REAL / name).read_bytes()
    for found in read(name).turns:
        line = json.loads(raw[found.offset :].split(b"\n", 1)[0])
        if name.startswith("claude-code/"):
            assert line["uuid"] == found.turn.turn_id
        else:
            body = line.get("payload", line)
            text = body.get("message") or "".join(b["text"] for b in body["content"])
            assert text.strip() == found.turn.text


def test_live_capture_reads_the_same_turns_as_an_import() -> None:
    for name in EXPECTED:
        harness = "codex" if name.startswith("codex/") else "claude-code"
        if "/subagents/" in name or "/agent-" in name:
            continue  # live capture reads the session file a hook names, never a subagent's
        parsed = parse_transcript(harness, REAL / name)
        assert parsed.turns == [t.turn for t in read(name).turns], name


def test_harness_records_never_become_turns() -> None:
    texts = [t.turn.text for name in EXPECTED for t in read(name).turns]
    for lead in ("# AGENTS.md instructions for", "<environment_context>", "<user_instructions>"):
        assert not [text for text in texts if text.startswith(lead)], lead
    for lead in ("<local-command-", "<command-name>", "Caveat:", "[Request interrupted"):
        assert not [text for text in texts if text.startswith(lead)], lead


def test_a_slash_command_is_the_users_turn_as_they_typed_it() -> None:
    users = [t.turn.text for t in read("claude-code/spotter-2.1.38/tool_heavy.jsonl").turns]
    assert "/mcp" in users


def test_a_codex_message_kept_only_as_an_event_is_a_turn() -> None:
    name = next(n for n in EXPECTED if "codemie-code-0.128.0" in n)
    users = [t.turn.text for t in read(name).turns if t.turn.role == "user"]
    assert users[1].startswith("there is a need for nikita to draft demo scenario")


def test_both_codex_layouts_are_recognised() -> None:
    layouts = {
        name.split("/")[1]: read(name).meta["layout"] for name in EXPECTED if "codex/" in name
    }
    assert layouts == {
        "codemie-code-0.125.0": "envelope",
        "codemie-code-0.128.0": "envelope",
        "local-0.171.0": "envelope",
        "local-0.29.0": "bare",
    }


def test_the_roots_list_every_file_and_subagents_after_their_session() -> None:
    claude = list(history.claude_code_files(CLAUDE_ROOT))
    assert len(claude) == 13 and len(list(history.codex_files(CODEX_ROOT))) == 4
    session = claude.index(f"spotter-2.1.39/{S258}.jsonl")
    assert claude[session + 1 : session + 3] == [
        f"spotter-2.1.39/{S258}/subagents/agent-a881341.jsonl",
        f"spotter-2.1.39/{S258}/subagents/agent-acompact-fffbd0.jsonl",
    ]
