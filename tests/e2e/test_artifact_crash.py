"""kill -9 while a Markdown artifact is written: after restart the index and the files agree.

A child process writes a compaction artifact and is killed (SIGKILL) at one step: halfway
through the temp file, or after the rename before the index row commits. The parent then
opens the workspace as a restarted daemon does (the artifact worker's first step re-indexes)
and retries the write as the harness's next compaction-complete would.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from signet_desktop.evidence import artifacts as files
from signet_desktop.service.artifacts.service import ArtifactService
from signet_desktop.service.artifacts.worker import ArtifactWorker
from signet_desktop.service.transcripts.service import TranscriptService
from signet_desktop.storage.database import open_database

SUMMARY = "We chose Postgres 16. Backups next."
CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from signet_desktop.evidence import artifacts as files
    from signet_desktop.service.artifacts import service
    from signet_desktop.service.transcripts.service import TranscriptService
    from signet_desktop.storage.database import open_database

    root, step = Path(sys.argv[1]), sys.argv[2]
    def kill():
        os.kill(os.getpid(), signal.SIGKILL)

    if step == "mid-write":
        real_fsync = os.fsync
        def torn_fsync(fd):
            os.ftruncate(fd, 40)  # a part of the file is on disk, then the process dies
            real_fsync(fd)
            kill()
        files.os.fsync = torn_fsync
    elif step == "after-rename":
        service.rows.upsert_artifact = lambda *args, **kwargs: kill()
    db = open_database(root / "memory" / "memories.db")
    artifacts = service.ArtifactService(db, root, TranscriptService(db, root))
    artifacts.write_compaction("default", "s1", sys.argv[3], harness="claude-code")
    """
)


def run_child(root: Path, step: str) -> int:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), step, SUMMARY], capture_output=True, timeout=60
    )
    return proc.returncode


@pytest.mark.parametrize("step", ["mid-write", "after-rename"])
def test_a_killed_artifact_write_heals_on_restart(tmp_path: Path, step: str) -> None:
    assert run_child(tmp_path, step) == -9
    left = list((tmp_path / "memory").glob(".*.tmp"))
    assert len(left) == (1 if step == "mid-write" else 0)  # the torn temp file
    db = open_database(tmp_path / "memory" / "memories.db")
    try:
        artifacts = ArtifactService(db, tmp_path, TranscriptService(db, tmp_path))
        ArtifactWorker(artifacts).run_once()  # the restarted daemon's first step
        assert list((tmp_path / "memory").glob(".*.tmp")) == []
        indexed = artifacts.indexed("default")
        on_disk = sorted((tmp_path / "memory").glob("*--compaction.md"))
        assert len(indexed) == len(on_disk) == (1 if step == "after-rename" else 0)
        # The harness retries: one complete file, one row, either way.
        artifacts.write_compaction("default", "s1", SUMMARY, harness="claude-code")
        [artifact] = artifacts.indexed("default")
        [path] = sorted((tmp_path / "memory").glob("*--compaction.md"))
        meta, body = files.parse(path.read_text())
        assert body == SUMMARY and meta.session_key == "s1"
        assert artifact.source_path == f"memory/{path.name}"
    finally:
        db.close()
