"""The real daemon SIGKILLed in the middle of a Dreaming pass's apply, at each of the seam's
fault points (`SIGNET_APPLY_FAULT`, dreaming/apply.py): inside the first batch's transaction,
between batches, inside the second. After a restart the database passes its integrity check
and its vector mirror is whole, the acknowledged memory is there, the pass is failed
"interrupted", every committed batch's operations are intact and attributed to it, nothing of
the interrupted batch was written, and the next pass runs."""

from __future__ import annotations

import signal
import sqlite3
import time
from typing import Any

import httpx
import pytest

from tests.e2e.launcher import Launcher, args_for, clean_env
from tests.support.dream_config import dreaming_yaml
from tests.support.fake_llm import FakeLLM, call, reply, tool_reply

pytestmark = pytest.mark.slow

MEMORY = "The team moved to Lisbon in May and hired Ana, Bruno, Carla and Duarte."
OPS = 15  # the seam writes batches of 10, then 5


def wait_for(client: httpx.Client, path: str, done: Any, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    answer: Any = None
    while time.monotonic() < deadline:
        answer = client.get(path).json()
        if done(answer):
            return answer
        time.sleep(0.1)
    raise AssertionError(f"{path} never got there: {answer}")


def trigger_pass(client: httpx.Client) -> str | None:
    """Start a pass; None when the daemon died at its fault point before it answered (the
    pass can run to the fault faster than the 202 is written, seen on a loaded machine)."""
    try:
        started = client.post("/api/dream/trigger", json={"mode": "incremental"})
    except httpx.RemoteProtocolError:
        return None
    assert started.status_code == 202, started.text
    return str(started.json()["passId"])


# (fault, operations left applied): the seam writes batches of 10.
POINTS = [
    ("operation.written:3", 0),  # inside batch 1
    ("batch.logged:1", 0),  # inside batch 1, its log written, not committed
    ("batch.committed:1", 10),  # between batches
    ("operation.written:13", 10),  # inside batch 2
]


@pytest.mark.parametrize(("fault", "left"), POINTS)
def test_a_daemon_killed_mid_apply_leaves_the_pass_interrupted(
    launcher: Launcher, fake_llm: FakeLLM, fault: str, left: int
) -> None:
    workspace = launcher.tmp_path / "ws"
    workspace.mkdir()
    (workspace / "agent.yaml").write_text(dreaming_yaml(fake_llm.base_url), encoding="utf-8")
    env = clean_env(launcher.home, SIGNET_APPLY_FAULT=fault)
    daemon = launcher.start(*args_for(workspace), env=env)
    with httpx.Client(base_url=daemon.wait_listening(), timeout=10) as client:
        saved = client.post("/api/memory/remember", json={"content": MEMORY})
        ref = f"memory:{saved.json()['id']}"
        ops = [
            {
                "operation": "create_entity",
                "payload": {"name": f"Person {n}", "type": "person"},
                "evidence": [{"quote": "moved to Lisbon", "source_ref": ref}],
                "confidence": 0.8,
            }
            for n in range(OPS)
        ]
        fake_llm.script(tool_reply(call("apply_ontology_ops", {"operations": ops})), reply("ok"))
        pass_id = trigger_pass(client)
    assert daemon.proc.wait(60) == -signal.SIGKILL, daemon.stderr()  # the seam's fault point
    memory_id = saved.json()["id"]

    restarted = launcher.start(*args_for(workspace))
    with httpx.Client(base_url=restarted.wait_listening(), timeout=10) as client:
        if pass_id is None:  # the kill came before the trigger's answer: the one pass it began
            passes = client.get("/api/dream/passes").json()["passes"]
            assert len(passes) == 1, passes
            pass_id = passes[0]["id"]
        detail = wait_for(
            client, f"/api/dream/passes/{pass_id}", lambda p: p["status"] != "running"
        )
        assert detail["status"] == "failed" and detail["error"] == "interrupted"
        assert detail["mutations"]["applied"] == left
        applied = [op for op in detail["operations"] if op["status"] == "applied"]
        assert len(applied) == len(detail["operations"]) == left
        assert all(op["actor"] == f"dreaming:{pass_id}" for op in applied)
        assert client.get(f"/api/memory/{memory_id}").status_code == 200  # acknowledged: kept
        mirror = client.get("/api/embeddings/status").json()["mirror"]
        assert mirror["enabled"] and mirror["missing"] == 0 == mirror["orphans"], mirror
        again = client.post("/api/dream/trigger", json={})  # the agent is free again
        assert again.status_code == 202, again.text
        wait_for(client, f"/api/dream/passes/{again.json()['passId']}",
                 lambda p: p["status"] != "running")  # fmt: skip
    assert restarted.signal() == 0
    conn = sqlite3.connect(workspace / "memory" / "memories.db")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        names = [r[0] for r in conn.execute("SELECT name FROM entities ORDER BY name")]
        assert names == sorted(f"Person {n}" for n in range(left))
        created_by = {r[0] for r in conn.execute("SELECT created_by FROM entities")}
        assert created_by == ({f"dreaming:{pass_id}"} if left else set())
        logged = conn.execute(
            "SELECT COUNT(*) FROM graph_mutations WHERE pass_id = ?", (pass_id,)
        ).fetchone()[0]
        assert logged == left
    finally:
        conn.close()
