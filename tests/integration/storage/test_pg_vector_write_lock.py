"""Two daemons writing vectors for one agent at once on PostgreSQL (found by the two-daemon
test under load as `deadlock detected`).

Each embeddings row's counter trigger updates its agent's memory_vector_counts row. Daemon A
wrote a vector (so held that row) and then one for a memory daemon B had just embedded too;
B's row waited on A's counter row, A's on B's row. `store_vectors` now takes a transaction
advisory lock per (generation, agent) first: B waits at the lock, A finishes, B replaces A's
vector. Here the interleaving is forced with two connections; before the lock one of them
failed with "deadlock detected".
"""

from __future__ import annotations

import struct
import threading

import pytest
from support.schema_rows import memory

from signet_desktop.embedding.generations import register_generation
from signet_desktop.embedding.vectors import VectorWrite, store_vectors
from signet_desktop.storage.postgres.database import PgDatabase

pytestmark = pytest.mark.postgres

WAIT_S = 60.0  # bounds against a hang at load 20, not a speed check


def write(source_id: str) -> VectorWrite:
    return VectorWrite("a", source_id, f"h-{source_id}", struct.pack("<2f", 0.6, 0.8))


def test_two_overlapping_vector_batches_of_one_agent_do_not_deadlock(pg_url: str) -> None:
    first, second = PgDatabase(pg_url), PgDatabase(pg_url)
    try:
        with first.write() as conn:
            for source_id in ("m0", "m1"):
                memory(conn, source_id)
            generation = register_generation(conn, provider="p", model="m", dimensions=2)
        a_holds_the_counter, b_started = threading.Event(), threading.Event()
        failures: list[BaseException] = []

        def daemon_a() -> None:
            try:
                with first.write() as conn:
                    store_vectors(conn, generation, [write("m0")], mirror=False)
                    a_holds_the_counter.set()
                    assert b_started.wait(WAIT_S)
                    threading.Event().wait(0.5)  # B is inside its write by now
                    store_vectors(conn, generation, [write("m1")], mirror=False)
            except BaseException as exc:
                failures.append(exc)

        def daemon_b() -> None:
            try:
                assert a_holds_the_counter.wait(WAIT_S)
                with second.write() as conn:
                    b_started.set()
                    store_vectors(conn, generation, [write("m1")], mirror=False)
            except BaseException as exc:
                failures.append(exc)

        threads = [threading.Thread(target=daemon_a), threading.Thread(target=daemon_b)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WAIT_S * 2)
        assert not any(t.is_alive() for t in threads)
        assert failures == []
        rows = (
            first.reader().execute("SELECT source_id FROM embeddings ORDER BY source_id").fetchall()
        )
        assert [r[0] for r in rows] == ["m0", "m1"]
        counted = (
            first.reader()
            .execute("SELECT embedded FROM memory_vector_counts WHERE agent_id = 'a'")
            .fetchone()
        )
        assert counted[0] == 2
    finally:
        first.close()
        second.close()
