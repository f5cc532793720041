"""Harness history on disk: roots, which files are sessions, one session per file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.history_files import (
    claude_slug,
    codex_rollout_lines,
    write_claude_project,
    write_codex_sessions,
    write_jsonl,
)

from signet_desktop.evidence import harness_history as history
from signet_desktop.evidence.transcript_formats import parse_transcript
from signet_desktop.service.imports.harness import bounded_meta
from signet_desktop.service.imports.staging import Staged


def test_roots_follow_the_harness_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    assert history.claude_code_root() == Path.home() / ".claude" / "projects"
    assert history.codex_root() == Path.home() / ".codex" / "sessions"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "c"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "x"))
    assert history.claude_code_root() == tmp_path / "c" / "projects"
    assert history.codex_root() == tmp_path / "x" / "sessions"


def test_subagent_files_follow_their_session_and_symlinks_are_left_out(tmp_path: Path) -> None:
    ids = write_claude_project(tmp_path, sessions=2, exchanges=1)
    slug = claude_slug("/home/dev/proj")
    write_jsonl(tmp_path / slug / ids[0] / "subagents" / "agent-1.jsonl", [{"type": "user"}])
    (tmp_path / slug / "link.jsonl").symlink_to(tmp_path / slug / f"{ids[0]}.jsonl")
    first, second = sorted(ids)
    assert list(history.claude_code_files(tmp_path)) == [
        f"{slug}/{first}.jsonl",
        *([f"{slug}/{first}/subagents/agent-1.jsonl"] if first == ids[0] else []),
        f"{slug}/{second}.jsonl",
        *([f"{slug}/{second}/subagents/agent-1.jsonl"] if second == ids[0] else []),
    ]


def test_a_claude_code_session_matches_live_capture_turns(tmp_path: Path) -> None:
    (session_id,) = write_claude_project(tmp_path, sessions=1, exchanges=3, torn_tail_on=0)
    relative = f"{claude_slug('/home/dev/proj')}/{session_id}.jsonl"
    session = history.read_claude_code_session(tmp_path / relative, relative)
    live = parse_transcript("claude-code", tmp_path / relative)
    assert [t.turn for t in session.turns] == live.turns  # same turns and turn ids
    assert session.session_id == session_id and session.project == "/home/dev/proj"
    assert session.skipped_lines == 1 == live.skipped_lines
    size = (tmp_path / relative).stat().st_size
    assert session.complete_end < size  # the torn tail lies past it
    assert session.meta["sidechainLines"] == 1 and session.meta["gitBranch"] == "main"


def test_a_codex_rollout_names_its_session_by_session_meta(tmp_path: Path) -> None:
    (session_id,) = write_codex_sessions(tmp_path, sessions=1, exchanges=2)
    (relative,) = history.codex_files(tmp_path)
    session = history.read_codex_session(tmp_path / relative, relative)
    assert session.session_id == session_id
    assert [t.turn.text for t in session.turns] == [
        "Codex task 0", "Done with task 0.", "Codex task 1", "Done with task 1."
    ]  # fmt: skip
    assert session.meta["models"] == ["gpt-5-codex"] and session.meta["cliVersion"] == "0.58.0"
    raw = (tmp_path / relative).read_bytes()
    for turn in session.turns:
        line = json.loads(raw[turn.offset :].split(b"\n", 1)[0])
        assert line["payload"]["content"][0]["text"] == turn.turn.text


def test_a_codex_rollout_without_session_meta_uses_the_file_name(tmp_path: Path) -> None:
    uuid = "0199a0b1-2c3d-4e5f-8a9b-0c1d2e3f4a5b"
    lines = codex_rollout_lines(uuid, 1)[1:]  # no session_meta line
    relative = f"2026/11/03/rollout-2026-11-03T10-00-00-{uuid}.jsonl"
    write_jsonl(tmp_path / relative, lines)
    assert history.read_codex_session(tmp_path / relative, relative).session_id == uuid


def test_source_meta_stays_within_16_kb(tmp_path: Path) -> None:
    session = history.HistorySession(
        session_id="s",
        project=None,
        turns=[],
        started_at=None,
        meta={f"k{i}": "x" * 3000 for i in range(20)},
    )
    text = bounded_meta(session, Staged("memory/imports/a", "f" * 64, 10), "a.jsonl")
    assert len(text.encode()) <= 16_384
    facts = json.loads(text)
    assert facts["truncated"] is True and facts["stagedSha256"] == "f" * 64
