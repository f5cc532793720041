"""The process killed mid-apply (`SIGNET_APPLY_FAULT=after-batch:1`): the committed batch is
intact and attributed, the next batch left no trace, nothing is half-applied."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from signet_desktop.storage import dreaming_operations, knowledge_reads
from signet_desktop.storage.database import open_database
from tests.unit.dreaming.test_apply_fixtures import add_memory, count

CHILD = """
import sys
from pathlib import Path
from signet_desktop.dreaming.apply import apply_operations
from signet_desktop.storage.database import open_database

db = open_database(Path(sys.argv[1]))
ops = [{"operation": "create_entity", "payload": {"name": f"E{i}"}, "confidence": 0.9,
        "evidence": [{"quote": "Alice", "source_ref": "memory:m1"}]} for i in range(15)]
apply_operations(db, agent_id="a", pass_id="p1", operations=ops, actor="dreaming:p1")
print("not reached")
"""


def test_killed_after_the_first_batch(tmp_path: Path) -> None:
    path = tmp_path / "memory" / "memories.db"
    db = open_database(path)
    add_memory(db, "a", "m1")
    db.close()
    env = dict(os.environ, SIGNET_APPLY_FAULT="after-batch:1")
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(path)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 137, done.stderr
    assert "not reached" not in done.stdout
    db = open_database(path)
    try:
        assert count(db, "entities") == 10
        rows = dreaming_operations.for_pass(db.reader(), "a", "p1")
        assert [r.seq for r in rows] == list(range(10))
        assert {r.status for r in rows} == {"applied"}
        log = knowledge_reads.mutations_of_pass(db.reader(), "a", "p1")
        assert len(log) == 10 and {m.actor for m in log} == {"dreaming:p1"}
    finally:
        db.close()
