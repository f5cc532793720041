"""The maintained counters (migrations/0009) agree with the tables after every kind of write."""

from __future__ import annotations

import random

import numpy as np

from signet_desktop.domain.memory import Actor, MemoryPatch
from signet_desktop.embedding.index import VectorIndex
from signet_desktop.embedding.vectors import VectorWrite, delete_source_vectors
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.storage import counters, memories
from signet_desktop.storage.database import Database

ACTOR = Actor(changed_by="tester")


def vector_for(db: Database, index: VectorIndex, memory_ids: list[str]) -> None:
    generation = index.ensure_generation(provider="hash", model="hash-8", dimensions=8)
    with db.write() as conn:
        writes = []
        for memory_id in memory_ids:
            row = conn.execute("SELECT content_hash FROM memories WHERE id = ?", (memory_id,))
            vector = np.full(8, 1 / np.sqrt(8), dtype=np.float32)
            writes.append(VectorWrite("default", memory_id, row.fetchone()[0], vector.tobytes()))
        index.store(conn, generation, writes)


def no_drift(db: Database) -> None:
    assert counters.recount(db.reader(), repair=False).drifted == ()


def test_counters_follow_remember_pin_forget_recover_modify_and_purge(db: Database) -> None:
    service, index = MemoryService(db), VectorIndex(db)
    a = service.remember(RememberRequest(content="alpha fact", pinned=True), ACTOR).memory
    b = service.remember(RememberRequest(content="beta fact"), ACTOR).memory
    service.remember(RememberRequest(content="other agent", agent_id="other"), ACTOR)
    vector_for(db, index, [a.id, b.id])
    conn = db.reader()
    assert counters.agent_counts(conn, "default") == counters.MemoryCounts(2, 1, 0)
    assert counters.agent_embedded(conn, "default") == 2
    assert counters.all_counts(conn).live == 3
    service.forget("default", a.id, reason="t", force=True, actor=ACTOR)
    assert counters.agent_counts(conn, "default") == counters.MemoryCounts(1, 0, 1)
    assert counters.agent_embedded(conn, "default") == 1
    service.recover("default", a.id, reason="t", if_version=None, actor=ACTOR)
    assert counters.agent_counts(conn, "default") == counters.MemoryCounts(2, 1, 0)
    assert counters.agent_embedded(conn, "default") == 2
    # New content: the old vector is no longer current.
    with db.write() as wconn:
        memories.update_memory_fields(wconn, b, {"content": "beta fact, revised"}, actor="t")
    assert counters.agent_embedded(conn, "default") == 1
    with db.write() as wconn:
        delete_source_vectors(wconn, [a.id])
    assert counters.agent_embedded(conn, "default") == 0
    with db.write() as wconn:
        memories.delete_memories(wconn, "default", [a.id])
    assert counters.agent_counts(conn, "default") == counters.MemoryCounts(1, 0, 0)
    no_drift(db)


def test_random_writes_never_drift(db: Database) -> None:
    service, index = MemoryService(db), VectorIndex(db)
    rng = random.Random(4)
    ids: list[str] = []
    for n in range(60):
        op = rng.choice(["remember", "remember", "forget", "recover", "pin", "vector", "purge"])
        if op == "remember" or not ids:
            request = RememberRequest(content=f"fact {n}", pinned=rng.random() < 0.3)
            ids.append(service.remember(request, ACTOR).memory.id)
            continue
        memory_id = rng.choice(ids)
        memory = memories.get_memory(db.reader(), "default", memory_id)
        if memory is None:
            continue
        if op == "forget" and not memory.is_deleted:
            service.forget("default", memory_id, reason="t", force=True, actor=ACTOR)
        elif op == "recover" and memory.is_deleted:
            service.recover("default", memory_id, reason="t", if_version=None, actor=ACTOR)
        elif op == "pin" and not memory.is_deleted:
            patch = MemoryPatch(pinned=not memory.pinned)
            service.modify("default", memory_id, patch, reason="t", if_version=None, actor=ACTOR)
        elif op == "vector":
            vector_for(db, index, [memory_id])
        elif op == "purge":
            with db.write() as conn:
                delete_source_vectors(conn, [memory_id])
                memories.delete_memories(conn, "default", [memory_id])
    no_drift(db)


def test_recount_repairs_a_drifted_row(db: Database) -> None:
    MemoryService(db).remember(RememberRequest(content="one"), ACTOR)
    with db.write() as conn:
        conn.execute("UPDATE memory_counts SET pinned = 7")
        conn.execute("INSERT INTO memory_counts (agent_id, live) VALUES ('ghost', 3)")
        report = counters.recount(conn, repair=True)
    assert set(report.drifted) == {"memory_counts:default", "memory_counts:ghost"}
    no_drift(db)
