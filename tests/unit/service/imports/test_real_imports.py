"""Importing the real Claude Code and Codex files (tests/fixtures/real) into a real database.

Exact counts per file and per run: every file seen ends imported or skipped with its reason,
subagent transcripts are sessions linked to their parent, identity comes from the records,
a file still being written is imported in progress and completed once it is quiet, a rerun
reads nothing again, and a renamed file is the same session.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.real_files import (
    CLAUDE_ROOT,
    CODEX_ROOT,
    COMPACTION,
    EXPECTED,
    S258,
    WARMUP,
    copy_history,
)

from signet_desktop.domain.sources import ImportRun
from signet_desktop.dreaming.sources import SourceReader
from signet_desktop.service.imports.faults import FaultPoints
from signet_desktop.service.imports.harness import claude_code_importer, codex_importer
from signet_desktop.service.imports.service import ImportService
from signet_desktop.service.transcripts.service import TranscriptService
from signet_desktop.storage.database import Database, open_database
from signet_desktop.storage.dreaming_evidence import pending_sources

CLAUDE_FILES = {n.removeprefix("claude-code/"): e for n, e in EXPECTED.items() if "claude" in n}
CODEX_FILES = {n.removeprefix("codex/"): e for n, e in EXPECTED.items() if n.startswith("codex/")}


@dataclass
class Env:
    workspace: Path
    home: Path
    db: Database
    imports: ImportService

    def run(self, kind: str, root: Path) -> ImportRun:
        ticket = self.imports.start("default", kind, str(root), wait=True)
        return self.imports.run("default", ticket.run_id)

    def rows(self, sql: str) -> list[tuple[object, ...]]:
        return [tuple(row) for row in self.db.reader().execute(sql)]


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    (workspace / "memory").mkdir(parents=True)
    home.mkdir()
    db = open_database(workspace / "memory" / "memories.db")
    imports = ImportService(
        db,
        workspace,
        TranscriptService(db, workspace),
        importers=[claude_code_importer(), codex_importer()],
        allowed_roots=[home],
        faults=FaultPoints(),
    )
    yield Env(workspace, home, db, imports)
    imports.close()
    db.close()


def test_real_claude_code_history_imports_every_file_with_its_outcome(env: Env) -> None:
    root = copy_history(CLAUDE_ROOT, env.home / "projects")
    run = env.run("claude-code", root)
    sessions = {n: e for n, e in CLAUDE_FILES.items() if e.skip is None}
    assert run.status == "completed"
    assert run.counts.files_seen == run.counts.files_changed == 13
    assert run.counts.records_imported == len(sessions) == 10
    assert run.counts.turns_imported == sum(e.turns for e in sessions.values()) == 52
    assert (run.counts.records_skipped, run.counts.records_duplicate) == (0, 0)
    account = run.account
    assert account is not None
    assert dict(account.files) == {"imported": 10, "skipped": 3}
    assert dict(account.file_reasons) == {WARMUP: 2, COMPACTION: 1}
    assert account.subagents == 3
    assert dict(account.kept_out) == {"interrupted": 4, "meta": 1, "command-output": 1}
    files = dict(env.rows("SELECT relative_path, status FROM source_import_files"))
    assert files == {n: "skipped" if e.skip else "imported" for n, e in CLAUDE_FILES.items()}
    stored = {
        key: (turns, json.loads(meta).get("parentSessionId"), completed is not None)
        for key, turns, meta, completed in env.rows(
            "SELECT session_key, turn_count, source_meta_json, completed_at "
            "FROM session_transcripts"
        )
    }
    assert stored == {e.session: (e.turns, e.parent, True) for e in sessions.values()}
    parents = {parent for _, parent, _ in stored.values() if parent}
    assert parents <= set(stored)  # every subagent's parent session was imported too


def test_real_codex_rollouts_of_both_layouts_import_whole(env: Env) -> None:
    root = copy_history(CODEX_ROOT, env.home / "sessions")
    run = env.run("codex", root)
    assert run.counts.files_seen == 4 and run.counts.records_imported == 4
    assert run.counts.turns_imported == sum(e.turns for e in CODEX_FILES.values()) == 15
    assert run.account is not None and dict(run.account.files) == {"imported": 4}
    assert dict(run.account.kept_out) == {
        "developer": 2,
        "event-copy": 6,
        "instructions": 3,
        "environment-context": 1,
    }
    turns = dict(env.rows("SELECT session_key, turn_count FROM session_transcripts"))
    assert turns == {e.session: e.turns for e in CODEX_FILES.values()}
    again = env.run("codex", root)  # the bare layout is not "new or changed" every run
    assert (again.counts.files_seen, again.counts.files_changed) == (4, 0)
    assert again.counts.records_imported == 0 and again.counts.turns_imported == 0


def test_a_rerun_reads_nothing_again_skipped_files_included(env: Env) -> None:
    root = copy_history(CLAUDE_ROOT, env.home / "projects")
    env.run("claude-code", root)
    again = env.run("claude-code", root)
    assert (again.counts.files_seen, again.counts.files_changed) == (13, 0)
    assert again.counts.records_seen == 0 and again.counts.turns_imported == 0
    assert again.account is not None and dict(again.account.files) == {}
    assert env.rows("SELECT COUNT(*) FROM session_transcripts") == [(10,)]


def test_a_session_still_being_written_is_imported_in_progress_then_completed(
    env: Env,
) -> None:
    root = copy_history(CODEX_ROOT, env.home / "sessions")
    name = next(n for n in CODEX_FILES if n.startswith("codemie-code-0.128.0/"))
    os.utime(root / name, None)  # written just now
    run = env.run("codex", root)
    assert run.account is not None and dict(run.account.files) == {
        "imported": 3,
        "in_progress": 1,
    }
    key = CODEX_FILES[name].session
    status, reason = env.rows(
        f"SELECT status, last_error FROM source_import_files WHERE relative_path = '{name}'"
    )[0]
    assert status == "pending" and str(reason).startswith("in progress: written ")
    assert env.rows(
        f"SELECT turn_count, completed_at FROM session_transcripts WHERE session_key = '{key}'"
    ) == [(5, None)]
    assert not dreaming_sees(env, key)  # not Dreaming's evidence while it is being written
    earlier = time.time() - 3600
    os.utime(root / name, (earlier, earlier))  # the harness stopped writing
    again = env.run("codex", root)
    assert again.counts.files_changed == 1 and again.counts.turns_imported == 0
    assert again.account is not None and dict(again.account.files) == {"imported": 1}
    completed = env.rows(
        f"SELECT completed_at FROM session_transcripts WHERE session_key = '{key}'"
    )
    assert completed[0][0] is not None
    assert dreaming_sees(env, key)


def dreaming_sees(env: Env, key: str) -> bool:
    """Is the transcript among Dreaming's candidates, and may a quote cite it?"""
    conn = env.db.reader()
    listed = any(row[1] == key for row in pending_sources(conn, "default", 100))
    loaded = SourceReader(conn, "default").load(f"transcript:{key}").ok
    assert listed == loaded
    return listed


def test_a_renamed_session_file_is_the_same_session(env: Env) -> None:
    root = copy_history(CLAUDE_ROOT, env.home / "projects")
    env.run("claude-code", root)
    old = root / "codemie-code-2.1.4" / "session-9eda1058.jsonl"
    old.rename(old.with_name("renamed-by-hand.jsonl"))
    run = env.run("claude-code", root)
    assert run.counts.files_changed == 1 and run.counts.records_imported == 0
    assert run.counts.records_duplicate == 0 and run.counts.turns_imported == 0
    assert env.rows("SELECT COUNT(*) FROM session_transcripts") == [(10,)]
    assert env.rows(
        "SELECT f.relative_path FROM source_import_records AS r "
        "JOIN source_import_files AS f ON f.id = r.file_id "
        "WHERE r.source_record_id = '9eda1058-9706-484a-b992-d03f9cfa2546'"
    ) == [("codemie-code-2.1.4/renamed-by-hand.jsonl",)]


def test_two_files_of_one_session_import_it_once(env: Env) -> None:
    root = copy_history(CLAUDE_ROOT, env.home / "projects")
    original = root / "spotter-2.1.39" / f"{S258}.jsonl"
    copy = root / "spotter-2.1.39" / "copy-of-the-session.jsonl"
    copy.write_bytes(original.read_bytes())
    os.utime(copy, (time.time() - 3600, time.time() - 3600))
    run = env.run("claude-code", root)
    assert run.counts.records_imported == 10 and run.counts.records_duplicate == 1
    assert run.account is not None
    assert run.account.file_reasons["duplicate: same session as another file"] == 1
