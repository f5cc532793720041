"""Two daemons, one PostgreSQL database (issue 31, "several daemons, one database").

Daemons A and B each have their own workspace (lock, pid file, log) and the same
`storage.url`, an empty database. Opened at the same moment, exactly one migrates; then a
memory remembered on A is recalled on B, an SSE client on B sees A's `memory.created`, and
the job queue is shared: the prospective-hint jobs that remembers on A and on B queue (one
per memory, the LLM a scripted loopback server answering in `LLM_DELAY_S`) are each leased
exactly once and cost one LLM call, and B, with fewer of its own, also runs some of A's.

Documents would be the natural queue to share, but their storage is not ported to
PostgreSQL yet (`LATEST_JOB` orders by rowid, chunk links use INSERT OR IGNORE).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.team_daemons import (
    closing,
    daemon_log,
    error_lines,
    new_runtime,
    open_together,
    poll,
    query_rows,
    relay_threads,
    serving,
)

from signet_desktop.daemon.runtime import DaemonRuntime
from signet_desktop.domain.events import JobLeased
from signet_desktop.service.hints.service import JOB_TYPE as HINT_JOB
from signet_desktop.storage.postgres.migrate import load_postgres_migrations
from tests.support.fake_llm import FakeLLM, reply, slow

pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.timeout(600)]

DEADLINE_S = 60.0  # a bound against a hang at load 10-20; bench/pg_team.py measures speed
LLM_DELAY_S = 0.5  # each hint job holds its worker this long: the other daemon's polls in
BURST_A, BURST_B = 12, 4  # memories remembered on each daemon at once
HINTS = json.dumps({"hints": ["which replica takes over", "where does billing fail over"]})


def fact(tag: str, i: int) -> str:
    return f"{tag} fact {i}: the {tag} team moved service {i} to the shared cluster"


HINT_JOBS = (
    "SELECT status, attempts, COUNT(*) FROM memory_jobs "
    f"WHERE job_type = '{HINT_JOB}' GROUP BY status, attempts ORDER BY status, attempts"
)


JOB_MEMORIES = f"SELECT id, memory_id FROM memory_jobs WHERE job_type = '{HINT_JOB}'"


def test_two_daemons_share_one_database(
    tmp_path: Path,
    pg_empty_url: str,
    fake_llm: FakeLLM,
    record_property: Callable[[str, object], None],
) -> None:
    fake_llm.script(*[slow(LLM_DELAY_S, reply(HINTS)) for _ in range(3 * (BURST_A + BURST_B))])
    a = new_runtime(tmp_path, "a", pg_empty_url, hints_llm=fake_llm.base_url)
    b = new_runtime(tmp_path, "b", pg_empty_url, hints_llm=fake_llm.base_url)
    daemons: list[DaemonRuntime] = [a, b]
    found: dict[str, Any] = {}
    leased: dict[str, list[str]] = {"a": [], "b": []}  # hint jobs each daemon's workers took

    async def scenario() -> None:
        async with (
            serving(daemons),
            httpx.AsyncClient(base_url=a.url, timeout=30) as on_a,
            httpx.AsyncClient(base_url=b.url, timeout=30) as on_b,
        ):
            for client in (on_a, on_b):
                status = (await client.get("/api/status")).json()
                assert status["database"]["backend"] == "postgresql"
                relay = status["eventRelay"]
                found.setdefault("daemon_ids", []).append(relay["daemonId"])
            _, _ = await poll(
                lambda: on_b.get("/api/status"),
                lambda r: bool(r.json()["eventRelay"]["listening"]),
                DEADLINE_S,
            )
            await remembered_on_a_seen_on_b(on_a, on_b)
            await queue_is_shared(on_a, on_b)
            found["relay_b"] = (await on_b.get("/api/status")).json()["eventRelay"]

    async def remembered_on_a_seen_on_b(on_a: httpx.AsyncClient, on_b: httpx.AsyncClient) -> None:
        content = "the billing cluster fails over to the eu-west replica"
        stream_ready = asyncio.Event()
        created_on_b: list[dict[str, Any]] = []  # every memory.created B's stream delivered
        seen: dict[str, Any] = {}

        async def watch() -> None:
            params = {"types": "memory.created", "heartbeat": 1}
            async with on_b.stream("GET", "/api/events", params=params) as stream:
                assert stream.status_code == 200
                async for line in stream.aiter_lines():
                    if line == ": connected":
                        stream_ready.set()
                    if line.startswith("data: "):
                        created_on_b.append(json.loads(line.removeprefix("data: ")))

        watching = asyncio.create_task(watch())
        await asyncio.wait_for(stream_ready.wait(), DEADLINE_S)
        saved = await on_a.post("/api/memory/remember", json={"content": content})
        assert saved.status_code == 200, saved.text
        seen["id"] = found["first_id"] = saved.json()["id"]

        async def recall_on_b() -> list[dict[str, Any]]:
            body = await on_b.post("/api/memory/recall", json={"query": "billing eu-west replica"})
            results: list[dict[str, Any]] = body.json()["results"]
            return results

        _, latency = await poll(recall_on_b, lambda h: any(x["id"] == seen["id"] for x in h), 60)
        found["recall_latency_s"] = latency

        async def streamed() -> list[dict[str, Any]]:
            assert not watching.done(), watching
            return [e for e in created_on_b if e.get("memoryId") == seen["id"]]

        events, sse_latency = await poll(streamed, bool, DEADLINE_S)
        watching.cancel()
        found["sse_latency_s"] = sse_latency
        assert events[0]["type"] == "memory.created" and events[0]["agentId"] == "default"

    async def queue_is_shared(on_a: httpx.AsyncClient, on_b: httpx.AsyncClient) -> None:
        async def burst(client: httpx.AsyncClient, tag: str, size: int) -> list[str]:
            ids = []
            for i in range(size):
                saved = await client.post("/api/memory/remember", json={"content": fact(tag, i)})
                assert saved.status_code == 200, saved.text
                ids.append(saved.json()["id"])
            return ids

        written = await asyncio.gather(burst(on_a, "alpha", BURST_A), burst(on_b, "beta", BURST_B))
        found["written_on_a"] = {*written[0], found["first_id"]}
        found["memories"] = [*written[0], *written[1], found["first_id"]]

        def done(rows: list[tuple[Any, ...]]) -> bool:
            return sum(n for _, _, n in rows) >= len(found["memories"]) and all(
                status == "completed" for status, _, _ in rows
            )

        async def job_rows() -> list[tuple[Any, ...]]:
            return await asyncio.to_thread(query_rows, pg_empty_url, HINT_JOBS)

        found["jobs"], _ = await poll(job_rows, done, DEADLINE_S, step=0.2)

    with closing(daemons):
        open_together(daemons)  # both migrate-or-wait on the empty database at once
        for name, runtime in (("a", a), ("b", b)):
            assert runtime.service is not None
            runtime.service.events.connect(  # handlers see this daemon's own events only
                lambda e, mine=leased[name]: (
                    mine.append(e.job_id)
                    if isinstance(e, JobLeased) and e.job_type == HINT_JOB
                    else None
                )
            )
        asyncio.run(scenario())
    assert relay_threads() == []

    # (a) one migration run: each file applied and audited once.
    files = len(load_postgres_migrations())
    applied = query_rows(pg_empty_url, "SELECT COUNT(*) FROM schema_migrations")
    audited = query_rows(
        pg_empty_url, "SELECT version, COUNT(*) FROM schema_migrations_audit GROUP BY version"
    )
    assert applied == [(files,)]
    assert len(audited) == files and all(n == 1 for _, n in audited), audited
    assert len(set(found["daemon_ids"])) == 2

    # (b) and (c): recalled on B; B's SSE saw A's event through the relay.
    record_property("cross_daemon_recall_s", round(found["recall_latency_s"], 3))
    print(f"remember on A -> recall hit on B: {found['recall_latency_s']:.3f} s")
    print(f"remember on A -> SSE event on B (after the recall hit): {found['sse_latency_s']:.3f} s")
    assert found["relay_b"]["received"] >= 1

    # (d) one hint job per memory, each leased once, by one daemon; one LLM call each.
    doubled = query_rows(
        pg_empty_url,
        "SELECT memory_id, array_agg(id), array_agg(created_at) FROM memory_jobs "
        f"WHERE job_type = '{HINT_JOB}' GROUP BY memory_id HAVING COUNT(*) > 1",
    )
    assert doubled == [], doubled  # (memory, its jobs, when each was queued)
    assert found["jobs"] == [("completed", 1, len(found["memories"]))], found["jobs"]
    every_lease = leased["a"] + leased["b"]
    assert len(every_lease) == len(set(every_lease)) == len(found["memories"]), leased
    memory_of = dict(
        query_rows(
            pg_empty_url, f"SELECT id, memory_id FROM memory_jobs WHERE job_type = '{HINT_JOB}'"
        )
    )
    a_jobs_run_on_b = [j for j in leased["b"] if memory_of[j] in found["written_on_a"]]
    record_property("hint_jobs_run_by", {"a": len(leased["a"]), "b": len(leased["b"])})
    assert a_jobs_run_on_b, leased  # the queue is one: B's worker took jobs A's writes queued
    model_calls = [r for r in fake_llm.requests if r.path.endswith("/chat/completions")]
    assert len(model_calls) == len(found["memories"])

    for runtime in daemons:
        assert error_lines(runtime) == [], daemon_log(runtime)[-4000:]
