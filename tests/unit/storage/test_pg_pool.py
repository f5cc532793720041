"""storage/postgres/pool.py without a server: the size limit, what is kept, what is closed."""

from __future__ import annotations

import threading
from typing import Any, cast

import pytest

from signet_desktop.storage.errors import DatabaseUnavailable
from signet_desktop.storage.postgres.connect import PgConnection
from signet_desktop.storage.postgres.pool import ConnectionPool, PoolClosed


class FakeConnection:
    def __init__(self) -> None:
        self.closed = False
        self.broken = False
        self.in_transaction = False

    def close(self) -> None:
        self.closed = True


def pool_of(size: int) -> tuple[ConnectionPool, list[FakeConnection]]:
    made: list[FakeConnection] = []

    def connect() -> PgConnection:
        made.append(FakeConnection())
        return cast(PgConnection, made[-1])

    return ConnectionPool(connect, size), made


def fake(conn: Any) -> FakeConnection:
    return cast(FakeConnection, conn)


def test_connections_open_lazily_and_are_reused() -> None:
    pool, made = pool_of(2)
    assert made == [] and pool.open_count == 0
    first = pool.take()
    pool.give(first)
    assert pool.take() is first and len(made) == 1


def test_a_full_pool_waits_for_a_connection_given_back() -> None:
    pool, made = pool_of(1)
    held = pool.take()
    with pytest.raises(DatabaseUnavailable, match="no PostgreSQL connection free"):
        pool.take(wait_s=0.05)
    got: list[Any] = []
    waiter = threading.Thread(target=lambda: got.append(pool.take(wait_s=10)))
    waiter.start()
    pool.give(held)
    waiter.join(timeout=10)
    assert got == [held] and len(made) == 1


def test_lost_or_mid_transaction_connections_are_closed_not_kept() -> None:
    pool, _made = pool_of(3)
    lost, busy, healthy = pool.take(), pool.take(), pool.take()
    fake(lost).broken = True
    fake(busy).in_transaction = True
    for conn in (lost, busy, healthy):
        pool.give(conn)
    assert fake(lost).closed and fake(busy).closed and not fake(healthy).closed
    assert pool.open_count == 1
    pool.drop_idle()
    assert fake(healthy).closed and pool.open_count == 0


def test_a_failed_connect_frees_its_place() -> None:
    def refuse() -> PgConnection:
        raise DatabaseUnavailable("connection refused")

    pool = ConnectionPool(refuse, 1)
    for _ in range(3):
        with pytest.raises(DatabaseUnavailable):
            pool.take(wait_s=0.05)
    assert pool.open_count == 0


def test_close_refuses_borrowers_and_closes_what_comes_back() -> None:
    pool, _made = pool_of(2)
    borrowed, idle = pool.take(), pool.take()
    pool.give(idle)
    pool.close()
    assert fake(idle).closed and not fake(borrowed).closed
    with pytest.raises(PoolClosed):
        pool.take()
    pool.give(borrowed)
    assert fake(borrowed).closed and pool.open_count == 0
