"""Two daemons logging graph mutations at once on PostgreSQL: `graph_mutations.seq` stays
global, unique and in commit order (storage/graph_rows.py: log_mutation takes the SEQ_LOCK lock).
Without the lock both transactions read the same MAX(seq) and the second fails on the unique
index once the first commits. Two `PgDatabase` handles are two daemons."""

from __future__ import annotations

import threading

import pytest

from signet_desktop.domain.knowledge import Provenance
from signet_desktop.storage.graph_rows import log_mutation
from signet_desktop.storage.postgres.database import PgDatabase

pytestmark = pytest.mark.postgres


def test_overlapping_transactions_take_the_next_seq_in_commit_order(
    daemons: tuple[PgDatabase, PgDatabase],
) -> None:
    a, b = daemons
    logged_on_a, b_started = threading.Event(), threading.Event()
    seqs: dict[str, int] = {}
    errors: list[BaseException] = []

    def first() -> None:
        try:
            with a.write() as conn:
                seqs["a"] = log_mutation(
                    conn, Provenance("daemon-a", "x"), "create", "entities", "e-a", None, {"n": 1}
                ).seq
                logged_on_a.set()
                b_started.wait(10)  # b is inside its transaction before a commits
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    thread = threading.Thread(target=first)
    thread.start()
    assert logged_on_a.wait(10)
    with b.write() as conn:
        b_started.set()
        seqs["b"] = log_mutation(
            conn, Provenance("daemon-b", "y"), "create", "entities", "e-b", None, {"n": 2}
        ).seq
    thread.join(10)
    assert not errors
    assert seqs == {"a": 1, "b": 2}
    rows = a.reader().execute("SELECT seq, actor FROM graph_mutations ORDER BY seq").fetchall()
    assert [(r["seq"], r["actor"]) for r in rows] == [(1, "daemon-a"), (2, "daemon-b")]


def test_many_writers_leave_no_gap_and_no_duplicate(
    daemons: tuple[PgDatabase, PgDatabase],
) -> None:
    errors: list[BaseException] = []

    def writer(db: PgDatabase, name: str) -> None:
        try:
            for i in range(25):
                with db.write() as conn:
                    prov = Provenance(name, name)
                    log_mutation(conn, prov, "create", "entities", f"{name}-{i}", None, {"i": i})
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [
        threading.Thread(target=writer, args=(db, f"{side}{n}"))
        for side, db in zip("ab", daemons, strict=True)
        for n in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    reader = daemons[0].reader()
    seqs = [int(r[0]) for r in reader.execute("SELECT seq FROM graph_mutations ORDER BY seq")]
    assert seqs == list(range(1, 101))
