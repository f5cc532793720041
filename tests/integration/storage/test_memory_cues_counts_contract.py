"""What of `storage/memories.py` waited for migrations 0009 and 0017 on PostgreSQL, one test
body per backend (`backend`): a remember, an import and a content edit write memory_cues and
read the same cues back; count_live and memory_stats come from the maintained counters;
select_live matches ids, tags and the other criteria the same way."""

from __future__ import annotations

from datetime import date

from support.backends import Backend

from signet_desktop.domain.memory import MemorySelector, NewMemory
from signet_desktop.embedding.generations import create_vec_table, register_generation
from signet_desktop.embedding.vectors import VectorWrite, store_vectors, vector_blob
from signet_desktop.storage import memories
from signet_desktop.storage.memories import ImportedMemory
from signet_desktop.storage.memory_cues import cues_for

A, B = "agent-a", "agent-b"
SAID = "2023-05-08T10:00:00Z"


def remember(backend: Backend, memory_id: str, new: NewMemory) -> None:
    with backend.write() as conn:
        memories.insert_memory(conn, memory_id, new, actor="test", embedding_model=None)


def stored_cues(backend: Backend, memory_id: str) -> tuple[object, ...] | None:
    row = backend.conn.execute(
        "SELECT first_day, last_day, preference, first_person FROM memory_cues "
        "WHERE memory_id = :id",
        {"id": memory_id},
    ).fetchone()
    return None if row is None else tuple(row)


def test_a_remember_an_import_and_an_edit_write_the_same_cues(backend: Backend) -> None:
    remember(backend, "m1", NewMemory(A, "Yesterday I said I prefer green tea.", created_at=SAID))
    assert stored_cues(backend, "m1") == ("2023-05-07", "2023-05-07", "I prefer", 1)
    cues = cues_for(backend.conn, A, ["m1"])["m1"]
    assert cues.created == date(2023, 5, 8) and cues.first_person
    assert [(s.start, s.end) for s in cues.times] == [(date(2023, 5, 7), date(2023, 5, 7))]

    memory = memories.get_memory(backend.conn, A, "m1")
    assert memory is not None
    with backend.write() as conn:
        memories.update_memory_fields(conn, memory, {"content": "The build is green."}, actor="t")
    assert stored_cues(backend, "m1") == (None, None, None, 0)
    assert cues_for(backend.conn, A, ["m1"])["m1"].times == ()

    imported = ImportedMemory(
        id="m2",
        agent_id=A,
        content="Last week we decided to ship on Fridays.",
        created_at=SAID,
        updated_at=SAID,
        source_type="import",
        source_id="src",
    )
    with backend.write() as conn:
        memories.insert_imported(conn, imported)
    first, last, preference, _ = stored_cues(backend, "m2") or ()
    assert (first, last, preference) == ("2023-05-01", "2023-05-07", "we decided")
    assert cues_for(backend.conn, B, ["m1", "m2"]) == {}  # another agent reads none


def test_count_live_and_memory_stats_come_from_the_counters(backend: Backend) -> None:
    for index in range(4):
        remember(backend, f"m{index}", NewMemory(A, f"fact number {index}", pinned=index == 0))
    remember(backend, "other", NewMemory(B, "someone else's fact"))
    memory = memories.get_memory(backend.conn, A, "m3")
    assert memory is not None
    with backend.write() as conn:
        memories.set_deleted(conn, memory, deleted=True, reason="test", actor="t")
        generation = register_generation(conn, provider="test", model="m", dimensions=4)
        create_vec_table(conn, generation)
        writes = []
        for memory_id in ("m0", "m1", "m3"):
            found = memories.get_memory(conn, A, memory_id)
            assert found is not None
            blob = vector_blob([1.0, 0.0, 0.0, float(len(writes))], 4)
            writes.append(VectorWrite(A, found.id, found.content_hash, blob))
        store_vectors(conn, generation, writes, mirror=True)
    assert memories.count_live(backend.conn, A) == 3
    assert memories.count_live(backend.conn, B) == 1
    stats = memories.memory_stats(backend.conn, A)
    assert (stats.total, stats.with_embeddings, stats.critical) == (3, 2, 1)


def test_select_live_matches_ids_tags_and_criteria_alike(backend: Backend) -> None:
    remember(backend, "m1", NewMemory(A, "first", tags=("db", "ops"), type="decision", who="ana"))
    remember(backend, "m2", NewMemory(A, "second", tags=("db",), who="ana"))
    remember(backend, "m3", NewMemory(A, "third"))
    remember(backend, "b1", NewMemory(B, "theirs", tags=("db",)))

    def ids(selector: MemorySelector) -> list[str]:
        return sorted(m.id for m in memories.select_live(backend.conn, A, selector))

    assert ids(MemorySelector(tags=("db",))) == ["m1", "m2"]
    assert ids(MemorySelector(tags=("db", "ops"))) == ["m1"]
    assert ids(MemorySelector(tags=("nope",))) == []
    assert ids(MemorySelector(ids=("m1", "m3", "b1"))) == ["m1", "m3"]
    assert ids(MemorySelector(ids=("m2",), tags=("db",), who="ana")) == ["m2"]
    assert ids(MemorySelector(type="decision")) == ["m1"]
    assert len(ids(MemorySelector(limit=2))) == 2
