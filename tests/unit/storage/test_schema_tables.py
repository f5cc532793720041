"""The migrated schema: named tables exist, scope columns, CHECKs, FK cascades and FTS sync."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import sqlean

from signet_desktop.storage.connect import Connection, connect
from signet_desktop.storage.migrate import apply_migrations

NOW = "2025-01-01T00:00:00.000Z"

EXPECTED_TABLES = {
    # the spec's evidence and semantic state
    "memories",
    "memory_history",
    "memory_content_safety",
    "session_transcripts",
    "session_transcripts_fts",
    "memory_artifacts",
    "memory_artifacts_fts",
    "memory_artifact_tombstones",
    "session_summaries",
    "summary_jobs",
    # retrieval projections
    "embeddings",
    "embedding_generations",
    "memories_fts",
    "memory_search_telemetry",
    "umap_cache",
    "memory_hints",
    "memory_hints_fts",
    # queue, documents, sources
    "memory_jobs",
    "documents",
    "document_memories",
    "connectors",
    "sources",
    "source_import_runs",
    "source_import_files",
    "source_import_records",
    "source_tombstones",
    # graph and ontology
    "entities",
    "entity_aliases",
    "entity_aspects",
    "entity_attributes",
    "entity_dependencies",
    "relations",
    "memory_entity_mentions",
    "ontology_proposals",
    "ontology_contradictions",
    # Dreaming control plane
    "dreaming_state",
    "dreaming_passes",
    "dreaming_attention",
    "dreaming_tool_calls",
    "dreaming_evidence_exclusions",
    "dreaming_evidence_consumption",
    "dreaming_evidence_reviews",
    # agent registry
    "agents",
    # maintained counters and retention runs (0009)
    "memory_counts",
    "memory_vector_counts",
    "maintenance_runs",
    # hook sessions and canonical transcript bookkeeping (0008)
    "hook_sessions",
    "session_context_ledger",
    "canonical_transcript_files",
    # transcript turns as recall evidence (0014)
    "transcript_turns",
    "transcript_turns_fts",
    "transcript_turn_backfill",
    # scoped API tokens (0015)
    "api_tokens",
    # agents' ratings of recalled memories (0016)
    "memory_feedback",
    # time and preference cues read from each memory's text at write time (0017)
    "memory_cues",
}

FTS_TABLES = (
    "memories_fts",
    "session_transcripts_fts",
    "memory_artifacts_fts",
    "memory_hints_fts",
    "transcript_turns_fts",
)
FTS_SHADOW_SUFFIXES = ("", "_data", "_idx", "_docsize", "_config", "_content")

# Tables without an agent_id column, each for a stated reason.
UNSCOPED_TABLES = {
    "schema_migrations",  # runner bookkeeping
    "schema_migrations_audit",  # runner bookkeeping
    "sqlite_sequence",  # SQLite's AUTOINCREMENT counters
    "embedding_generations",  # one row per (model, dimensions), shared by all agents
    "document_memories",  # link rows; scope comes from the document
    "agents",  # the scope registry itself: its id is the agent_id
    "canonical_transcript_files",  # one row per harness file; each line names its agent
    "maintenance_runs",  # one row per retention run, which sweeps every agent
    "transcript_turns",  # rows of a session; scope comes from the session row they cascade from
    "transcript_turn_backfill",  # pending session rows (by seq); scope as above
    "api_tokens",  # a token names its agents in agents_json (one or more), belongs to none
} | {f"{fts}{suffix}" for fts in FTS_TABLES for suffix in FTS_SHADOW_SUFFIXES}


@pytest.fixture
def conn() -> Iterator[Connection]:
    connection, _ = connect(":memory:", with_vec=False)
    apply_migrations(connection)
    yield connection
    connection.close()


def insert(conn: Connection, table: str, row: dict[str, Any]) -> None:
    """Insert one row; table and column names come from this test module only."""
    columns = ", ".join(row)
    params = ", ".join(f":{name}" for name in row)
    conn.execute(f"INSERT INTO {table} ({columns}) VALUES ({params})", row)


def count(conn: Connection, sql: str, params: dict[str, Any] | None = None) -> int:
    return int(conn.execute(sql, params or {}).fetchone()[0])


def add_memory(conn: Connection, memory_id: str, content: str = "a memory") -> None:
    insert(
        conn,
        "memories",
        {
            "id": memory_id,
            "content": content,
            "normalized_content": content,
            "content_hash": f"hash-{memory_id}",
            "created_at": NOW,
            "updated_at": NOW,
        },
    )


def seed_parents(conn: Connection) -> None:
    """Parent rows that the CHECK fixtures below refer to."""
    add_memory(conn, "m1")
    insert(conn, "sources", SOURCE)
    insert(conn, "connectors", CONNECTOR)
    insert(conn, "documents", DOCUMENT)
    insert(conn, "entities", ENTITY)
    insert(conn, "entities", {**ENTITY, "id": "e2", "name": "Other", "canonical_name": "other"})
    insert(conn, "entity_aspects", ASPECT)
    insert(conn, "entity_attributes", {**ATTRIBUTE, "id": "attr1"})
    insert(conn, "entity_attributes", {**ATTRIBUTE, "id": "attr2", "content": "other"})
    insert(conn, "dreaming_passes", {**PASS, "status": "completed", "completed_at": NOW})


STAMPS = {"created_at": NOW, "updated_at": NOW}
SOURCE = {"id": "src1", "kind": "claude-code", "name": "archive", "root_path": "/x", **STAMPS}
CONNECTOR = {"id": "c1", "provider": "filesystem", "display_name": "docs", **STAMPS}
DOCUMENT = {"id": "d1", "source_type": "text", "raw_content": "hello", **STAMPS}
ENTITY = {"id": "e1", "name": "Signet", "canonical_name": "signet", **STAMPS}
ASPECT = {"id": "a1", "entity_id": "e1", "name": "Stack", "canonical_name": "stack", **STAMPS}
ATTRIBUTE = {"aspect_id": "a1", "content": "uses sqlite", "normalized_content": "x", **STAMPS}
PASS = {"id": "p1", "mode": "incremental", "status": "running", "started_at": NOW, **STAMPS}


def case(table: str, column: str, good: Any, bad: Any, **row: Any) -> Any:
    """One CHECK case: `row` is valid once `column` gets `good`, and refused with `bad`."""
    return pytest.param(table, row, column, good, bad, id=f"{table}.{column}={bad}")


SAFETY = {"source_id": "m1", "policy_version": "v1", "scanned_at": NOW}
ARTIFACT = {"source_path": "a.md", "content_hash": "h", "session_token": "t", "captured_at": NOW}
EVIDENCE = {"source_kind": "transcript", "source_id": "s1"}
DONE = {"started_at": NOW, "completed_at": NOW, **STAMPS}

CHECK_CASES = [
    case("memory_content_safety", "status", "tainted", "suspicious", **SAFETY,
         source_kind="memory", context_eligible=0),
    case("memory_content_safety", "source_kind", "transcript", "email", **SAFETY,
         status="clean", context_eligible=1),
    case("memory_content_safety", "context_eligible", 0, 1, **SAFETY,
         source_kind="memory", status="blocked"),
    case("sources", "status", "paused", "gone", id="s2", kind="obsidian", name="n",
         root_path="/y", **STAMPS),
    case("source_import_records", "outcome", "duplicate", "maybe", id="r1", source_id="src1",
         source_record_id="rec1", **STAMPS),
    case("source_import_runs", "status", "running", "paused", id="run1", source_id="src1",
         started_at=NOW),
    case("session_summaries", "kind", "arc", "chapter", id="s1", content="c", earliest_at=NOW,
         latest_at=NOW, created_at=NOW),
    case("memory_artifacts", "source_kind", "compaction", "diary", **ARTIFACT, **STAMPS),
    case("connectors", "status", "syncing", "broken", id="c2", provider="gdrive",
         display_name="d", **STAMPS),
    case("documents", "status", "embedding", "parsing", id="d2", source_type="text", **STAMPS),
    case("documents", "source_type", "file", "email", id="d3", **STAMPS),
    case("entities", "status", "archived", "deleted", id="e3", name="X", canonical_name="x",
         **STAMPS),
    case("entity_aspects", "status", "archived", "hidden", id="a2", entity_id="e1", name="N",
         canonical_name="n", **STAMPS),
    case("entity_attributes", "status", "superseded", "retracted", **ATTRIBUTE, id="attr3"),
    case("entity_attributes", "kind", "constraint", "opinion", **ATTRIBUTE, id="attr4"),
    case("entity_dependencies", "target_entity_id", "e2", "e1", id="dep1",
         source_entity_id="e1", dependency_type="uses", **STAMPS),
    case("ontology_proposals", "status", "pending", "approved", id="op1",
         operation="create_entity", payload="{}", **STAMPS),
    case("ontology_contradictions", "detector", "semantic", "oracle", id="oc1",
         left_attribute_id="attr1", right_attribute_id="attr2", detected_at=NOW),
    case("dreaming_passes", "mode", "incremental-hygiene", "deep", id="p2", status="failed",
         **DONE),
    case("dreaming_passes", "status", "completed", "exploded", id="p3", **DONE),
    case("dreaming_attention", "kind", "hygiene", "gossip", id="at1", subject_ref="entity:e1",
         **STAMPS),
    case("dreaming_attention", "priority", 100, 101, id="at2", kind="surprisal",
         subject_ref="x", **STAMPS),
    case("dreaming_tool_calls", "status", "refused", "maybe", id="tc1", pass_id="p1", seq=0,
         tool_name="search_evidence", input_json="{}", created_at=NOW),
    case("dreaming_evidence_exclusions", "status", "exhausted", "forgotten", **EVIDENCE,
         reason="too long", excluded_at=NOW, updated_at=NOW),
    case("dreaming_evidence_reviews", "disposition", "no_action", "skipped", **EVIDENCE,
         source_revision="h1", reviewed_at=NOW),
    case("agents", "read_policy", "isolated", "public", id="bot", name="bot", **STAMPS),
    case("umap_cache", "dimensions", 3, 4, id="u1", model="m", embedding_count=3,
         payload="[]", created_at=NOW),
]  # fmt: skip


def table_names(conn: Connection) -> set[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {str(r[0]) for r in rows}


def test_every_named_table_exists(conn: Connection) -> None:
    missing = EXPECTED_TABLES - table_names(conn)
    assert not missing, f"tables missing from the migrated schema: {sorted(missing)}"


def test_every_scoped_table_has_a_defaulted_agent_id(conn: Connection) -> None:
    for table in sorted(table_names(conn) - UNSCOPED_TABLES):
        columns = {str(c[1]): c for c in conn.execute(f"PRAGMA table_info({table})")}
        assert "agent_id" in columns, f"{table} has no agent_id column"
        agent_id = columns["agent_id"]
        assert agent_id[3] == 1, f"{table}.agent_id must be NOT NULL"
        assert agent_id[4] == "'default'", f"{table}.agent_id must default to 'default'"


def test_every_scoped_table_has_an_index_led_by_agent_id(conn: Connection) -> None:
    for table in sorted(table_names(conn) - UNSCOPED_TABLES):
        assert "agent_id" in leading_index_columns(conn, table), (
            f"{table} has no index starting with agent_id"
        )


def test_unscoped_allow_list_names_only_real_tables(conn: Connection) -> None:
    """A stale allow-list entry would hide a missing agent_id after a rename."""
    existing = table_names(conn)
    shadow_optional = {f"{fts}_content" for fts in FTS_TABLES}  # external content: no _content
    assert UNSCOPED_TABLES - shadow_optional <= existing


@pytest.mark.parametrize(
    ("table", "row", "column", "good", "bad"),
    CHECK_CASES,
)
def test_check_constraints_reject_bad_values(
    conn: Connection, table: str, row: dict[str, Any], column: str, good: Any, bad: Any
) -> None:
    seed_parents(conn)
    with pytest.raises(sqlean.IntegrityError, match="CHECK constraint failed"):
        insert(conn, table, {**row, column: bad})
    rows_before = count(conn, f"SELECT count(*) FROM {table}")
    insert(conn, table, {**row, column: good})
    assert count(conn, f"SELECT count(*) FROM {table}") == rows_before + 1


def test_one_running_dreaming_pass_per_agent(conn: Connection) -> None:
    insert(conn, "dreaming_passes", PASS)
    with pytest.raises(sqlean.IntegrityError, match="UNIQUE"):
        insert(conn, "dreaming_passes", {**PASS, "id": "p-second"})
    insert(conn, "dreaming_passes", {**PASS, "id": "p-other-agent", "agent_id": "other"})


def test_session_key_is_unique_per_agent_not_globally(conn: Connection) -> None:
    row = {"session_key": "s1", "content": "hi", **STAMPS}
    insert(conn, "session_transcripts", row)
    insert(conn, "session_transcripts", {**row, "agent_id": "other"})
    with pytest.raises(sqlean.IntegrityError, match="UNIQUE"):
        insert(conn, "session_transcripts", row)


def test_imported_transcript_meta_is_bounded_json(conn: Connection) -> None:
    row = {"session_key": "imp", "source_id": "src1", "source_record_id": "r1", **STAMPS}
    for bad in ("not json", '{"k": "' + "x" * 20000 + '"}'):
        with pytest.raises(sqlean.IntegrityError, match="CHECK constraint failed"):
            insert(conn, "session_transcripts", {**row, "source_meta_json": bad})
    insert(conn, "session_transcripts", {**row, "source_meta_json": '{"file": "a.jsonl"}'})


def test_deleting_a_document_cascades_to_its_chunk_links(conn: Connection) -> None:
    insert(conn, "documents", DOCUMENT)
    add_memory(conn, "chunk0")
    add_memory(conn, "chunk1", "second chunk")
    for index, memory_id in enumerate(("chunk0", "chunk1")):
        insert(
            conn,
            "document_memories",
            {"document_id": "d1", "memory_id": memory_id, "chunk_index": index},
        )
    conn.execute("DELETE FROM documents WHERE id = 'd1'")
    assert count(conn, "SELECT count(*) FROM document_memories") == 0
    assert count(conn, "SELECT count(*) FROM memories") == 2  # the evidence rows stay


def test_purging_a_memory_removes_its_chunk_link(conn: Connection) -> None:
    insert(conn, "documents", DOCUMENT)
    add_memory(conn, "chunk0")
    insert(
        conn, "document_memories", {"document_id": "d1", "memory_id": "chunk0", "chunk_index": 0}
    )
    conn.execute("DELETE FROM memories WHERE id = 'chunk0'")
    assert count(conn, "SELECT count(*) FROM document_memories") == 0


def test_document_links_require_existing_rows(conn: Connection) -> None:
    add_memory(conn, "chunk0")
    with pytest.raises(sqlean.IntegrityError, match="FOREIGN KEY"):
        insert(
            conn,
            "document_memories",
            {"document_id": "nope", "memory_id": "chunk0", "chunk_index": 0},
        )


def test_connector_with_documents_cannot_be_deleted_silently(conn: Connection) -> None:
    insert(conn, "connectors", CONNECTOR)
    insert(conn, "documents", {**DOCUMENT, "source_type": "connector", "connector_id": "c1"})
    with pytest.raises(sqlean.IntegrityError, match="FOREIGN KEY"):
        conn.execute("DELETE FROM connectors WHERE id = 'c1'")


def test_deleting_an_entity_removes_its_graph_rows(conn: Connection) -> None:
    seed_parents(conn)
    insert(
        conn,
        "entity_dependencies",
        {
            "id": "dep",
            "source_entity_id": "e2",
            "target_entity_id": "e1",
            "dependency_type": "uses",
            **STAMPS,
        },
    )
    insert(
        conn,
        "memory_entity_mentions",
        {"memory_id": "m1", "entity_id": "e1", "created_at": NOW},
    )
    conn.execute("DELETE FROM entities WHERE id = 'e1'")
    for table in (
        "entity_aspects",
        "entity_attributes",
        "entity_dependencies",
        "memory_entity_mentions",
    ):
        assert count(conn, f"SELECT count(*) FROM {table}") == 0, table
    assert count(conn, "SELECT count(*) FROM entities") == 1


def test_purging_a_memory_drops_mentions_and_unlinks_claims(conn: Connection) -> None:
    seed_parents(conn)
    conn.execute("UPDATE entity_attributes SET memory_id = 'm1' WHERE id = 'attr1'")
    insert(
        conn,
        "memory_entity_mentions",
        {"memory_id": "m1", "entity_id": "e1", "created_at": NOW},
    )
    conn.execute("DELETE FROM memories WHERE id = 'm1'")
    assert count(conn, "SELECT count(*) FROM memory_entity_mentions") == 0
    assert (
        conn.execute("SELECT memory_id FROM entity_attributes WHERE id = 'attr1'").fetchone()[0]
        is None
    )


def test_removing_a_source_cascades_only_its_import_state(conn: Connection) -> None:
    insert(conn, "sources", SOURCE)
    insert(conn, "source_import_runs", {"id": "run1", "source_id": "src1", "started_at": NOW})
    insert(
        conn,
        "source_import_records",
        {"id": "r1", "source_id": "src1", "source_record_id": "rec1", **STAMPS},
    )
    transcript = {"session_key": "imp", "source_id": "src1", "source_record_id": "rec1"}
    insert(conn, "session_transcripts", {**transcript, **STAMPS})
    conn.execute("DELETE FROM sources WHERE id = 'src1'")
    assert count(conn, "SELECT count(*) FROM source_import_runs") == 0
    assert count(conn, "SELECT count(*) FROM source_import_records") == 0
    # evidence is purged explicitly (with a tombstone), never by a silent cascade
    assert count(conn, "SELECT count(*) FROM session_transcripts") == 1


def fts_hits(conn: Connection, fts: str, term: str) -> int:
    return count(conn, f"SELECT count(*) FROM {fts} WHERE {fts} MATCH :term", {"term": term})


def fts_integrity(conn: Connection, fts: str) -> None:
    """FTS5 integrity-check with rank 1 also compares the index with the content table."""
    conn.execute(f"INSERT INTO {fts} ({fts}, rank) VALUES ('integrity-check', 1)")


def test_session_transcript_fts_follows_insert_update_delete(conn: Connection) -> None:
    insert(conn, "session_transcripts", {"session_key": "s1", "content": "alpha beta", **STAMPS})
    assert fts_hits(conn, "session_transcripts_fts", "alpha") == 1
    conn.execute("UPDATE session_transcripts SET content = 'gamma delta' WHERE session_key = 's1'")
    assert fts_hits(conn, "session_transcripts_fts", "alpha") == 0
    assert fts_hits(conn, "session_transcripts_fts", "gamma") == 1
    conn.execute("UPDATE session_transcripts SET completed_at = :now", {"now": NOW})
    fts_integrity(conn, "session_transcripts_fts")
    conn.execute("DELETE FROM session_transcripts WHERE session_key = 's1'")
    assert fts_hits(conn, "session_transcripts_fts", "gamma") == 0
    fts_integrity(conn, "session_transcripts_fts")


def test_upsert_keeps_session_transcript_fts_in_sync(conn: Connection) -> None:
    upsert = (
        "INSERT INTO session_transcripts (session_key, content, created_at, updated_at) "
        "VALUES ('s1', :content, :now, :now) ON CONFLICT (agent_id, session_key) "
        "DO UPDATE SET content = excluded.content, updated_at = excluded.updated_at"
    )
    conn.execute(upsert, {"content": "first turn", "now": NOW})
    conn.execute(upsert, {"content": "first turn second turn", "now": NOW})
    assert fts_hits(conn, "session_transcripts_fts", "second") == 1
    fts_integrity(conn, "session_transcripts_fts")


def test_artifact_and_hint_fts_follow_their_rows(conn: Connection) -> None:
    artifact = {
        "source_path": "memory/x--transcript.md",
        "content_hash": "h",
        "source_kind": "transcript",
        "session_token": "tok",
        "captured_at": NOW,
        "content": "kestrel notes",
        **STAMPS,
    }
    insert(conn, "memory_artifacts", artifact)
    add_memory(conn, "m1")
    insert(conn, "memory_hints", {"memory_id": "m1", "hint": "which bird", "created_at": NOW})
    assert fts_hits(conn, "memory_artifacts_fts", "kestrel") == 1
    assert fts_hits(conn, "memory_hints_fts", "bird") == 1
    conn.execute("UPDATE memory_artifacts SET content = 'falcon notes'")
    conn.execute("DELETE FROM memories WHERE id = 'm1'")  # cascades to the hint
    assert fts_hits(conn, "memory_artifacts_fts", "kestrel") == 0
    assert fts_hits(conn, "memory_artifacts_fts", "falcon") == 1
    assert fts_hits(conn, "memory_hints_fts", "bird") == 0
    for fts in ("memory_artifacts_fts", "memory_hints_fts"):
        fts_integrity(conn, fts)


def test_default_agent_is_registered(conn: Connection) -> None:
    row = conn.execute("SELECT read_policy FROM agents WHERE id = 'default'").fetchone()
    assert row is not None and row[0] == "shared"


def test_schema_has_no_foreign_key_mismatches(conn: Connection) -> None:
    """Every FK points at a unique key; a mismatch only shows at first write otherwise."""
    for table in sorted(table_names(conn)):
        conn.execute(f"PRAGMA foreign_key_check({table})").fetchall()


def leading_index_columns(conn: Connection, table: str) -> set[str]:
    """First column of every index on `table` (including UNIQUE and PRIMARY KEY autoindexes)."""
    leading = set()
    for index in conn.execute(f"PRAGMA index_list({table})").fetchall():
        info = conn.execute(f"PRAGMA index_info({index[1]})").fetchall()
        if info:
            leading.add(str(info[0][2]))
    return leading


def test_every_foreign_key_column_is_indexed(conn: Connection) -> None:
    """Without an index, each parent delete scans the child table to cascade or check."""
    for table in sorted(table_names(conn)):
        leading = leading_index_columns(conn, table)
        for fk in conn.execute(f"PRAGMA foreign_key_list({table})").fetchall():
            assert fk[3] in leading, f"{table}.{fk[3]} references {fk[2]} but has no index"
