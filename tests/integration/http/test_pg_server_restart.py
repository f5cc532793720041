"""PostgreSQL restarted under a daemon at work (issue 31's fault list).

Writers remember over HTTP without pause; the server is halted mid-load, kept down for a
while, then started again on the same cluster. While it is down every request that needs the
database gets a 503 that says so (`database_unavailable`, never a 500 or a stack trace) and
/health/ready says it; once it is back the daemon reconnects on its own and writes succeed
again; every remember acknowledged with a 200 is in the database afterwards, and the daemon
keeps running with its workers.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.postgres_server import RunningPostgres, resume_postgres, start_postgres
from support.team_daemons import new_runtime

from signet_desktop.storage.postgres.connect import connect_postgres
from signet_desktop.storage.postgres.migrate import apply_postgres_migrations

pytestmark = pytest.mark.postgres

WRITERS = 3
DOWN_S = 4.0
DEADLINE_S = 120.0


@pytest.fixture
def own_server() -> Iterator[list[RunningPostgres]]:
    """A server of this test's own (it is halted and restarted); the list holds the live one."""
    servers = [start_postgres()]
    try:
        yield servers
    finally:
        servers[-1].stop()


def test_a_postgresql_restart_gives_clear_503s_and_loses_no_acknowledged_write(
    tmp_path: Path, own_server: list[RunningPostgres]
) -> None:
    url = own_server[0].url()
    conn = connect_postgres(url)
    try:
        apply_postgres_migrations(conn)
    finally:
        conn.close()
    runtime = new_runtime(tmp_path, "ws", url)  # its own workspace; the store on `url`
    runtime.open()
    acknowledged: list[str] = []
    refused: list[tuple[int, dict[str, Any]]] = []
    ready_while_down: list[int] = []
    stop_writing = threading.Event()

    async def writer(client: httpx.AsyncClient, n: int) -> None:
        i = 0
        while not stop_writing.is_set():
            content = f"writer {n} fact {i} about the billing service"
            i += 1
            try:
                reply = await client.post("/api/memory/remember", json={"content": content})
            except httpx.TransportError:
                continue  # not answered: neither acknowledged nor refused
            if reply.status_code == 200:
                acknowledged.append(content)
            else:
                refused.append((reply.status_code, reply.json()))
                await asyncio.sleep(0.05)

    async def scenario() -> tuple[int, list[int], dict[str, Any]]:
        ready = asyncio.Event()
        runtime.on_ready(ready.set)
        serving = asyncio.create_task(runtime.serve())
        await asyncio.wait_for(ready.wait(), 60)
        async with httpx.AsyncClient(base_url=runtime.url, timeout=60) as client:
            writers = [asyncio.create_task(writer(client, n)) for n in range(WRITERS)]
            await _until(lambda: len(acknowledged) >= 20)
            before = len(acknowledged)
            own_server[0].halt()
            await asyncio.sleep(DOWN_S / 2)
            ready_while_down.append((await client.get("/health/ready")).status_code)
            await asyncio.sleep(DOWN_S / 2)
            acknowledged_while_down = len(acknowledged) - before
            # On this thread: the server dies with the thread that started it (PDEATHSIG), and
            # a pool thread ends with the loop. The loop waits the second or two it takes.
            own_server.append(resume_postgres(own_server[0]))
            after_restart = len(acknowledged)
            await _until(lambda: len(acknowledged) >= after_restart + 20)
            stop_writing.set()
            await asyncio.gather(*writers)
            ready_after = (await client.get("/health/ready")).status_code
            status = (await client.get("/api/status")).json()
        runtime.request_stop()
        code = await asyncio.wait_for(serving, 60)
        return code, [acknowledged_while_down, ready_after], status

    try:
        code, (acknowledged_while_down, ready_after), status = asyncio.run(scenario())
    finally:
        runtime.close()
    assert code == 0
    # While it was down: refusals, each a 503 that names the database, nothing else.
    assert refused, "no request was refused while the server was down"
    assert {status for status, _ in refused} == {503}, refused[:5]
    assert {body["code"] for _, body in refused} == {"database_unavailable"}, refused[:5]
    assert all("database" in body["error"].lower() for _, body in refused), refused[:3]
    assert ready_while_down == [503]
    assert acknowledged_while_down <= WRITERS  # only requests already committing as it stopped
    # Back: it reconnected on its own and serves.
    assert ready_after == 200
    assert all(w["state"] == "running" for w in status["workers"].values()), status["workers"]
    # Nothing acknowledged was lost.
    check = connect_postgres(own_server[-1].url())
    try:
        stored = {str(r["content"]) for r in check.execute("SELECT content FROM memories")}
    finally:
        check.close()
    missing = [c for c in acknowledged if c not in stored]
    assert not missing, f"{len(missing)} of {len(acknowledged)} acknowledged writes lost"
    # The outage is logged as warnings that say so, not as errors with tracebacks.
    assert runtime.paths is not None
    log_text = (runtime.paths.logs_dir / "daemon.log").read_text()
    errors = [line for line in log_text.splitlines() if " ERROR " in line]
    assert not errors, errors[:5]
    assert "database unavailable, retry shortly" in log_text


async def _until(done: Any) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError("the writers made no progress in time")
        await asyncio.sleep(0.05)
