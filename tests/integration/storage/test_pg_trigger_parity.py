"""The triggers migrations 0002-0017 declare have the same effects on SQLite and on
PostgreSQL (`backend`: one test body per backend): the memory and vector counters of 0009
and the mention counter of 0012 hold the same numbers after the same writes, and each
generated tsvector column finds what its FTS5 table finds (stemming, folded accents, words
split at every non-alphanumeric character)."""

from __future__ import annotations

import struct

import pytest
from support.backends import Backend
from support.schema_rows import TS, count, entity, memory

from signet_desktop.storage import counters
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.postgres.connect import PgConnection


def vector(backend: Backend, values: tuple[float, float]) -> object:
    """A 2-dimension vector as each backend stores it: a float32 blob, pgvector text."""
    if backend.name == "sqlite":
        return struct.pack("<2f", *values)
    return f"[{values[0]},{values[1]}]"


def counter_rows(conn: Connection) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    kept = conn.execute("SELECT agent_id, live, pinned, deleted FROM memory_counts ORDER BY 1")
    vectors = conn.execute(
        "SELECT agent_id, embedded FROM memory_vector_counts WHERE embedded <> 0 ORDER BY 1"
    )
    return [tuple(r) for r in kept.fetchall()], [tuple(r) for r in vectors.fetchall()]


def test_the_memory_and_vector_counters_follow_the_same_writes(backend: Backend) -> None:
    conn = backend.conn
    conn.execute(
        "INSERT INTO embedding_generations (provider, model, dimensions, vec_table, created_at) "
        f"VALUES ('p', 'm', 2, 'vec_m_2', '{TS}')"
    )
    generation = count(conn, "SELECT id FROM embedding_generations")

    def embed(source_id: str, content_hash: str) -> None:
        conn.execute(
            "INSERT INTO embeddings (agent_id, generation_id, source_id, content_hash, model, "
            "dimensions, vector, created_at) VALUES ('x', :g, :s, :h, 'm', 2, :v, :t)",
            {
                "g": generation,
                "s": source_id,
                "h": content_hash,
                "v": vector(backend, (0.5, 0.25)),
                "t": TS,
            },
        )

    memory(conn, "m1", pinned=1)
    memory(conn, "m2")
    memory(conn, "m3")
    memory(conn, "m4", agent="b")
    assert counter_rows(conn) == ([("a", 3, 1, 0), ("b", 1, 0, 0)], [])
    embed("m1", "h-m1")
    embed("m2", "old")  # not m2's current text: not counted
    embed("m4", "h-m4")
    assert counter_rows(conn)[1] == [("a", 1), ("b", 1)]
    conn.execute("UPDATE memories SET content_hash = 'old' WHERE id = 'm2'")
    assert counter_rows(conn)[1] == [("a", 2), ("b", 1)]
    conn.execute("UPDATE memories SET is_deleted = 1 WHERE id = 'm1'")
    assert counter_rows(conn) == ([("a", 2, 0, 1), ("b", 1, 0, 0)], [("a", 1), ("b", 1)])
    conn.execute("UPDATE memories SET agent_id = 'a' WHERE id = 'm4'")
    assert counter_rows(conn) == ([("a", 3, 0, 1), ("b", 0, 0, 0)], [("a", 2)])
    conn.execute("UPDATE memories SET pinned = 1 WHERE id = 'm3'")
    conn.execute("DELETE FROM embeddings WHERE source_id = 'm2'")
    assert counter_rows(conn) == ([("a", 3, 1, 1), ("b", 0, 0, 0)], [("a", 1)])
    conn.execute("UPDATE embeddings SET content_hash = 'stale' WHERE source_id = 'm4'")
    conn.execute("DELETE FROM memories WHERE id IN ('m1', 'm3')")
    assert counter_rows(conn) == ([("a", 2, 0, 0), ("b", 0, 0, 0)], [])
    assert counters.recount(conn, repair=False).drifted == ()


def test_the_mention_counter_follows_links_moves_and_cascades(backend: Backend) -> None:
    conn = backend.conn
    for entity_id in ("e1", "e2"):
        entity(conn, entity_id)
    for memory_id in ("m1", "m2", "m3"):
        memory(conn, memory_id)

    def link(memory_id: str, entity_id: str) -> None:
        conn.execute(
            "INSERT INTO memory_entity_mentions (memory_id, entity_id, created_at) "
            "VALUES (:m, :e, :t)",
            {"m": memory_id, "e": entity_id, "t": TS},
        )

    def mentions() -> dict[str, int]:
        rows = conn.execute("SELECT id, mentions FROM entities ORDER BY id").fetchall()
        return {str(r[0]): int(r[1]) for r in rows}

    link("m1", "e1")
    link("m2", "e1")
    link("m3", "e2")
    assert mentions() == {"e1": 2, "e2": 1}
    conn.execute("UPDATE memory_entity_mentions SET entity_id = 'e2' WHERE memory_id = 'm2'")
    assert mentions() == {"e1": 1, "e2": 2}
    conn.execute("DELETE FROM memories WHERE id = 'm1'")  # its link goes by cascade
    assert mentions() == {"e1": 0, "e2": 2}
    conn.execute("UPDATE entities SET mentions = 0 WHERE id = 'e2'")
    conn.execute("DELETE FROM memory_entity_mentions WHERE memory_id = 'm3'")
    assert mentions() == {"e1": 0, "e2": 0}  # never below zero


# Each FTS5 table, the PostgreSQL column standing for it, its text search configuration and
# the key its rows are found by.
FULL_TEXT = {
    "memories": ("content_tsv", "signet_porter", "id"),
    "session_transcripts": ("content_tsv", "signet_unicode61", "session_key"),
    "memory_artifacts": ("content_tsv", "signet_unicode61", "source_path"),
    "memory_hints": ("hint_tsv", "signet_unicode61", "hint"),
    "transcript_turns": ("text_tsv", "signet_porter", "text"),
}


def full_text(backend: Backend, table: str, query: str) -> set[str]:
    column, config, key = FULL_TEXT[table]
    if backend.name == "sqlite":
        sql = (
            f"SELECT t.{key} FROM {table}_fts f JOIN {table} t ON t.seq = f.rowid "
            f"WHERE {table}_fts MATCH :q"
        )
    else:
        sql = f"SELECT {key} FROM {table} WHERE {column} @@ plainto_tsquery('{config}', :q)"
    return {str(r[0]) for r in backend.conn.execute(sql, {"q": query}).fetchall()}


def test_the_full_text_columns_find_what_fts5_finds(backend: Backend) -> None:
    conn = backend.conn
    memory(conn, "m1", content="We researched the caching layer of v2.1")
    memory(conn, "m2", content="Research notes about Café culture in São Paulo")
    memory(conn, "m3", content="Nothing to see; snake_case and e-mail ana@example.org")
    for key, content in (("s1", "The résumé was sent"), ("s2", "They researched things")):
        conn.execute(
            "INSERT INTO session_transcripts (session_key, content, created_at, updated_at) "
            "VALUES (:k, :c, :t, :t)",
            {"k": key, "c": content, "t": TS},
        )
    conn.execute(
        "INSERT INTO memory_artifacts (source_path, content_hash, source_kind, session_token, "
        "captured_at, content, created_at, updated_at) VALUES "
        "('notes/gamma-ray.md', 'h', 'summary', 'tok', :t, 'alpha beta', :t, :t)",
        {"t": TS},
    )
    conn.execute(
        "INSERT INTO memory_hints (memory_id, hint, created_at) VALUES "
        "('m1', 'which cache did we pick', :t), ('m2', 'where is the café', :t)",
        {"t": TS},
    )
    seq = count(conn, "SELECT seq FROM session_transcripts WHERE session_key = 's1'")
    conn.execute(
        "INSERT INTO transcript_turns (session_seq, ordinal, role, text) VALUES "
        "(:s, 0, 'user', 'I keep running late'), (:s, 1, 'assistant', 'Runs are scheduled')",
        {"s": seq},
    )
    expected = {
        ("memories", "research"): {"m1", "m2"},
        ("memories", "researching"): {"m1", "m2"},  # stemmed on both sides
        ("memories", "cafe"): {"m2"},  # accents folded
        ("memories", "sao paulo"): {"m2"},
        ("memories", "caching layer"): {"m1"},
        ("memories", "v2"): {"m1"},
        ("memories", "example"): {"m3"},  # an e-mail address is words, as in unicode61
        ("memories", "case"): {"m3"},
        ("memories", "the"): {"m1"},  # no stop words
        ("session_transcripts", "resume"): {"s1"},
        ("session_transcripts", "research"): set(),  # not stemmed
        ("session_transcripts", "researched"): {"s2"},
        ("memory_artifacts", "gamma"): {"notes/gamma-ray.md"},  # the path's words
        ("memory_artifacts", "beta"): {"notes/gamma-ray.md"},
        ("memory_hints", "cafe"): {"where is the café"},
        ("memory_hints", "cache"): {"which cache did we pick"},
        ("transcript_turns", "run"): {"I keep running late", "Runs are scheduled"},
        ("transcript_turns", "schedule"): {"Runs are scheduled"},
    }
    found = {key: full_text(backend, *key) for key in expected}
    assert found == expected


@pytest.mark.postgres
def test_a_transcript_past_a_tsvectors_bound_is_stored_its_start_indexed(
    pg_conn: PgConnection,
) -> None:
    # The worst case for a tsvector: every word new, every character a letter of four bytes
    # (CJK Extension B), 1.2 M characters in all.
    words = [chr(0x20000 + i % 40_000) + chr(0x20000 + i // 40_000) for i in range(400_000)]
    content = " ".join(words)
    pg_conn.execute(
        "INSERT INTO session_transcripts (session_key, content, created_at, updated_at) "
        "VALUES ('long', :c, :t, :t)",
        {"c": content, "t": TS},
    )
    stored = pg_conn.execute("SELECT length(content) FROM session_transcripts").fetchone()
    assert stored[0] == len(content)
    find = (
        "SELECT COUNT(*) FROM session_transcripts "
        "WHERE content_tsv @@ plainto_tsquery('signet_unicode61', :q)"
    )
    assert pg_conn.execute(find, {"q": words[10]}).fetchone()[0] == 1
    assert pg_conn.execute(find, {"q": words[-1]}).fetchone()[0] == 0  # past 200,000 chars
