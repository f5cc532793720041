"""A daemon killed mid-write (SIGKILL, no shutdown path at all) loses no acknowledged memory.

Writers keep remembering while the process is killed; after a restart the database passes
SQLite's and FTS5's integrity checks, and every memory the daemon acknowledged is there,
recallable, with its history row. A remember is acknowledged once committed and its vector
follows from the batcher, so the kill usually lands with vectors in flight: those memories
have no vector and no job at the kill, and the restarted daemon's embedding tracker (whose
scan covers every live memory without a current vector) gives every one of them its vector.
"""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

import httpx
import pytest
import sqlean
from support.progress import wait_for_count

from tests.e2e.launcher import Launcher, args_for

pytestmark = pytest.mark.slow

WRITERS = 3
RUN_BEFORE_KILL_S = 1.5
BACKFILL_TIMEOUT_S = 90.0


def remember_until_failure(url: str, prefix: str, acked: list[str]) -> None:
    """POST remembers until the daemon dies; record the ids it acknowledged.

    A slow answer is not the end (at load 15 a remember took over 5 s and the writers all
    gave up before the kill): only a refused or dropped connection or an error status is.
    """
    with httpx.Client(base_url=url, timeout=5) as client:
        for index in range(100_000):
            try:
                reply = client.post(
                    "/api/memory/remember", json={"content": f"{prefix} crash note {index}"}
                )
            except httpx.TimeoutException:
                continue  # not acknowledged: not counted; the next remember tries again
            except httpx.HTTPError:
                return
            if reply.status_code != 200:
                return
            acked.append(reply.json()["id"])


def listed_ids(client: httpx.Client, page: int = 500) -> set[str]:
    """Every live memory id, page by page (fast writers can ack more than one page)."""
    ids: set[str] = set()
    for offset in range(0, 10_000_000, page):
        params = {"limit": page, "offset": offset}
        memories = client.get("/api/memories", params=params).json()["memories"]
        ids.update(memory["id"] for memory in memories)
        if len(memories) < page:
            return ids
    raise AssertionError("listing did not end")


def test_sigkill_during_writes_keeps_every_acknowledged_memory(launcher: Launcher) -> None:
    workspace = launcher.tmp_path / "ws"
    daemon = launcher.start(*args_for(workspace))
    url = daemon.wait_listening()
    acked: list[list[str]] = [[] for _ in range(WRITERS)]
    threads = [
        threading.Thread(target=remember_until_failure, args=(url, f"w{i}", acked[i]))
        for i in range(WRITERS)
    ]
    for thread in threads:
        thread.start()
    time.sleep(RUN_BEFORE_KILL_S)
    # Under load the writers start slowly: kill mid-stream, once they have stored something.
    wait_for_count(lambda: sum(len(ids) for ids in acked), 11, what="acknowledged remembers")
    daemon.proc.send_signal(signal.SIGKILL)
    daemon.proc.wait(10)
    for thread in threads:
        thread.join(10)
    acknowledged = [memory_id for ids in acked for memory_id in ids]
    assert len(acknowledged) > 10, "the writers should have stored something before the kill"

    db_path = workspace / "memory" / "memories.db"
    conn = sqlean.connect(str(db_path))
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')")
    conn.close()

    restarted = launcher.start(*args_for(workspace))  # the stale lock and pid file are reclaimed
    with httpx.Client(base_url=restarted.wait_listening(), timeout=10) as client:
        assert set(acknowledged) <= listed_ids(client)
        for memory_id in acknowledged[:: max(1, len(acknowledged) // 10)]:
            history = client.get(f"/api/memory/{memory_id}/history").json()
            assert [event["event"] for event in history["history"]] == ["created"]
        hits = client.post("/api/memory/recall", json={"query": "w0 crash note 0"}).json()
        assert hits["results"], hits
    conn = sqlean.connect(str(db_path))
    rows = conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
    histories = conn.execute(
        "SELECT COUNT(*) FROM memory_history WHERE event = 'created'"
    ).fetchone()[0]
    conn.close()
    assert rows == histories  # a memory and its history row commit together or not at all
    # Vectors in flight at the kill are made after the restart: each memory gets its vector.
    deadline = time.monotonic() + BACKFILL_TIMEOUT_S
    while (left := unvectored(db_path)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert left == 0, f"{left} memories still without a vector after the restart"
    assert restarted.signal(signal.SIGTERM) == 0


def unvectored(db_path: Path) -> int:
    """Memories with neither a vector nor an open backfill job."""
    conn = sqlean.connect(str(db_path))
    try:
        return int(
            conn.execute(
                "SELECT COUNT(*) FROM memories m WHERE NOT EXISTS "
                "(SELECT 1 FROM embeddings e WHERE e.source_id = m.id) AND NOT EXISTS "
                "(SELECT 1 FROM memory_jobs j WHERE j.memory_id = m.id "
                "AND j.status IN ('pending', 'leased'))"
            ).fetchone()[0]
        )
    finally:
        conn.close()
