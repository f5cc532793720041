"""Lease renewal: a long handler's heartbeat keeps its job from being released as stale."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from signet_desktop.queue import jobs
from signet_desktop.storage.database import Database, open_database


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(tmp_path / "q.db", with_vec=False)
    yield database
    database.close()


def test_renew_extends_a_held_lease_and_refuses_a_lost_one(db: Database) -> None:
    with db.write() as conn:
        jobs.enqueue(conn, "renewed", agent_id="default")
        (job,) = jobs.lease(conn, "renewed", lease_ms=1000)
        assert jobs.renew(conn, job, lease_ms=600_000)
        after = jobs.get_job(conn, job.id)
        assert after is not None and after.lease_expires_at is not None
        assert job.lease_expires_at is not None and after.lease_expires_at > job.lease_expires_at
        assert not jobs.renew(conn, dataclasses.replace(job, lease_token="not-the-token"))
    with pytest.raises(RuntimeError):
        jobs.renew(db.reader(), job)
