"""One Dreaming pass per agent across daemons on PostgreSQL: the agent's session advisory lock
(storage/dreaming_passes.py: take_pass_lock, storage/postgres/advisory.py), held from before
the pass row is inserted until after it is finished. Two `PgDatabase` handles are two
daemons."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from signet_desktop.config.models import DreamingConfig
from signet_desktop.domain.dreaming import INTERRUPTED
from signet_desktop.dreaming.runner import LOCK_LOST, Cancellation, PassRunner
from signet_desktop.service.dreaming.service import DreamingService
from signet_desktop.storage import dreaming_passes as passes
from signet_desktop.storage.postgres.advisory import SessionLock, lock_key
from signet_desktop.storage.postgres.connect import connect_postgres
from signet_desktop.storage.postgres.database import PgDatabase

pytestmark = pytest.mark.postgres

CONFIG = DreamingConfig(enabled=True)


def runner(db: PgDatabase) -> PassRunner:
    """A runner whose passes need no seam (no evidence: they never apply anything)."""
    return PassRunner(db, config=CONFIG, seam=no_seam)  # type: ignore[arg-type]


def no_seam(agent_id: str, pass_id: str) -> Any:
    raise AssertionError("a pass without evidence applies nothing")


def no_provider() -> Any:
    raise AssertionError("recovery calls no provider")


def service(db: PgDatabase, run: PassRunner) -> DreamingService:
    return DreamingService(db, CONFIG, run, provider=no_provider)  # type: ignore[arg-type]


def terminate(url: str, pid: int) -> None:
    """End one server session, as the death of the daemon that held it would."""
    admin = connect_postgres(url)
    try:
        admin.execute("SELECT pg_terminate_backend(:pid, 5000)", {"pid": pid})
    finally:
        admin.close()


def release_all(*runners: PassRunner) -> None:
    """The locks of passes begun and never run (a daemon would run each to its end)."""
    for run in runners:
        for lock in run._locks.values():
            lock.release()


def held_lock(run: PassRunner, pass_id: str) -> SessionLock:
    lock = run._locks[pass_id]
    assert isinstance(lock, SessionLock)
    return lock


def test_two_daemons_starting_a_pass_for_one_agent_one_runs(
    daemons: tuple[PgDatabase, PgDatabase],
) -> None:
    """Eight threads on two daemons begin a pass for agent `a` at once: one begins, seven
    are told it is running; agent `b` is not held up. Once the pass ended, the other daemon
    may begin the next."""
    runners = [runner(db) for db in daemons]
    start = threading.Barrier(8)
    begun: list[str] = []
    refused: list[passes.PassAlreadyRunning] = []

    def trigger(run: PassRunner) -> None:
        start.wait()
        try:
            begun.append(run.begin("a", "incremental", "manual"))
        except passes.PassAlreadyRunning as exc:
            refused.append(exc)

    threads = [threading.Thread(target=trigger, args=(runners[n % 2],)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(begun) == 1 and len(refused) == 7
    assert {exc.pass_id for exc in refused} <= {begun[0], None}
    other = runners[1].begin("b", "incremental", "manual")  # another agent: its own lock

    owner = next(run for run in runners if begun[0] in run._locks)
    done = owner.run("a", begun[0], None)  # no evidence: completes without a provider
    assert done.status == "completed"
    follower = runners[0] if owner is runners[1] else runners[1]
    assert follower.begin("a", "incremental", "manual") != begun[0]
    assert other
    release_all(*runners)


def test_recovery_fails_only_a_dead_daemons_pass(
    daemons: tuple[PgDatabase, PgDatabase], pg_url: str
) -> None:
    """B's recovery leaves A's live pass running (A holds the lock); once A's session is gone
    (A killed), B's next sweep fails it as interrupted and B may run the agent's passes."""
    a, b = daemons
    run_a, run_b = runner(a), runner(b)
    pass_id = run_a.begin("a", "incremental", "manual")
    dreaming_b = service(b, run_b)
    assert dreaming_b.recover() == 0
    assert passes.running_pass_id(b.reader(), "a") == pass_id
    with pytest.raises(passes.PassAlreadyRunning):
        run_b.begin("a", "incremental", "manual")

    terminate(pg_url, held_lock(run_a, pass_id).pid)  # daemon A dies mid-pass
    assert dreaming_b.recover() == 1  # not only at start-up: every sweep on PostgreSQL
    stale = passes.get_pass(b.reader(), "a", pass_id)
    assert stale is not None and stale.status == "failed" and stale.error == INTERRUPTED
    assert run_b.begin("a", "incremental", "manual") != pass_id
    release_all(run_a, run_b)


def test_a_pass_whose_lock_was_lost_is_cancelled(pg_url: str) -> None:
    """The lock's session ends under a running pass (a server restart, a dropped connection):
    its cancellation is set, with its own summary, and stays set."""
    key = lock_key(passes.PASS_LOCK_NAMESPACE, "a")
    lock = SessionLock.try_acquire(pg_url, key, check_s=0.0)
    assert lock is not None and lock.intact()
    assert SessionLock.try_acquire(pg_url, key) is None  # another session: refused, no wait
    cancel = Cancellation(threading.Event(), threading.Event(), lock.intact)
    assert not cancel.is_set()
    terminate(pg_url, lock.pid)
    assert cancel.is_set() and cancel.is_set()
    assert cancel.summary == LOCK_LOST
    lock.release()  # quiet on a lost session
    again = SessionLock.try_acquire(pg_url, key)
    assert again is not None
    again.release()
