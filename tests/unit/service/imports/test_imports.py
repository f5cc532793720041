"""Harness history imports: sources, runs, records, canonical lines, removal, bad input."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.history_files import (
    claude_slug,
    write_claude_project,
    write_codex_sessions,
)

from signet_desktop.domain.errors import Conflict, InvalidInput, NotFound, SignetError
from signet_desktop.domain.events import Event, ImportFinished, ImportProgress
from signet_desktop.domain.sessions import Turn
from signet_desktop.service.imports.faults import FaultPoints
from signet_desktop.service.imports.harness import claude_code_importer, codex_importer
from signet_desktop.service.imports.service import ImportService
from signet_desktop.service.transcripts.service import TranscriptService
from signet_desktop.storage import hook_sessions
from signet_desktop.storage.database import Database, open_database


class Events:
    def __init__(self) -> None:
        self.seen: list[Event] = []

    def publish(self, event: Event) -> None:
        self.seen.append(event)


@dataclass
class Env:
    root: Path  # the workspace
    home: Path  # where harness history lives (an allowed root)
    db: Database
    transcripts: TranscriptService
    imports: ImportService
    events: Events

    def canonical(self, harness: str = "claude-code") -> list[dict[str, object]]:
        path = self.root / "memory" / harness / "transcripts" / "transcript.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_bytes().splitlines()]

    def count(self, sql: str) -> int:
        return int(self.db.reader().execute(sql).fetchone()[0])


def make_env(tmp_path: Path, faults: FaultPoints | None = None) -> Env:
    root = tmp_path / "ws"
    home = tmp_path / "home"
    (root / "memory").mkdir(parents=True, exist_ok=True)
    home.mkdir(exist_ok=True)
    db = open_database(root / "memory" / "memories.db")
    events = Events()
    transcripts = TranscriptService(db, root, events=events)
    imports = ImportService(
        db,
        root,
        transcripts,
        importers=[claude_code_importer(), codex_importer()],
        allowed_roots=[home],
        events=events,
        faults=faults or FaultPoints(),
    )
    return Env(root, home, db, transcripts, imports, events)


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    made = make_env(tmp_path)
    yield made
    made.imports.close()
    made.db.close()


def test_a_claude_code_import_brings_each_session_once(env: Env) -> None:
    projects = env.home / ".claude" / "projects"
    ids = write_claude_project(projects, sessions=3, exchanges=4)
    ticket = env.imports.start("default", "claude-code", str(projects), wait=True)
    assert ticket.created
    run = env.imports.run("default", ticket.run_id)
    assert run.status == "completed"
    assert run.counts.files_seen == 3 and run.counts.records_imported == 3
    assert run.counts.turns_imported == 24  # 4 exchanges x 2 turns, no tools/thinking/sidechain
    for session_id in ids:
        row = env.transcripts.get("default", session_id)
        assert row.status == "imported" and row.turn_count == 8 and row.completed_at
        assert row.source_id == ticket.source_id
        assert env.transcripts.turns("default", session_id)[0].text.startswith("Question 0")
    meta = (
        env.db.reader()
        .execute("SELECT source_meta_json, source_record_id FROM session_transcripts LIMIT 1")
        .fetchone()
    )
    facts = json.loads(meta[0])
    assert facts["cwd"] == "/home/dev/proj" and facts["models"] == ["claude-sonnet-4-5"]
    assert facts["stagedPath"].startswith(f"memory/imports/{ticket.source_id}/")
    assert (env.root / facts["stagedPath"]).is_file()
    assert meta[1] in ids
    lines = env.canonical()
    assert len(lines) == 24 and all(line["sourceId"] == ticket.source_id for line in lines)
    assert [e.kind for e in env.events.seen if isinstance(e, ImportFinished)] == ["import.finished"]
    assert any(isinstance(e, ImportProgress) for e in env.events.seen)


def test_the_staged_copy_is_byte_exact_and_each_turn_points_at_its_line(env: Env) -> None:
    projects = env.home / "projects"
    (session_id,) = write_claude_project(projects, sessions=1, exchanges=2)
    env.imports.start("default", "claude-code", str(projects), wait=True)
    original = (projects / claude_slug("/home/dev/proj") / f"{session_id}.jsonl").read_bytes()
    (staged,) = [p for p in (env.root / "memory" / "imports").rglob("*.jsonl")]
    assert staged.read_bytes() == original
    for line in env.canonical():
        offset = int(line["sourceOffset"])  # type: ignore[call-overload]
        raw = json.loads(original[offset:].split(b"\n", 1)[0])
        assert raw["uuid"] == line["turnId"]


def test_importing_twice_creates_nothing_new(env: Env) -> None:
    projects = env.home / "projects"
    write_claude_project(projects, sessions=2, exchanges=3)
    first = env.imports.start("default", "claude-code", str(projects), wait=True)
    second = env.imports.start("default", "claude-code", str(projects), wait=True)
    assert second.source_id == first.source_id and not second.created
    run = env.imports.run("default", second.run_id)
    assert run.counts.files_seen == 2 and run.counts.records_imported == 0
    assert run.counts.turns_imported == 0
    assert env.count("SELECT COUNT(*) FROM session_transcripts") == 2
    assert env.count("SELECT COUNT(*) FROM source_import_records") == 2
    assert len(env.canonical()) == 12


def test_a_grown_session_appends_only_its_new_turns(env: Env) -> None:
    projects = env.home / "projects"
    (session_id,) = write_claude_project(projects, sessions=1, exchanges=2)
    env.imports.start("default", "claude-code", str(projects), wait=True)
    write_claude_project(projects, sessions=1, exchanges=3)  # the session went on
    ticket = env.imports.start("default", "claude-code", str(projects), wait=True)
    assert env.imports.run("default", ticket.run_id).counts.turns_imported == 2
    ordinals = [line["ordinal"] for line in env.canonical()]
    assert ordinals == list(range(6))
    assert env.transcripts.get("default", session_id).turn_count == 6
    assert len(list((env.root / "memory" / "imports").rglob("*.jsonl"))) == 2  # both kept


def test_codex_rollouts_import_without_boilerplate(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    codex_home = env.home / "codex-home"
    ids = write_codex_sessions(codex_home / "sessions", sessions=2, exchanges=3)
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    ticket = env.imports.start("default", "codex", None, wait=True)  # default root
    run = env.imports.run("default", ticket.run_id)
    assert run.counts.records_imported == 2 and run.counts.turns_imported == 12
    turns = env.transcripts.turns("default", ids[0])
    assert [t.text for t in turns[:2]] == ["Codex task 0", "Done with task 0."]
    assert env.transcripts.get("default", ids[0]).project == "/home/dev/cx"


def test_truncated_lines_are_counted_and_the_rest_imported(env: Env) -> None:
    projects = env.home / "projects"
    ids = write_claude_project(projects, sessions=2, exchanges=2, torn_tail_on=1)
    rel = f"{claude_slug('/home/dev/proj')}/{ids[0]}.jsonl"
    with (projects / rel).open("a") as handle:
        handle.write("not json at all\n")
    os.utime(projects / rel, (time.time() - 3600, time.time() - 3600))  # a finished session
    ticket = env.imports.start("default", "claude-code", str(projects), wait=True)
    run = env.imports.run("default", ticket.run_id)
    assert run.status == "completed" and run.counts.records_imported == 2
    finished = [e for e in env.events.seen if isinstance(e, ImportFinished)][-1]
    assert finished.lines_skipped == 2
    errors = (
        env.db.reader()
        .execute("SELECT last_error FROM source_import_files WHERE last_error IS NOT NULL")
        .fetchall()
    )
    assert sorted(r[0] for r in errors) == ["1 unreadable lines skipped"] * 2
    assert env.imports.source("default", ticket.source_id).totals.lines_skipped == 2


def test_a_file_changing_while_imported_is_restaged_next_run(tmp_path: Path) -> None:
    projects = tmp_path / "home" / "projects"
    (session_id,) = write_claude_project(projects, sessions=1, exchanges=2)
    path = projects / claude_slug("/home/dev/proj") / f"{session_id}.jsonl"

    def grow(step: str) -> None:
        if step == "file.inventoried":
            with path.open("a") as handle:
                handle.write('{"type": "progress"}\n')

    env = make_env(tmp_path, FaultPoints(on_hit=grow))
    try:
        ticket = env.imports.start("default", "claude-code", str(projects), wait=True)
        run = env.imports.run("default", ticket.run_id)
        assert run.counts.records_imported == 0 and run.counts.files_changed == 1
        row = (
            env.db.reader().execute("SELECT status, last_error FROM source_import_files").fetchone()
        )
        assert row[0] == "pending" and "changed while importing" in row[1]
        assert not list((env.root / "memory" / "imports").rglob("*.jsonl"))  # no torn copy
    finally:
        env.imports.close()
        env.db.close()
    env = make_env(tmp_path)  # the next run, the file at rest
    try:
        ticket = env.imports.start("default", "claude-code", str(projects), wait=True)
        assert env.imports.run("default", ticket.run_id).counts.records_imported == 1
    finally:
        env.db.close()


def test_a_live_session_is_a_duplicate_or_skipped_never_a_second_session(env: Env) -> None:
    projects = env.home / "projects"
    ids = write_claude_project(projects, sessions=3, exchanges=2)
    env.transcripts.capture("default", ids[0], "claude-code", [Turn("x", "user", "hi")])
    with env.db.write() as conn:
        hook_sessions.touch_session(conn, "default", ids[1], "claude-code", None, None)
    ticket = env.imports.start("default", "claude-code", str(projects), wait=True)
    run = env.imports.run("default", ticket.run_id)
    assert (run.counts.records_duplicate, run.counts.records_skipped) == (1, 1)
    assert run.counts.records_imported == 1
    assert env.transcripts.get("default", ids[0]).source_id is None  # the live row stays
    with pytest.raises(NotFound):
        env.transcripts.get("default", ids[1])
    outcomes = dict(
        env.db.reader().execute("SELECT source_record_id, outcome FROM source_import_records")
    )
    assert outcomes == {ids[0]: "duplicate", ids[1]: "skipped", ids[2]: "imported"}
    with env.db.write() as conn:  # the live session ends without capturing a transcript
        hook_sessions.end_session(conn, "default", ids[1])
    again = env.imports.run(
        "default", env.imports.start("default", "claude-code", str(projects), wait=True).run_id
    )
    assert again.counts.files_changed == 1 and again.counts.records_imported == 1  # retried
    assert env.transcripts.get("default", ids[1]).source_id == ticket.source_id


def test_bad_requests_write_nothing(env: Env, tmp_path: Path) -> None:
    projects = env.home / "projects"
    write_claude_project(projects, sessions=1, exchanges=1)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    cases = [
        ("opencode", str(projects), "kind_invalid"),
        ("claude-code", str(outside), "path_not_allowed"),
        ("claude-code", str(env.home / "missing"), "path_not_found"),
        ("claude-code", "relative/path", "path_invalid"),
        ("claude-code", str(projects / "x\x00"), "path_invalid"),
        ("claude-code", str(next(projects.rglob("*.jsonl"))), "path_not_directory"),
    ]
    for kind, path, code in cases:
        with pytest.raises(SignetError) as caught:
            env.imports.start("default", kind, path, wait=True)
        assert caught.value.code == code, (kind, path)
    with pytest.raises(InvalidInput):
        env.imports.start("not valid!", "claude-code", str(projects), wait=True)
    assert env.count("SELECT COUNT(*) FROM sources") == 0
    assert env.count("SELECT COUNT(*) FROM source_import_runs") == 0


def test_a_second_run_while_one_runs_is_a_conflict(tmp_path: Path) -> None:
    projects = tmp_path / "home" / "projects"
    write_claude_project(projects, sessions=2, exchanges=1)
    holder: list[ImportService] = []
    refused: list[Conflict] = []

    def try_again(step: str) -> None:
        if step == "file.inventoried" and not refused:
            try:
                holder[0].start("default", "claude-code", str(projects))
            except Conflict as exc:
                refused.append(exc)

    env = make_env(tmp_path, FaultPoints(on_hit=try_again))
    holder.append(env.imports)
    try:
        env.imports.start("default", "claude-code", str(projects), wait=True)
        assert refused and refused[0].code == "import_running"
        assert env.count("SELECT COUNT(*) FROM source_import_runs") == 1
    finally:
        env.db.close()


def test_one_agent_cannot_see_or_remove_anothers_source(env: Env) -> None:
    projects = env.home / "projects"
    write_claude_project(projects, sessions=1, exchanges=1)
    ticket = env.imports.start("alice", "claude-code", str(projects), wait=True)
    assert env.imports.sources("bob") == []
    with pytest.raises(NotFound):
        env.imports.source("bob", ticket.source_id)
    with pytest.raises(NotFound):
        env.imports.remove("bob", ticket.source_id, dry_run=False)
    with pytest.raises(NotFound):
        env.imports.run("bob", ticket.run_id)
    assert len(env.imports.sources("alice")) == 1
    # bob importing the same root gets his own source and his own sessions
    bob = env.imports.start("bob", "claude-code", str(projects), wait=True)
    assert bob.source_id != ticket.source_id
    assert env.imports.run("bob", bob.run_id).counts.records_imported == 1


def test_removal_previews_then_purges_and_leaves_a_tombstone(env: Env) -> None:
    projects = env.home / "projects"
    ids = write_claude_project(projects, sessions=2, exchanges=2)
    ticket = env.imports.start("default", "claude-code", str(projects), wait=True)
    env.transcripts.capture("default", "live-1", "claude-code", [Turn("l", "user", "keep me")])
    with env.db.write() as conn:  # rows a Dreaming pass would have written
        conn.execute(
            "INSERT INTO dreaming_evidence_consumption (agent_id, source_kind, source_id, "
            "source_revision, consumed_at) VALUES ('default', 'transcript', :k, 'r1', 'now')",
            {"k": ids[0]},
        )
        conn.execute(
            "INSERT INTO dreaming_evidence_reviews (agent_id, source_kind, source_id, "
            "source_revision, disposition, reviewed_at) "
            "VALUES ('default', 'transcript', :k, 'r1', 'no_action', 'now')",
            {"k": ids[1]},
        )
        conn.execute(
            "INSERT INTO entities (id, name, canonical_name, source_kind, source_id, "
            "created_at, updated_at) VALUES ('e1', 'Parser', 'parser', 'transcript', :k, "
            "'now', 'now')",
            {"k": ids[0]},
        )
    preview = env.imports.remove("default", ticket.source_id, dry_run=True)
    expected = {
        "session_transcripts": 2,
        "source_import_records": 2,
        "source_import_files": 2,
        "source_import_runs": 1,
        "dreaming_evidence_consumption": 1,
        "dreaming_evidence_reviews": 1,
        "graph_rows_unsupported": 1,
        "staged_files": 2,
        "canonical_lines": 8,
        "transcript_turns": 8,
    }
    assert dict(preview.purged) == expected and preview.tombstone_id is None
    assert env.count("SELECT COUNT(*) FROM session_transcripts") == 3  # nothing written
    done = env.imports.remove("default", ticket.source_id, dry_run=False, reason="test")
    assert dict(done.purged) == expected and done.tombstone_id
    assert env.count("SELECT COUNT(*) FROM session_transcripts") == 1  # the live one
    assert env.count("SELECT COUNT(*) FROM dreaming_evidence_consumption") == 0
    assert env.count("SELECT COUNT(*) FROM source_import_records") == 0
    assert env.count("SELECT status = 'unsupported' FROM entities") == 1
    assert not (env.root / "memory" / "imports" / ticket.source_id).exists()
    assert [line["sessionKey"] for line in env.canonical()] == ["live-1"]
    assert env.transcripts.turns("default", "live-1")[0].text == "keep me"
    tomb = env.db.reader().execute("SELECT purged_json, reason FROM source_tombstones").fetchone()
    assert json.loads(tomb[0]) == expected and tomb[1] == "test"
    assert env.imports.sources("default") == []
    with pytest.raises(NotFound):
        env.imports.source("default", ticket.source_id)


def test_reimporting_a_removed_root_needs_reimport(env: Env) -> None:
    projects = env.home / "projects"
    write_claude_project(projects, sessions=2, exchanges=1)
    first = env.imports.start("default", "claude-code", str(projects), wait=True)
    env.imports.remove("default", first.source_id, dry_run=False)
    with pytest.raises(Conflict) as caught:
        env.imports.start("default", "claude-code", str(projects), wait=True)
    assert caught.value.code == "source_removed"
    assert env.count("SELECT COUNT(*) FROM source_import_runs") == 0
    again = env.imports.start("default", "claude-code", str(projects), reimport=True, wait=True)
    assert again.source_id != first.source_id and again.created
    assert env.imports.run("default", again.run_id).counts.records_imported == 2
    assert env.count("SELECT COUNT(*) FROM source_tombstones") == 1
    assert len(env.canonical()) == 4  # the first source's lines went with it


def test_a_bad_source_id_is_refused_before_lookup(env: Env) -> None:
    with pytest.raises(InvalidInput):
        env.imports.source("default", "../etc")
    with pytest.raises(NotFound):
        env.imports.source("default", "src_" + "0" * 32)


def test_recovery_marks_a_killed_run_interrupted_but_not_a_live_one(env: Env) -> None:
    projects = env.home / "projects"
    write_claude_project(projects, sessions=1, exchanges=1)
    ticket = env.imports.start("default", "claude-code", str(projects), wait=True)
    with env.db.write() as conn:  # as a kill -9 mid-run leaves it
        conn.execute(
            "UPDATE source_import_runs SET status = 'running', finished_at = NULL WHERE id = :id",
            {"id": ticket.run_id},
        )
    assert env.imports.recover() == 1
    assert env.imports.run("default", ticket.run_id).status == "interrupted"
    assert env.imports.recover() == 0


def test_a_refused_request_publishes_nothing(env: Env) -> None:
    with pytest.raises(InvalidInput):
        env.imports.start("default", "nope", None, wait=True)
    assert env.events.seen == []


def _turn_hits(env: Env, query: str) -> list[tuple[str, int]]:
    from signet_desktop.recall.transcript_channel import TurnScope, search_turns

    hits = search_turns(env.db.reader(), query, TurnScope("default"))
    return [(h.session_key, h.ordinal) for h in hits]


def test_imported_turns_are_recallable_when_the_import_finishes(env: Env) -> None:
    projects = env.home / ".claude" / "projects"
    ids = write_claude_project(projects, sessions=2, exchanges=2)
    env.imports.start("default", "claude-code", str(projects), wait=True)
    hits = _turn_hits(env, "parser")
    assert {key for key, _ in hits} == set(ids)
    assert {ordinal for _, ordinal in hits} == {1, 3}  # the assistant turns that say it
    assert env.count("SELECT COUNT(*) FROM transcript_turns") == 8


def test_a_removed_import_takes_its_turns_out_of_recall(env: Env) -> None:
    projects = env.home / "projects"
    write_claude_project(projects, sessions=2, exchanges=2)
    ticket = env.imports.start("default", "claude-code", str(projects), wait=True)
    env.transcripts.capture("default", "live-1", "claude-code", [Turn("l", "user", "parser live")])
    assert len(_turn_hits(env, "parser")) == 5
    env.imports.remove("default", ticket.source_id, dry_run=False)
    assert _turn_hits(env, "parser") == [("live-1", 0)]
    assert env.count("SELECT COUNT(*) FROM transcript_turns") == 1
