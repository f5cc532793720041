"""A daemon killed (SIGKILL) while a worker runs a job: after a restart the job runs again.

The job's lease has minutes left when the process dies; the restarted worker releases it on
its first step (the workspace lock means no other process can hold it) instead of waiting for
the lease to expire, and completes it. Nothing is lost, nothing runs twice at once.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlean

from signet_desktop.config import SignetConfig, WorkspacePaths
from signet_desktop.domain.memory import Actor
from signet_desktop.queue import jobs
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.memories.service import RememberRequest
from tests.e2e.launcher import Launcher, args_for
from tests.support.db import database_of
from tests.unit.embedding.embedding_fakes import FakeEmbedServer, Reply, Seen

pytestmark = pytest.mark.slow

JOB = "embedding_backfill"


def job_row(db_path: Path, job_id: str) -> tuple[str, int]:
    conn = sqlean.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        row = conn.execute(
            "SELECT status, attempts FROM memory_jobs WHERE id = :id", {"id": job_id}
        ).fetchone()
    finally:
        conn.close()
    assert row is not None, "the job row is gone"
    return str(row[0]), int(row[1])


def wait_for(check: Callable[[], bool], timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.05)


def queue_one_job(workspace: Path) -> str:
    """A memory saved without a vector and its backfill job, written before any daemon runs."""
    paths = WorkspacePaths.for_root(workspace)
    paths.ensure()
    service = build_service(paths, SignetConfig(), BuildOptions(no_embedder=True))
    try:
        memory = service.memories.remember(
            RememberRequest(content="embedded by the worker after a crash"), Actor()
        ).memory
        with database_of(service).write() as conn:
            job, _ = jobs.enqueue(conn, JOB, agent_id="default", memory_id=memory.id)
    finally:
        service.close()
    return job.id


def test_sigkill_mid_job_then_restart_retries_the_job(launcher: Launcher) -> None:
    server = FakeEmbedServer(dims=8)
    server.start()
    try:
        workspace = launcher.tmp_path / "ws"
        job_id = queue_one_job(workspace)
        (workspace / "agent.yaml").write_text(
            "embedding:\n  provider: ollama\n  model: fake-embed\n  dimensions: 8\n"
            f"  base_url: {server.url}\n  timeout_ms: 60000\n"
        )

        def hang(seen: Seen) -> Reply:
            return Reply(delay_s=30, body=server.real_reply(seen).body)

        server.script = [hang] * 20  # the embedder answers nothing while the daemon lives
        db_path = workspace / "memory" / "memories.db"
        daemon = launcher.start(*args_for(workspace))
        daemon.wait_listening()
        wait_for(lambda: bool(server.requests) and job_row(db_path, job_id) == ("leased", 1))
        daemon.proc.send_signal(signal.SIGKILL)
        daemon.proc.wait(10)
        assert job_row(db_path, job_id) == ("leased", 1), "killed mid-job, lease still held"

        server.script = []  # the embedder is healthy again
        restarted = launcher.start(*args_for(workspace))
        restarted.wait_listening()
        wait_for(lambda: job_row(db_path, job_id)[0] == "completed")
        assert job_row(db_path, job_id) == ("completed", 2)
    finally:
        server.stop()
