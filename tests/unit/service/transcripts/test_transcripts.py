"""Retained transcripts: canonical JSONL first, then the row; crashes between them; scope."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from signet_desktop.domain.errors import Forbidden, NotFound, SignetError
from signet_desktop.domain.sessions import Turn
from signet_desktop.evidence.canonical import CanonicalFile
from signet_desktop.service.transcripts.service import TranscriptService, render_content
from signet_desktop.storage.database import Database, open_database

CLAUDE_LINES = [
    {"type": "queue-operation", "operation": "enqueue"},
    {
        "type": "user",
        "uuid": "u1",
        "parentUuid": None,
        "sessionId": "s1",
        "timestamp": "2026-11-30T10:00:00Z",
        "message": {"role": "user", "content": "Which database does billing use?"},
    },
    {
        "type": "assistant",
        "uuid": "a1",
        "parentUuid": "u1",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "look it up"},
                {"type": "tool_use", "id": "t1", "name": "Read", "input": {"path": "db.md"}},
            ],
        },
    },
    {
        "type": "user",
        "uuid": "u2",
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "pg16"}],
        },
    },
    {
        "type": "assistant",
        "uuid": "a2",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "Postgres 16."}]},
    },
    {
        "type": "user",
        "uuid": "side",
        "isSidechain": True,
        "message": {"role": "user", "content": "x"},
    },
    {"type": "summary", "summary": "billing db", "leafUuid": "a2"},
]


def turns(*texts: str) -> list[Turn]:
    roles = ("user", "assistant")
    return [Turn(f"t{i}", roles[i % 2], text) for i, text in enumerate(texts)]


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(tmp_path / "ws" / "memory" / "memories.db")
    yield database
    database.close()


@pytest.fixture
def service(db: Database, tmp_path: Path) -> TranscriptService:
    return TranscriptService(db, tmp_path / "ws", allowed_roots=[tmp_path / "home"])


def canonical_lines(tmp_path: Path, harness: str = "claude-code") -> list[dict[str, object]]:
    path = tmp_path / "ws" / "memory" / harness / "transcripts" / "transcript.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_claude_transcript(tmp_path: Path, lines: list[dict[str, object]]) -> Path:
    path = tmp_path / "home" / ".claude" / "projects" / "-work-app" / "s1.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_claude_code_transcript_keeps_conversation_text_only(
    service: TranscriptService, tmp_path: Path
) -> None:
    path = write_claude_transcript(tmp_path, CLAUDE_LINES)
    outcome = service.capture_file("default", "s1", "claude-code", str(path), complete=True)
    assert (outcome.turns, outcome.appended, outcome.completed) == (2, 2, True)
    row = service.get("default", "s1")
    assert row.content == "User: Which database does billing use?\n\nAssistant: Postgres 16."
    assert row.status == "completed" and row.turn_count == 2 and row.harness == "claude-code"
    lines = canonical_lines(tmp_path)
    assert [(line["role"], line["turnId"], line["ordinal"]) for line in lines] == [
        ("user", "u1", 0),
        ("assistant", "a2", 1),
    ]
    assert [t.text for t in service.turns("default", "s1")] == [
        "Which database does billing use?",
        "Postgres 16.",
    ]


def test_a_retried_capture_appends_nothing_twice_and_a_grown_one_only_the_new_turns(
    service: TranscriptService, tmp_path: Path
) -> None:
    service.capture("default", "s1", "claude-code", turns("a", "b"))
    again = service.capture("default", "s1", "claude-code", turns("a", "b"))
    assert again.appended == 0
    grown = service.capture("default", "s1", "claude-code", turns("a", "b", "c"), complete=True)
    assert (grown.turns, grown.appended) == (3, 1)
    assert [line["text"] for line in canonical_lines(tmp_path)] == ["a", "b", "c"]
    assert service.get("default", "s1").content == render_content(turns("a", "b", "c"))


def test_a_torn_last_line_is_cut_and_the_turn_written_again(
    service: TranscriptService, db: Database, tmp_path: Path
) -> None:
    """kill -9 inside the append: half a line on disk, no row. The retry repairs both."""
    service.capture("default", "s1", "claude-code", turns("a"))
    canonical = CanonicalFile(tmp_path / "ws", "claude-code")
    with canonical.path.open("ab") as handle:
        handle.write(b'{"v":1,"agentId":"default","sessionKey":"s1","ordin')
    again = service.capture("default", "s1", "claude-code", turns("a", "b"))
    assert again.appended == 1
    assert [line["text"] for line in canonical_lines(tmp_path)] == ["a", "b"]
    assert service.get("default", "s1").turn_count == 2


def test_lines_appended_before_a_crash_are_adopted_not_duplicated(
    service: TranscriptService, db: Database, tmp_path: Path
) -> None:
    """kill -9 after the append, before the commit: the lines exist, the row does not know."""
    service.capture("default", "s1", "claude-code", turns("a"))
    canonical = CanonicalFile(tmp_path / "ws", "claude-code")
    from signet_desktop.evidence.canonical import CanonicalTurn

    canonical.append([CanonicalTurn("default", "s1", "claude-code", None, 1, turns("a", "b")[1])])
    restarted = TranscriptService(db, tmp_path / "ws")
    report = restarted.recover()
    assert report.adopted_turns == 1 and report.completed_sessions == 1
    row = restarted.get("default", "s1")
    assert row.turn_count == 2 and row.content == render_content(turns("a", "b"))
    restarted.capture("default", "s1", "claude-code", turns("a", "b", "c"))
    assert [line["text"] for line in canonical_lines(tmp_path)] == ["a", "b", "c"]


def test_recovery_completes_sessions_a_crash_left_open(
    service: TranscriptService, db: Database, tmp_path: Path
) -> None:
    service.capture("default", "open-one", "codex", turns("a"))
    assert service.get("default", "open-one").status == "open"
    report = TranscriptService(db, tmp_path / "ws").recover()
    assert report.completed_sessions == 1
    assert service.get("default", "open-one").status == "completed"


def test_transcripts_are_agent_scoped(service: TranscriptService) -> None:
    service.capture("alice", "s1", "claude-code", turns("alice's secret plan"), complete=True)
    with pytest.raises(NotFound):
        service.get("bob", "s1")
    assert service.sessions("bob").total == 0
    assert service.search("bob", "secret plan") == []
    assert [hit.session_key for hit in service.search("alice", "secret plan")] == ["s1"]
    # The same session key in another agent is another session.
    service.capture("bob", "s1", "claude-code", turns("bob's notes"))
    assert service.get("alice", "s1").content.endswith("alice's secret plan")


@pytest.mark.parametrize(
    ("make", "code"),
    [
        (lambda tmp: "relative/path.jsonl", "transcript_path_invalid"),
        (lambda tmp: str(tmp / "elsewhere" / "t.jsonl"), "path_not_allowed"),
        (lambda tmp: str(tmp / "home" / "missing.jsonl"), "transcript_not_found"),
    ],
)
def test_transcript_paths_outside_the_roots_are_refused(
    service: TranscriptService, tmp_path: Path, make: object, code: str
) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "t.jsonl").write_text("{}\n")
    (tmp_path / "home").mkdir(exist_ok=True)
    with pytest.raises(SignetError) as raised:
        service.capture_file("default", "s1", "claude-code", make(tmp_path))  # type: ignore[operator]
    assert raised.value.code == code
    with pytest.raises(NotFound):
        service.get("default", "s1")  # nothing written


def test_a_symlink_out_of_the_roots_is_refused(service: TranscriptService, tmp_path: Path) -> None:
    outside = tmp_path / "secret.jsonl"
    outside.write_text(json.dumps(CLAUDE_LINES[1]) + "\n")
    link = tmp_path / "home" / "innocent.jsonl"
    link.parent.mkdir(parents=True)
    link.symlink_to(outside)
    with pytest.raises(Forbidden) as raised:
        service.capture_file("default", "s1", "claude-code", str(link))
    assert raised.value.code == "path_not_allowed"


def test_partial_and_garbage_lines_of_a_live_transcript_are_skipped(
    service: TranscriptService, tmp_path: Path
) -> None:
    path = write_claude_transcript(tmp_path, CLAUDE_LINES)
    with path.open("a") as handle:
        handle.write("not json\n")
        handle.write('{"type": "user", "message": {"role": "user", "content": "half')
    outcome = service.capture_file("default", "s1", "claude-code", str(path))
    assert outcome.turns == 2 and outcome.skipped_lines == 2


def test_a_codex_rollout_leaves_out_boilerplate_and_tool_calls(
    service: TranscriptService, tmp_path: Path
) -> None:
    path = tmp_path / "home" / ".codex" / "sessions" / "2026" / "11" / "30" / "rollout-x.jsonl"
    path.parent.mkdir(parents=True)
    records = [
        {"type": "session_meta", "payload": {"id": "c1", "cwd": "/work/app"}},
        {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "<environment_context>cwd</environment_context>"}
                ],
            },
        },
        {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "rename the ledger service"}],
            },
        },
        {"type": "response_item", "payload": {"type": "function_call", "name": "shell"}},
        {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Renamed to ledger."}],
            },
        },
        {"type": "event_msg", "payload": {"type": "token_count"}},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    outcome = service.capture_file("default", "c1", "codex", str(path), complete=True)
    assert outcome.turns == 2
    assert service.get("default", "c1").content == (
        "User: rename the ledger service\n\nAssistant: Renamed to ledger."
    )


def test_a_large_transcript_is_read_whole(service: TranscriptService, tmp_path: Path) -> None:
    """~50 MB of mostly tool output: the text turns are kept, the rest skipped, no blow-up."""
    big = {"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t", "content": "x" * 1_000_000}]}}  # fmt: skip
    lines = [CLAUDE_LINES[1], *([big] * 50), CLAUDE_LINES[4]]
    path = write_claude_transcript(tmp_path, lines)
    assert path.stat().st_size > 50_000_000
    outcome = service.capture_file("default", "s1", "claude-code", str(path))
    assert outcome.turns == 2


def test_the_ttl_worker_completes_only_sessions_idle_past_the_ttl(
    service: TranscriptService,
) -> None:
    from signet_desktop.service.transcripts.worker import TranscriptTtlWorker

    service.capture("default", "idle", "codex", turns("a"))
    assert not TranscriptTtlWorker(service, idle_ttl_s=3600).run_once()
    assert service.get("default", "idle").status == "open"
    assert TranscriptTtlWorker(service, idle_ttl_s=-1).run_once()
    assert service.get("default", "idle").status == "completed"
