"""kill -9 at each step of a transcript capture: after restart the canonical JSONL and
session_transcripts agree, and a retried session-end creates no duplicate turn.

A child process captures a session, then captures it again with more turns and is killed
(SIGKILL, no cleanup) at one step of that second capture: halfway through the file write,
after the append before the database commit, or after the commit. The parent then opens the
workspace as a restarted daemon would (`recover()`), retries the capture as the harness's
next session-end would, and checks the evidence.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from signet_desktop.domain.sessions import Turn
from signet_desktop.service.transcripts.service import TranscriptService
from signet_desktop.storage.database import open_database

CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from signet_desktop.domain.sessions import Turn
    from signet_desktop.evidence import canonical
    from signet_desktop.service.transcripts import service as transcripts
    from signet_desktop.storage import transcripts as rows
    from signet_desktop.storage.database import open_database

    root, step = Path(sys.argv[1]), sys.argv[2]
    def kill():
        os.kill(os.getpid(), signal.SIGKILL)

    def turns(n):
        return [Turn(f"t{i}", ("user", "assistant")[i % 2], f"turn {i}") for i in range(n)]

    db = open_database(root / "memory" / "memories.db")
    service = transcripts.TranscriptService(db, root)
    service.capture("default", "s1", "claude-code", turns(3))
    service.capture("default", "other", "claude-code", turns(2))

    if step == "mid-append":
        def torn(self, items):
            data = b"".join(
                (canonical.json.dumps(t.to_json()) + "\\n").encode() for t in items
            )
            with open(self.path, "ab") as handle:
                handle.write(data[: len(data) // 2 + 7])
                handle.flush()
                os.fsync(handle.fileno())
            kill()
        canonical.CanonicalFile.append = torn
    elif step == "after-append":
        real = canonical.CanonicalFile.append
        def appended(self, items):
            real(self, items)
            kill()
        canonical.CanonicalFile.append = appended
    elif step == "after-commit":
        class Sink:  # the event goes out after the commit: die there
            def publish(self, event):
                kill()
        service._events = Sink()
    service.capture("default", "s1", "claude-code", turns(6))
    print("not killed", flush=True)
    """
)


def turns(n: int) -> list[Turn]:
    return [Turn(f"t{i}", ("user", "assistant")[i % 2], f"turn {i}") for i in range(n)]


@pytest.mark.parametrize("step", ["mid-append", "after-append", "after-commit"])
def test_a_kill_at_any_step_leaves_file_and_rows_in_agreement(tmp_path: Path, step: str) -> None:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), step], capture_output=True, text=True, timeout=60
    )
    assert child.returncode == -9, child.stdout + child.stderr  # killed, not finished
    db = open_database(root / "memory" / "memories.db")
    try:
        service = TranscriptService(db, root)
        service.recover()
        service.capture("default", "s1", "claude-code", turns(6), complete=True)  # the retry
        canonical = root / "memory" / "claude-code" / "transcripts" / "transcript.jsonl"
        lines = [json.loads(line) for line in canonical.read_bytes().splitlines()]
        mine = [line for line in lines if line["sessionKey"] == "s1"]
        assert [line["ordinal"] for line in mine] == list(range(6))  # each turn exactly once
        assert [line["text"] for line in mine] == [f"turn {i}" for i in range(6)]
        row = service.get("default", "s1")
        assert row.turn_count == 6 and row.status == "completed"
        assert row.content == "\n\n".join(
            f"{('User', 'Assistant')[i % 2]}: turn {i}" for i in range(6)
        )
        other = [line for line in lines if line["sessionKey"] == "other"]
        assert len(other) == 2 and service.get("default", "other").turn_count == 2
        assert canonical.read_bytes().endswith(b"\n")  # no torn line left behind
        integrity = db.reader().execute("PRAGMA integrity_check").fetchone()[0]
        assert integrity == "ok"
    finally:
        db.close()
