"""kill -9 at every step of a history import, then a rerun: no duplicate session, record or
turn ids, and the counts of a clean run.

A child process imports a Claude Code history with `SIGNET_IMPORT_FAULT=<step>[:<n>]`, which
SIGKILLs it at the n-th time it reaches that step (service/imports/faults.py). The parent then
opens the workspace as a restarted daemon would (`recover()`), runs the import again to the
end, and compares everything it can see with a clean import of the same files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from support.history_files import write_claude_project, write_codex_sessions
from support.real_files import CLAUDE_ROOT, copy_history

from signet_desktop.service.imports.faults import ENV, STEPS, FaultPoints
from signet_desktop.service.imports.harness import claude_code_importer, codex_importer
from signet_desktop.service.imports.service import ImportService
from signet_desktop.service.transcripts.service import TranscriptService
from signet_desktop.storage.database import open_database

CHILD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from signet_desktop.service.imports.harness import claude_code_importer, codex_importer
    from signet_desktop.service.imports.service import ImportService
    from signet_desktop.service.transcripts.service import TranscriptService
    from signet_desktop.storage.database import open_database

    root, history, kind = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    db = open_database(root / "memory" / "memories.db")
    transcripts = TranscriptService(db, root)
    transcripts.recover()
    imports = ImportService(
        db,
        root,
        transcripts,
        importers=[claude_code_importer(), codex_importer()],
        allowed_roots=[history],
    )
    imports.start("default", kind, str(history), wait=True)
    print("not killed", flush=True)
    """
)
SESSIONS = 4
EXCHANGES = 3
# Every step at its first hit, and the per-file/per-record steps again mid-way (3rd file).
FAULTS = [*STEPS, *(f"{step}:3" for step in STEPS if step.split(".")[0] != "run")]


def history(tmp_path: Path, kind: str = "claude-code") -> Path:
    projects = tmp_path / "home" / kind
    if not projects.exists():
        if kind == "codex":
            write_codex_sessions(projects, SESSIONS, EXCHANGES)
        else:
            write_claude_project(projects, SESSIONS, EXCHANGES, torn_tail_on=2)
    return projects


def import_in_process(root: Path, projects: Path, kind: str = "claude-code") -> None:
    db = open_database(root / "memory" / "memories.db")
    try:
        transcripts = TranscriptService(db, root)
        transcripts.recover()  # what the daemon does at start
        imports = ImportService(
            db,
            root,
            transcripts,
            importers=[claude_code_importer(), codex_importer()],
            allowed_roots=[projects],
            faults=FaultPoints(),
        )
        imports.start("default", kind, str(projects), wait=True)
    finally:
        db.close()


def evidence(root: Path, kind: str = "claude-code") -> dict[str, Any]:
    """Everything a duplicate would show up in, without ids that differ between workspaces."""
    canonical = root / "memory" / kind / "transcripts" / "transcript.jsonl"
    raw = canonical.read_bytes()
    lines = [json.loads(line) for line in raw.splitlines()]
    db = open_database(root / "memory" / "memories.db")
    try:
        conn = db.reader()
        sessions = sorted(
            (r[0], r[1], r[2], r[3], r[4])
            for r in conn.execute(
                "SELECT session_key, source_record_id, turn_count, content_hash, "
                "completed_at IS NOT NULL FROM session_transcripts"
            )
        )
        records = sorted(
            tuple(r)
            for r in conn.execute(
                "SELECT source_record_id, session_key, outcome, turn_count, content_hash "
                "FROM source_import_records"
            )
        )
        runs = conn.execute(
            "SELECT SUM(records_imported), SUM(turns_imported), SUM(records_duplicate), "
            "COUNT(*), SUM(status = 'running') FROM source_import_runs"
        ).fetchone()
        files = sorted(
            tuple(r)
            for r in conn.execute(
                "SELECT relative_path, status, byte_offset, content_hash, size_bytes "
                "FROM source_import_files"
            )
        )
        sources = conn.execute("SELECT COUNT(*) FROM sources").fetchone()[0]
        committed = conn.execute(
            "SELECT committed_bytes FROM canonical_transcript_files"
        ).fetchone()[0]
        integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        db.close()
    staged = sorted(p.name for p in (root / "memory" / "imports").rglob("*.jsonl"))
    return {
        "sessions": sessions,
        "records": records,
        "imported": (runs[0], runs[1], runs[2]),
        "running": runs[4],
        "files": files,
        "sources": sources,
        "lines": sorted(
            (line["sessionKey"], line["ordinal"], line["turnId"], line["text"]) for line in lines
        ),
        "turn_ids": Counter((line["sessionKey"], line["turnId"]) for line in lines),
        "committed_is_size": committed == len(raw),
        "ends_in_newline": raw.endswith(b"\n"),
        "staged": staged,
        "integrity": integrity,
    }


def clean_import(base: Path, kind: str) -> dict[str, Any]:
    root = base / "ws"
    (root / "memory").mkdir(parents=True)
    import_in_process(root, history(base, kind), kind)
    return evidence(root, kind)


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return clean_import(tmp_path_factory.mktemp("clean"), "claude-code")


@pytest.fixture(scope="module")
def clean_codex(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return clean_import(tmp_path_factory.mktemp("clean-codex"), "codex")


@pytest.fixture(scope="module")
def clean_real(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("clean-real")
    root = base / "ws"
    (root / "memory").mkdir(parents=True)
    import_in_process(root, copy_history(CLAUDE_ROOT, base / "home" / "real"))
    return evidence(root)


@pytest.mark.parametrize("fault", FAULTS)
def test_a_kill_at_any_step_then_a_rerun_equals_a_clean_import(
    tmp_path: Path, fault: str, clean: dict[str, Any]
) -> None:
    kill_rerun_and_compare(tmp_path, fault, "claude-code", clean)


@pytest.mark.parametrize("fault", ["record.pending:2", "canonical.torn:2", "canonical.appended:2"])
def test_a_killed_codex_import_reruns_to_a_clean_one(
    tmp_path: Path, fault: str, clean_codex: dict[str, Any]
) -> None:
    kill_rerun_and_compare(tmp_path, fault, "codex", clean_codex)


@pytest.mark.parametrize(
    "fault", ["file.staged:3", "record.pending:4", "canonical.torn:6", "record.finalised:8"]
)
def test_a_killed_import_of_real_files_reruns_to_a_clean_one(
    tmp_path: Path, fault: str, clean_real: dict[str, Any]
) -> None:
    """Real Claude Code files, subagents and skipped agents among them (tests/fixtures/real)."""
    projects = copy_history(CLAUDE_ROOT, tmp_path / "home" / "real")
    kill_rerun_and_compare(tmp_path, fault, "claude-code", clean_real, projects)


def kill_rerun_and_compare(
    tmp_path: Path,
    fault: str,
    kind: str,
    clean: dict[str, Any],
    projects: Path | None = None,
) -> None:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    projects = projects or history(tmp_path, kind)
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), str(projects), kind],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, ENV: fault},
    )
    assert child.returncode == -9, child.stdout + child.stderr  # killed, not finished
    import_in_process(root, projects, kind)  # the restart and the rerun
    after = evidence(root, kind)
    assert after["turn_ids"] and max(after["turn_ids"].values()) == 1  # no turn twice
    assert after["running"] == 0  # the killed run was marked interrupted
    for key in ("sessions", "records", "imported", "files", "sources", "lines", "staged"):
        assert after[key] == clean[key], key
    assert after["committed_is_size"] and after["ends_in_newline"]
    assert after["integrity"] == "ok"


def test_the_clean_import_is_what_the_fixture_holds(clean: dict[str, Any]) -> None:
    assert len(clean["sessions"]) == SESSIONS
    assert clean["imported"] == (SESSIONS, SESSIONS * EXCHANGES * 2, 0)
    assert len(clean["lines"]) == SESSIONS * EXCHANGES * 2
    assert {r[2] for r in clean["records"]} == {"imported"}


def test_a_fault_point_fires_once_at_its_nth_hit() -> None:
    fired: list[str] = []
    faults = FaultPoints(("file.staged", 2), action=lambda: fired.append("x"))
    for _ in range(3):
        faults.hit("file.staged")
        faults.hit("file.recorded")
    assert fired == ["x"]
    assert FaultPoints().armed("file.staged") is False
