"""kill -9 at each step of a Signet-workspace import, then a rerun: the rows equal a clean run's.

A child process imports a Signet workspace (3 batches of memories with history, 2 of
transcripts) with `SIGNET_IMPORT_FAULT=<step>:<n>` set, so it is SIGKILLed at that step's
n-th hit: before or inside a batch's write transaction, after its commit, after the report,
or as the run finishes. The parent reruns the import as a user would and compares every
memory, history event, transcript and record outcome with a run that was never interrupted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from support.signet_workspace import event, make_signet_db, memory, transcript

from signet_desktop.service.imports.faults import ENV
from signet_desktop.service.imports.workspace import STEPS
from signet_desktop.storage.database import open_database

CHILD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from signet_desktop.service.imports.service import ImportService
    from signet_desktop.service.transcripts.service import TranscriptService
    from signet_desktop.service.imports.workspace import KIND, SignetWorkspaceImporter
    from signet_desktop.storage.database import open_database

    workspace, signet = Path(sys.argv[1]), sys.argv[2]
    db = open_database(workspace / "memory" / "memories.db")
    service = ImportService(
        db, workspace, TranscriptService(db, workspace), allowed_roots=[Path(signet).parent],
        importers=[SignetWorkspaceImporter(memory_batch=4, transcript_batch=2)],
    )
    ticket = service.start("default", KIND, signet, wait=True)
    print(service.run("default", ticket.run_id).status, flush=True)
    db.close()
    """
)
CASES = [
    "run.started:1",
    *(f"{step}:1" for step in STEPS),
    "memories.batch_written:2",
    "memories.batch_committed:2",
    "transcripts.batch_written:2",
    "run.finishing:1",
]


def signet_workspace(root: Path) -> Path:
    rows = [memory(i) for i in range(10)] + [memory(10, is_deleted=1)]
    trail = [event(r["id"], n, e) for r in rows[:6] for n, e in enumerate(("created", "modified"))]
    make_signet_db(
        root / "memory" / "memories.db",
        memories=[*rows, memory(11, content=rows[3]["content"]), memory(12, content="")],
        history=trail,
        transcripts=[transcript(f"s{i}", turns=i + 1) for i in range(4)],
    )
    return root


def run_child(workspace: Path, signet: Path, fault: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != ENV}
    if fault:
        env[ENV] = fault
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(workspace), str(signet)],
        capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip


def evidence(workspace: Path) -> dict[str, Any]:
    db = open_database(workspace / "memory" / "memories.db")
    try:
        conn = db.reader()
        rows = conn.execute(
            "SELECT id, content, created_at, is_deleted, importance FROM memories ORDER BY id"
        ).fetchall()
        events = conn.execute(
            "SELECT memory_id, event, changed_by, COALESCE(reason, '') FROM memory_history "
            "ORDER BY memory_id, created_at, event"
        ).fetchall()
        sessions = conn.execute(
            "SELECT session_key, turn_count, completed_at FROM session_transcripts "
            "ORDER BY session_key"
        ).fetchall()
        outcomes = conn.execute(
            "SELECT source_record_id, outcome, COALESCE(last_error, '') "
            "FROM source_import_records ORDER BY source_record_id"
        ).fetchall()
        ids = conn.execute("SELECT COUNT(*), COUNT(DISTINCT id) FROM memory_history").fetchone()
        assert ids[0] == ids[1]
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        (report_file,) = (workspace / "memory" / "imports").glob("*/report.json")
        report = json.loads(report_file.read_text())
        report.pop("idsRemapped")  # counts this run's remaps only
        report["schema"].pop("path")  # each test has its own Signet copy
        return {
            "report": report,
            "memories": [tuple(r) for r in rows],
            "history": [tuple(r) for r in events],
            "sessions": [tuple(r) for r in sessions],
            "records": [tuple(r) for r in outcomes],
        }
    finally:
        db.close()


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("clean")
    signet = signet_workspace(root / "signet")
    child = run_child(root / "ws", signet, None)
    assert child.returncode == 0 and child.stdout.strip() == "completed", child.stderr
    found = evidence(root / "ws")
    assert len(found["memories"]) == 11 and len(found["sessions"]) == 4
    return found


@pytest.mark.parametrize("fault", CASES)
def test_a_kill_at_any_step_then_a_rerun_equals_a_clean_import(
    tmp_path: Path, clean: dict[str, Any], fault: str
) -> None:
    signet = signet_workspace(tmp_path / "signet")
    before = (signet / "memory" / "memories.db").read_bytes()
    killed = run_child(tmp_path / "ws", signet, fault)
    assert killed.returncode == -9, killed.stdout + killed.stderr  # killed, not finished
    rerun = run_child(tmp_path / "ws", signet, None)
    assert rerun.returncode == 0 and rerun.stdout.strip() == "completed", rerun.stderr
    assert evidence(tmp_path / "ws") == clean
    assert (signet / "memory" / "memories.db").read_bytes() == before
    assert sorted(os.listdir(signet / "memory")) == ["memories.db"]
