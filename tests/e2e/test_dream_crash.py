"""The real daemon killed in the middle of a Dreaming pass's apply (the seam's own fault point
`SIGNET_APPLY_FAULT=after-batch:1`): after a restart the pass is failed "interrupted", the
first batch's operations are intact and attributed to it, and nothing of the second batch was
written."""

from __future__ import annotations

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
OPS = 15  # the seam writes batches of 10: the fault fires after the first


def wait_for(client: httpx.Client, path: str, done: Any, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    answer: Any = None
    while time.monotonic() < deadline:
        answer = client.get(path).json()
        if done(answer):
            return answer
        time.sleep(0.1)
    raise AssertionError(f"{path} never got there: {answer}")


def test_a_daemon_killed_mid_apply_leaves_the_pass_interrupted(
    launcher: Launcher, fake_llm: FakeLLM
) -> None:
    workspace = launcher.tmp_path / "ws"
    workspace.mkdir()
    (workspace / "agent.yaml").write_text(dreaming_yaml(fake_llm.base_url), encoding="utf-8")
    env = clean_env(launcher.home, SIGNET_APPLY_FAULT="after-batch:1")
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
        started = client.post("/api/dream/trigger", json={"mode": "incremental"})
        assert started.status_code == 202, started.text
        pass_id = started.json()["passId"]
    assert daemon.proc.wait(60) == 137, daemon.stderr()  # the seam's fault point

    restarted = launcher.start(*args_for(workspace))
    with httpx.Client(base_url=restarted.wait_listening(), timeout=10) as client:
        detail = wait_for(
            client, f"/api/dream/passes/{pass_id}", lambda p: p["status"] != "running"
        )
        assert detail["status"] == "failed" and detail["error"] == "interrupted"
        assert detail["mutations"]["applied"] == 10
        applied = [op for op in detail["operations"] if op["status"] == "applied"]
        assert len(applied) == len(detail["operations"]) == 10
        assert all(op["actor"] == f"dreaming:{pass_id}" for op in applied)
        again = client.post("/api/dream/trigger", json={})  # the agent is free again
        assert again.status_code == 202, again.text
        wait_for(client, f"/api/dream/passes/{again.json()['passId']}",
                 lambda p: p["status"] != "running")  # fmt: skip
    assert restarted.signal() == 0
    conn = sqlite3.connect(workspace / "memory" / "memories.db")
    try:
        names = [r[0] for r in conn.execute("SELECT name FROM entities ORDER BY name")]
        assert names == sorted(f"Person {n}" for n in range(10))
        created_by = {r[0] for r in conn.execute("SELECT created_by FROM entities")}
        assert created_by == {f"dreaming:{pass_id}"}
        logged = conn.execute(
            "SELECT COUNT(*) FROM graph_mutations WHERE pass_id = ?", (pass_id,)
        ).fetchone()[0]
        assert logged >= 10
    finally:
        conn.close()
