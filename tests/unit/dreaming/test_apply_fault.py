"""The process SIGKILLed at each fault point of the apply seam (`SIGNET_APPLY_FAULT`): inside a
batch's transaction (after an operation, after the batch's log rows) and between batches.

After each kill the database passes its integrity check; a batch is there whole (its entities,
its `dreaming_operations` rows and its graph mutations, attributed to the pass) or not at all;
nothing of the interrupted batch is left.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from signet_desktop.dreaming.apply import FAULT_ENV, FAULT_STEPS
from signet_desktop.storage import dreaming_operations, knowledge_reads
from signet_desktop.storage.database import open_database
from tests.unit.dreaming.test_apply_fixtures import add_memory, count

OPERATIONS = 15  # two batches: 10, then 5
CHILD = f"""
import sys
from pathlib import Path
from signet_desktop.dreaming.apply import apply_operations
from signet_desktop.storage.database import open_database

db = open_database(Path(sys.argv[1]))
ops = [{{"operation": "create_entity", "payload": {{"name": f"E{{i}}"}}, "confidence": 0.9,
        "evidence": [{{"quote": "Alice", "source_ref": "memory:m1"}}]}}
       for i in range({OPERATIONS})]
apply_operations(db, agent_id="a", pass_id="p1", operations=ops, actor="dreaming:p1")
print("not reached")
"""

# (fault, entities left): a kill inside a batch leaves none of it; after a commit, all of it.
POINTS = [
    ("operation.written:1", 0),  # inside batch 1, after its first operation
    ("operation.written:10", 0),  # inside batch 1, every operation written, no log yet
    ("batch.logged:1", 0),  # inside batch 1, its log rows written, not committed
    ("batch.committed:1", 10),  # between batches
    ("operation.written:13", 10),  # inside batch 2
    ("batch.logged:2", 10),
    ("batch.committed:2", 15),  # every batch committed, the report never returned
]


def test_every_step_is_tested() -> None:
    assert {point.partition(":")[0] for point, _ in POINTS} == set(FAULT_STEPS)


@pytest.mark.parametrize(("fault", "left"), POINTS)
def test_killed_at_a_fault_point(tmp_path: Path, fault: str, left: int) -> None:
    path = tmp_path / "memory" / "memories.db"
    db = open_database(path)
    add_memory(db, "a", "m1")
    db.close()
    env = dict(os.environ, **{FAULT_ENV: fault})
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(path)], env=env, capture_output=True, text=True
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert "not reached" not in done.stdout
    db = open_database(path)
    try:
        assert db.reader().execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert count(db, "entities") == left
        rows = dreaming_operations.for_pass(db.reader(), "a", "p1")
        assert [r.seq for r in rows] == list(range(left))
        assert {r.status for r in rows} <= {"applied"}
        log = knowledge_reads.mutations_of_pass(db.reader(), "a", "p1")
        assert len(log) == left and {m.actor for m in log} <= {"dreaming:p1"}
        assert count(db, "memories") == 1  # the cited memory is untouched
    finally:
        db.close()
