"""The memories capability, one test body on SQLite and on PostgreSQL (`backend`).

Remember and read back, dedupe by content hash, soft delete, a lexical search and a vector
search; agent B never reads or changes agent A's rows through any of them.
"""

from __future__ import annotations

import dataclasses
import threading

import numpy as np
import pytest
from support.backends import Backend

from signet_desktop.domain.memory import Memory, NewMemory
from signet_desktop.domain.recall import RecallFilters
from signet_desktop.embedding.generations import create_vec_table, register_generation
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.embedding.vectors import VectorWrite, store_vectors, vector_blob
from signet_desktop.recall.knn import nearest
from signet_desktop.recall.lexical import lexical_search
from signet_desktop.recall.vector_gaps import VectorGaps
from signet_desktop.storage import errors, memories
from signet_desktop.storage.postgres.connect import PgConnection, connect_postgres

A, B = "agent-a", "agent-b"
DIMS = 384


def remember(backend: Backend, memory_id: str, new: NewMemory) -> Memory:
    with backend.write() as conn:
        memories.insert_memory(conn, memory_id, new, actor="test", embedding_model=None)
    found = memories.get_memory(backend.conn, new.agent_id, memory_id)
    assert found is not None
    return found


def test_a_remembered_memory_reads_back_field_for_field(backend: Backend) -> None:
    new = NewMemory(
        agent_id=A,
        content="The billing service moved to Postgres 18 — résumé in #infra",
        type="decision",
        importance=0.8,
        pinned=True,
        tags=("billing", "db"),
        who="ana",
        project="ledger",
        source_type="manual",
        source_id="note-1",
        session_id="s1",
        metadata={"origin": "test", "n": 3, "nested": {"ok": True}},
    )
    got = remember(backend, "m1", new)
    assert (got.content, got.type, got.importance, got.pinned) == (
        new.content,
        "decision",
        0.8,
        True,
    )
    assert got.tags == ("billing", "db") and got.metadata == new.metadata
    assert (got.who, got.project, got.source_id, got.session_id) == (
        "ana",
        "ledger",
        "note-1",
        "s1",
    )
    assert (got.version, got.is_deleted, got.visibility) == (1, False, "global")
    assert memories.list_memories(backend.conn, A, 10, 0) == [got]
    assert memories.get_memories(backend.conn, A, ["m1", "absent"]) == {"m1": got}


def test_dedupe_by_hash_within_the_scope_and_only_while_live(backend: Backend) -> None:
    first = remember(backend, "m1", NewMemory(agent_id=A, content="Deploys happen on Tuesdays"))
    again = NewMemory(agent_id=A, content="  deploys happen on TUESDAYS ")
    assert memories.find_duplicate(backend.conn, again) == first
    private = dataclasses.replace(again, visibility="private")
    assert memories.find_duplicate(backend.conn, private) is None
    assert memories.find_duplicate(backend.conn, dataclasses.replace(again, scope="x")) is None
    with pytest.raises(backend.integrity_error), backend.write() as conn:
        memories.insert_memory(conn, "m2", again, actor="test", embedding_model=None)
    assert memories.get_memory(backend.conn, A, "m2") is None  # rolled back
    with backend.write() as conn:
        memories.set_deleted(conn, first, deleted=True, reason="stale", actor="test")
    assert memories.find_duplicate(backend.conn, again) is None
    remember(backend, "m2", again)  # a deleted row no longer holds the hash


def test_dedupe_by_source_then_idempotency_key(backend: Backend) -> None:
    by_source = remember(
        backend, "m1", NewMemory(agent_id=A, content="one", source_type="doc", source_id="d1")
    )
    keyed = remember(backend, "m2", NewMemory(agent_id=A, content="two", idempotency_key="k2"))
    same_source = NewMemory(agent_id=A, content="other", source_type="doc", source_id="d1")
    assert memories.find_duplicate(backend.conn, same_source) == by_source
    other_type = dataclasses.replace(same_source, source_type="chat")
    assert memories.find_duplicate(backend.conn, other_type) is None
    same_key = NewMemory(agent_id=A, content="three", idempotency_key="k2")
    assert memories.find_duplicate(backend.conn, same_key) == keyed


def test_soft_delete_hides_the_row_from_live_reads_and_recover_returns_it(
    backend: Backend,
) -> None:
    kept = remember(backend, "m1", NewMemory(agent_id=A, content="kept"))
    gone = remember(backend, "m2", NewMemory(agent_id=A, content="gone"))
    with backend.write() as conn:
        memories.set_deleted(conn, gone, deleted=True, reason="wrong", actor="ana")
    deleted = memories.get_memory(backend.conn, A, "m2")
    assert deleted is not None and deleted.is_deleted and deleted.version == 2
    assert memories.list_memories(backend.conn, A, 10, 0) == [kept]
    assert memories.get_memories(backend.conn, A, ["m1", "m2"]) == {"m1": kept}
    with backend.write() as conn:
        memories.set_deleted(conn, deleted, deleted=False, reason=None, actor="ana")
    assert {m.id for m in memories.list_memories(backend.conn, A, 10, 0)} == {"m1", "m2"}


def test_agent_b_reads_and_changes_nothing_of_agent_a(backend: Backend) -> None:
    mine = remember(
        backend,
        "m1",
        NewMemory(
            agent_id=A,
            content="agent A's secret plan",
            source_type="doc",
            source_id="d1",
            idempotency_key="k1",
        ),
    )
    assert memories.get_memory(backend.conn, B, "m1") is None
    for probe in (
        NewMemory(agent_id=B, content="other", source_type="doc", source_id="d1"),
        NewMemory(agent_id=B, content="other", idempotency_key="k1"),
    ):
        assert memories.find_duplicate(backend.conn, probe) is None
    assert memories.get_memories(backend.conn, B, ["m1"]) == {}
    assert memories.list_memories(backend.conn, B, 10, 0) == []
    twin = NewMemory(agent_id=B, content="agent A's secret plan")
    assert memories.find_duplicate(backend.conn, twin) is None
    assert lexical_search(backend.conn, "secret plan", B, RecallFilters()) == []
    impostor = dataclasses.replace(mine, agent_id=B)
    with backend.write() as conn:
        memories.set_deleted(conn, impostor, deleted=True, reason="x", actor="b")
    assert memories.get_memory(backend.conn, A, "m1") == mine  # untouched
    remember(backend, "m2", twin)  # B's own copy is no duplicate of A's


def test_lexical_search_ranks_the_closer_match_first(backend: Backend) -> None:
    texts = {
        "both": "postgres replication needs a standby and a replication slot",
        "one": "we tuned postgres memory settings last week",
        "none": "the cat sat on the mat",
        "deleted": "postgres replication notes, replaced",
    }
    for memory_id, text in texts.items():
        remember(backend, memory_id, NewMemory(agent_id=A, content=text))
    gone = memories.get_memory(backend.conn, A, "deleted")
    assert gone is not None
    with backend.write() as conn:
        memories.set_deleted(conn, gone, deleted=True, reason="old", actor="t")
    hits = lexical_search(backend.conn, "postgres replication?", A, RecallFilters())
    assert [h.memory_id for h in hits] == ["both", "one"]
    assert [h.evidence.rank for h in hits] == [1, 2]
    assert 1.0 >= hits[0].evidence.score > hits[1].evidence.score > 0
    tagged = lexical_search(backend.conn, "postgres", A, RecallFilters(tags=("none",)))
    assert tagged == []
    assert lexical_search(backend.conn, "?!", A, RecallFilters()) == []


def test_vector_search_finds_nearest_neighbours_in_scope(backend: Backend) -> None:
    rng = np.random.default_rng(7)
    base = rng.standard_normal((20, DIMS)).astype(np.float32)
    with backend.write() as conn:
        generation = register_generation(conn, provider="test", model="m", dimensions=DIMS)
        create_vec_table(conn, generation)
    writes = []
    for i, row in enumerate(base):
        agent = A if i < 15 else B
        memory = remember(backend, f"m{i}", NewMemory(agent_id=agent, content=f"memory {i}"))
        writes.append(VectorWrite(agent, memory.id, memory.content_hash, vector_blob(row, DIMS)))
    with backend.write() as conn:
        store_vectors(conn, generation, writes, mirror=True)
    query = base[3] + 0.05 * rng.standard_normal(DIMS).astype(np.float32)
    query /= np.linalg.norm(query)
    found = nearest(backend.conn, generation, query, A, RecallFilters(), k=5)
    assert found[0][0] == "m3" and found[0][1] > 0.95
    assert len(found) == 5 and all(int(mid[1:]) < 15 for mid, _ in found)
    cosines = base[:15] @ query / np.linalg.norm(base[:15], axis=1)
    expected = [f"m{i}" for i in np.argsort(-cosines)[:5]]
    assert [mid for mid, _ in found] == expected
    near_b = nearest(
        backend.conn, generation, base[17] / np.linalg.norm(base[17]), B, RecallFilters()
    )
    assert {mid for mid, _ in near_b} == {"m15", "m16", "m17", "m18", "m19"}
    m3 = memories.get_memory(backend.conn, A, "m3")
    assert m3 is not None
    with backend.write() as conn:
        memories.set_deleted(conn, m3, deleted=True, reason="x", actor="t")
    assert "m3" not in {
        mid for mid, _ in nearest(backend.conn, generation, query, A, RecallFilters())
    }


def test_a_percent_sign_and_a_colon_in_values_and_literals_survive(backend: Backend) -> None:
    text = "100% sure: ratio is 3:1 and 'quoted' %(name)s"
    remember(backend, "m1", NewMemory(agent_id=A, content=text, tags=("50%",)))
    row = backend.conn.execute(
        "SELECT content, '%:literal' AS lit FROM memories WHERE content LIKE '%' || :w || '%'",
        {"w": "3:1"},
    ).fetchone()
    assert (row["content"], row["lit"]) == (text, "%:literal")


def test_id_list_statements_taken_ids_model_and_purge(backend: Backend) -> None:
    remember(backend, "m1", NewMemory(agent_id=A, content="one"))
    remember(backend, "m2", NewMemory(agent_id=A, content="two"))
    remember(backend, "m3", NewMemory(agent_id=B, content="three"))
    assert memories.taken_ids(backend.conn, ["m1", "m3", "m9"]) == {"m1", "m3"}  # ids are global
    with backend.write() as conn:
        memories.set_embedding_model(conn, ["m1", "m2"], "minilm")
    assert {m.embedding_model for m in memories.list_memories(backend.conn, A, 10, 0)} == {"minilm"}
    with backend.write() as conn:
        assert memories.delete_memories(conn, B, ["m1", "m2"]) == 0  # not B's to purge
        assert memories.delete_memories(conn, A, ["m1", "m3"]) == 1
    assert memories.taken_ids(backend.conn, ["m1", "m2", "m3"]) == {"m2", "m3"}


@pytest.mark.postgres
def test_two_postgres_writers_remembering_the_same_text_keep_one_row(pg_url: str) -> None:
    """Two daemons may both see no duplicate and insert: the partial unique index keeps one
    (SQLite's single writer never gets here; the service will have to answer `deduped`)."""
    conns = [connect_postgres(pg_url) for _ in range(2)]
    both_checked = threading.Barrier(2, timeout=30)
    outcomes: list[str] = []

    def remember_once(conn: PgConnection, memory_id: str) -> None:
        new = NewMemory(agent_id=A, content="the same fact, said twice")
        conn.execute("BEGIN")
        try:
            assert memories.find_duplicate(conn, new) is None
            both_checked.wait()
            memories.insert_memory(conn, memory_id, new, actor="t", embedding_model=None)
            conn.execute("COMMIT")
            outcomes.append("inserted")
        except errors.UniqueViolation:
            conn.execute("ROLLBACK")
            outcomes.append("refused")

    threads = [
        threading.Thread(target=remember_once, args=(conn, f"m{i}")) for i, conn in enumerate(conns)
    ]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert sorted(outcomes) == ["inserted", "refused"]
        assert len(memories.list_memories(conns[0], A, 10, 0)) == 1
    finally:
        for conn in conns:
            conn.close()


def test_candidates_without_a_vector_are_embedded_on_recall(backend: Backend) -> None:
    """Recall while vectors lag (a busy machine): the candidates without one are found and
    scored by `VectorGaps.fill` on both backends (its id list was json_each-only once)."""
    embedder = HashEmbedder(DIMS)
    with backend.write() as conn:
        generation = register_generation(conn, provider="test", model="m", dimensions=DIMS)
        create_vec_table(conn, generation)
    done = remember(backend, "v1", NewMemory(agent_id=A, content="billing runs on postgres"))
    remember(backend, "v2", NewMemory(agent_id=A, content="deploys happen on tuesdays"))
    vector = embedder.embed([done.content])[0]
    write = VectorWrite(A, done.id, done.content_hash, vector_blob(vector, DIMS))
    with backend.write() as conn:
        store_vectors(conn, generation, [write], mirror=True)
    query = embedder.embed(["deploys happen on tuesdays"])[0]
    filled = VectorGaps(embedder, budget_ms=60_000).fill(
        backend.conn, generation, query, ["v1", "v2", "absent"]
    )
    assert filled.missing == 1 and filled.left == 0
    assert [mid for mid, _ in filled.scored] == ["v2"] and filled.scored[0][1] > 0.99
