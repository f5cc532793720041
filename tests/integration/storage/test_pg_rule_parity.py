"""The rules migrations 0002-0017 declare hold the same way on SQLite and on PostgreSQL
(`backend`: one test body per backend): each CHECK, unique index and foreign key rejects the
same bad row while its good twin is accepted, the append-only history refuses an update, and
ON DELETE cascades or nulls the same rows. The triggers' effects: test_pg_trigger_parity.py."""

from __future__ import annotations

import itertools

import pytest
import sqlean
from support.backends import Backend
from support.schema_rows import LATER, TS, count, entity, memory

from signet_desktop.storage import errors
from signet_desktop.storage.connect import Connection

_ids = itertools.count(1)
Row = tuple[str, dict[str, object]]  # a table and its column values; "@" is the case's number


SESSION_SEQ = "<the seq of session k@>"


def insert(conn: Connection, row: Row, n: int) -> None:
    table, values = row
    if table == "memories":
        memory(conn, str(values.get("id", "m@")).replace("@", str(n)))
        return
    bound = {k: v.replace("@", str(n)) if isinstance(v, str) else v for k, v in values.items()}
    if bound.get("session_seq") == SESSION_SEQ.replace("@", str(n)):
        found = conn.execute(
            "SELECT seq FROM session_transcripts WHERE session_key = :k", {"k": f"k{n}"}
        ).fetchone()
        bound["session_seq"] = int(found[0])
    placeholders = ", ".join(f":{k}" for k in bound)
    conn.execute(f"INSERT INTO {table} ({', '.join(bound)}) VALUES ({placeholders})", bound)


def when(**values: object) -> dict[str, object]:
    """Column values with created_at/updated_at filled in."""
    return {"created_at": TS, "updated_at": TS, **values}


SOURCE = when(kind="k", name="n", root_path="/root@")
ENTITY = when(name="x", canonical_name="ent@")
TOKEN = {
    "name": "tok@",
    "secret_hash": "a" * 64,
    "permissions_json": '["read"]',
    "agents_json": '["default"]',
    "created_at": TS,
    "expires_at": LATER,
}
MUTATION = {
    "actor": "a",
    "operation": "op",
    "target_table": "entities",
    "target_id": "e",
    "created_at": TS,
}
PASS = when(agent_id="ag@", started_at=TS)

# (what the rule is, rows written first, a good row, its bad twin): the good row is accepted
# and the bad one refused on both backends.
CASES: list[tuple[str, list[Row], Row | None, Row]] = [
    (
        "0002 a removed source says when",
        [],
        ("sources", {**SOURCE, "id": "s@", "status": "removed", "removed_at": TS}),
        ("sources", {**SOURCE, "id": "s@b", "root_path": "/b@", "status": "removed"}),
    ),
    (
        "0002 one live source per root",
        [("sources", {**SOURCE, "id": "s@"})],
        ("sources", {**SOURCE, "id": "s@x", "status": "removed", "removed_at": TS}),
        ("sources", {**SOURCE, "id": "s@y"}),
    ),
    (
        "0002 config_json is JSON",
        [],
        ("sources", {**SOURCE, "id": "s@", "config_json": '{"a": 1}'}),
        ("sources", {**SOURCE, "id": "s@b", "root_path": "/b@", "config_json": "not json"}),
    ),
    (
        "0002 a source's tombstone is bounded",
        [],
        (
            "source_tombstones",
            {
                "id": "t@",
                "source_id": "s",
                "kind": "k",
                "name": "n",
                "root_path": "/",
                "purged_json": f'["{"x" * 4000}"]',
                "removed_at": TS,
            },
        ),
        (
            "source_tombstones",
            {
                "id": "t@b",
                "source_id": "s",
                "kind": "k",
                "name": "n",
                "root_path": "/",
                "purged_json": f'["{"x" * 4100}"]',
                "removed_at": TS,
            },
        ),
    ),
    (
        "0002 a transcript's source id and record id go together",
        [],
        ("session_transcripts", when(session_key="k@", source_id="s", source_record_id="r")),
        ("session_transcripts", when(session_key="k@b", source_id="s")),
    ),
    (
        "0002 only clean evidence is context-eligible",
        [],
        (
            "memory_content_safety",
            {
                "source_kind": "memory",
                "source_id": "x@",
                "status": "clean",
                "context_eligible": 1,
                "policy_version": "p",
                "scanned_at": TS,
            },
        ),
        (
            "memory_content_safety",
            {
                "source_kind": "memory",
                "source_id": "y@",
                "status": "tainted",
                "context_eligible": 1,
                "policy_version": "p",
                "scanned_at": TS,
            },
        ),
    ),
    (
        "0002 a chunk link needs its memory",
        [("documents", when(id="d@", source_type="text"))],
        None,
        ("document_memories", {"document_id": "d@", "memory_id": "missing", "chunk_index": 0}),
    ),
    (
        "0002 a url document has a url",
        [],
        ("documents", when(id="d@", source_type="url", source_url="https://x")),
        ("documents", when(id="d@b", source_type="url")),
    ),
    (
        "0003 a merged entity names its target",
        [("entities", {**ENTITY, "id": "t@"})],
        (
            "entities",
            {**ENTITY, "id": "e@", "canonical_name": "m@", "status": "merged", "merged_into": "t@"},
        ),
        ("entities", {**ENTITY, "id": "e@b", "canonical_name": "m@b", "status": "merged"}),
    ),
    (
        "0003 one live entity per name and type",
        [("entities", {**ENTITY, "id": "e@"})],
        ("entities", {**ENTITY, "id": "e@a", "status": "archived"}),
        ("entities", {**ENTITY, "id": "e@b"}),
    ),
    (
        "0003 no dependency of an entity on itself",
        [
            ("entities", {**ENTITY, "id": "e@"}),
            ("entities", {**ENTITY, "id": "f@", "canonical_name": "other@"}),
        ],
        (
            "entity_dependencies",
            when(id="d@", source_entity_id="e@", target_entity_id="f@", dependency_type="uses"),
        ),
        (
            "entity_dependencies",
            when(id="d@b", source_entity_id="e@", target_entity_id="e@", dependency_type="uses"),
        ),
    ),
    (
        "0003 an applied proposal says when",
        [],
        (
            "ontology_proposals",
            when(id="p@", operation="op", status="applied", payload="{}", applied_at=TS),
        ),
        ("ontology_proposals", when(id="p@b", operation="op", status="applied", payload="{}")),
    ),
    (
        "0004 one running pass per agent",
        [("dreaming_passes", {**PASS, "id": "p@"})],
        ("dreaming_passes", {**PASS, "id": "p@a", "status": "completed", "completed_at": TS}),
        ("dreaming_passes", {**PASS, "id": "p@b"}),
    ),
    (
        "0004 attention priority is 0-100",
        [],
        ("dreaming_attention", when(id="a@", kind="hygiene", subject_ref="x@", priority=100)),
        ("dreaming_attention", when(id="a@b", kind="hygiene", subject_ref="y@", priority=101)),
    ),
    (
        "0005 a group policy names its group",
        [],
        ("agents", when(id="g@", name="g", read_policy="group", policy_group="team")),
        ("agents", when(id="g@b", name="g", read_policy="group")),
    ),
    (
        "0005 a hint is not empty",
        [("memories", {})],
        ("memory_hints", {"memory_id": "m@", "hint": "when", "created_at": TS}),
        ("memory_hints", {"memory_id": "m@", "hint": "", "created_at": TS}),
    ),
    (
        "0008 the runtime path is plugin or legacy",
        [],
        (
            "hook_sessions",
            {
                "session_key": "k@",
                "harness": "h",
                "runtime_path": "plugin",
                "started_at": TS,
                "last_seen_at": TS,
            },
        ),
        (
            "hook_sessions",
            {
                "session_key": "k@b",
                "harness": "h",
                "runtime_path": "other",
                "started_at": TS,
                "last_seen_at": TS,
            },
        ),
    ),
    (
        "0009 a maintenance run's trigger",
        [],
        ("maintenance_runs", {"id": "r@", "trigger": "manual", "started_at": TS}),
        ("maintenance_runs", {"id": "r@b", "trigger": "cron", "started_at": TS}),
    ),
    (
        "0010 an operation's status",
        [],
        (
            "dreaming_operations",
            {
                "id": "o@",
                "request_id": "r",
                "seq": 0,
                "operation": "op",
                "status": "skipped",
                "created_at": TS,
            },
        ),
        (
            "dreaming_operations",
            {
                "id": "o@b",
                "request_id": "r",
                "seq": 0,
                "operation": "op",
                "status": "done",
                "created_at": TS,
            },
        ),
    ),
    (
        "0011 a graph mutation's seq is unique",
        [],
        ("graph_mutations", {**MUTATION, "id": "g@", "seq": 1000}),
        ("graph_mutations", {**MUTATION, "id": "g@b", "seq": 1000}),
    ),
    (
        "0011 a graph mutation targets a graph table",
        [],
        ("graph_mutations", {**MUTATION, "id": "g@", "seq": 2000}),
        ("graph_mutations", {**MUTATION, "id": "g@b", "seq": 2001, "target_table": "memories"}),
    ),
    (
        "0014 one turn per ordinal",
        [("session_transcripts", when(session_key="k@"))],
        (
            "transcript_turns",
            {"session_seq": SESSION_SEQ, "ordinal": 0, "role": "user", "text": "hello"},
        ),
        (
            "transcript_turns",
            {"session_seq": SESSION_SEQ, "ordinal": 0, "role": "user", "text": "again"},
        ),
    ),
    (
        "0014 an ordinal is not negative",
        [("session_transcripts", when(session_key="k@"))],
        (
            "transcript_turns",
            {"session_seq": SESSION_SEQ, "ordinal": 0, "role": "user", "text": "hello"},
        ),
        (
            "transcript_turns",
            {"session_seq": SESSION_SEQ, "ordinal": -1, "role": "user", "text": "before"},
        ),
    ),
    (
        "0015 permissions are a non-empty array",
        [],
        ("api_tokens", {**TOKEN, "id": "t@"}),
        (
            "api_tokens",
            {**TOKEN, "id": "t@b", "name": "b@", "secret_hash": "b" * 64, "permissions_json": "[]"},
        ),
    ),
    (
        "0015 the agents are an array",
        [],
        ("api_tokens", {**TOKEN, "id": "t@"}),
        (
            "api_tokens",
            {
                **TOKEN,
                "id": "t@b",
                "name": "b@",
                "secret_hash": "b" * 64,
                "agents_json": '{"a": 1}',
            },
        ),
    ),
    (
        "0015 a token expires after its creation",
        [],
        ("api_tokens", {**TOKEN, "id": "t@"}),
        (
            "api_tokens",
            {
                **TOKEN,
                "id": "t@b",
                "name": "b@",
                "secret_hash": "b" * 64,
                "expires_at": "2025-12-31T23:59:59Z",
            },
        ),
    ),
    (
        "0016 a score is within -1..1",
        [("memories", {})],
        (
            "memory_feedback",
            {
                "session_key": "k",
                "memory_id": "m@",
                "score": -1.0,
                "ratings": 1,
                "first_rated_at": TS,
                "last_rated_at": TS,
            },
        ),
        (
            "memory_feedback",
            {
                "session_key": "k2",
                "memory_id": "m@",
                "score": 1.5,
                "ratings": 1,
                "first_rated_at": TS,
                "last_rated_at": TS,
            },
        ),
    ),
    (
        "0017 first_person is 0 or 1",
        [("memories", {}), ("memories", {"id": "m@b"})],
        ("memory_cues", {"memory_id": "m@", "content_hash": "h", "first_person": 1}),
        ("memory_cues", {"memory_id": "m@b", "content_hash": "h", "first_person": 2}),
    ),
    (
        "0017 cues need their memory",
        [],
        None,
        ("memory_cues", {"memory_id": "missing@", "content_hash": "h"}),
    ),
]


# PostgreSQL's SQLSTATE for input a type refuses: bad JSON for a jsonb column.
INVALID_TEXT = "22P02"


def refused(backend: Backend, error: BaseException) -> bool:
    """A constraint refused the row, or (PostgreSQL) jsonb refused its text."""
    if backend.name == "sqlite":
        return isinstance(error, sqlean.IntegrityError)
    return isinstance(error, errors.IntegrityError) or (
        isinstance(error, errors.DatabaseError) and error.sqlstate == INVALID_TEXT
    )


@pytest.mark.parametrize(("rule", "setup", "good", "bad"), CASES, ids=[c[0] for c in CASES])
def test_a_rule_refuses_the_same_row_on_both(
    backend: Backend, rule: str, setup: list[Row], good: Row | None, bad: Row
) -> None:
    n = next(_ids)
    for row in setup:
        insert(backend.conn, row, n)
    if good is not None:
        insert(backend.conn, good, n)
    with pytest.raises(errors.DATABASE_ERRORS) as raised:
        insert(backend.conn, bad, n)
    assert refused(backend, raised.value), raised.value


def test_memory_history_is_append_only_on_both(backend: Backend) -> None:
    backend.conn.execute(
        "INSERT INTO memory_history (id, memory_id, event, changed_by, created_at) "
        f"VALUES ('h1', 'm1', 'created', 'test', '{TS}')"
    )
    with pytest.raises(errors.DATABASE_ERRORS, match="append-only"):
        backend.conn.execute("UPDATE memory_history SET reason = 'edited' WHERE id = 'h1'")


def test_on_delete_cascades_and_nulls_the_same_way(backend: Backend) -> None:
    conn = backend.conn
    memory(conn, "m1")
    entity(conn, "e1")
    conn.execute(
        f"INSERT INTO documents (id, source_type, created_at, updated_at) "
        f"VALUES ('d1', 'text', '{TS}', '{TS}')"
    )
    conn.execute("INSERT INTO document_memories VALUES ('d1', 'm1', 0)")
    conn.execute("INSERT INTO memory_cues (memory_id, content_hash) VALUES ('m1', 'h')")
    conn.execute(
        f"INSERT INTO memory_hints (memory_id, hint, created_at) VALUES ('m1', 'q', '{TS}')"
    )
    conn.execute(
        "INSERT INTO memory_feedback (session_key, memory_id, score, ratings, first_rated_at, "
        f"last_rated_at) VALUES ('k', 'm1', 0.5, 1, '{TS}', '{TS}')"
    )
    conn.execute(
        "INSERT INTO entity_aspects (id, entity_id, name, canonical_name, created_at, updated_at) "
        f"VALUES ('asp', 'e1', 'a', 'a', '{TS}', '{TS}')"
    )
    conn.execute(
        "INSERT INTO entity_attributes (id, aspect_id, memory_id, content, normalized_content, "
        f"created_at, updated_at) VALUES ('attr', 'asp', 'm1', 'c', 'c', '{TS}', '{TS}')"
    )
    conn.execute("DELETE FROM memories WHERE id = 'm1'")
    for table in ("document_memories", "memory_cues", "memory_hints", "memory_feedback"):
        assert count(conn, f"SELECT COUNT(*) FROM {table}") == 0, table
    assert conn.execute("SELECT memory_id FROM entity_attributes").fetchone()[0] is None

    conn.execute(
        f"INSERT INTO sources (id, kind, name, root_path, created_at, updated_at) "
        f"VALUES ('s1', 'k', 'n', '/', '{TS}', '{TS}')"
    )
    conn.execute(
        "INSERT INTO source_import_runs (id, source_id, status, started_at, finished_at) "
        f"VALUES ('r1', 's1', 'completed', '{TS}', '{TS}')"
    )
    conn.execute(
        "INSERT INTO source_import_files (id, source_id, relative_path, last_run_id, "
        f"created_at, updated_at) VALUES ('f1', 's1', 'a.jsonl', 'r1', '{TS}', '{TS}')"
    )
    conn.execute("DELETE FROM source_import_runs WHERE id = 'r1'")
    assert conn.execute("SELECT last_run_id FROM source_import_files").fetchone()[0] is None
    conn.execute("DELETE FROM sources WHERE id = 's1'")
    assert count(conn, "SELECT COUNT(*) FROM source_import_files") == 0

    conn.execute(
        "INSERT INTO session_transcripts (session_key, created_at, updated_at) "
        f"VALUES ('k1', '{TS}', '{TS}')"
    )
    seq = count(conn, "SELECT seq FROM session_transcripts WHERE session_key = 'k1'")
    conn.execute(
        "INSERT INTO transcript_turns (session_seq, ordinal, role, text) "
        f"VALUES ({seq}, 0, 'user', 'hi')"
    )
    conn.execute(f"INSERT INTO transcript_turn_backfill (session_seq) VALUES ({seq})")
    conn.execute("DELETE FROM session_transcripts WHERE session_key = 'k1'")
    assert count(conn, "SELECT COUNT(*) FROM transcript_turns") == 0
    assert count(conn, "SELECT COUNT(*) FROM transcript_turn_backfill") == 0
