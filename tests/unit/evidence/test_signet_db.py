"""The Signet database reader: schema variants mapped, unknowns reported, strictly read-only."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
import sqlean
from support.signet_workspace import event, make_signet_db, memory, transcript

from signet_desktop.evidence.signet_db import (
    SignetDatabase,
    SignetDatabaseChanged,
    SignetSchemaError,
)
from signet_desktop.evidence.signet_rows import (
    SignetMemory,
    Unmapped,
    map_history,
    map_memory,
    parse_tags,
    timestamp,
)
from signet_desktop.storage.connect import DatabaseFileError


def all_memories(db: SignetDatabase) -> tuple[list[SignetMemory], list[Unmapped]]:
    rows: list[SignetMemory] = []
    unmapped: list[Unmapped] = []
    for batch in db.memories(size=2):
        rows += batch.rows
        unmapped += batch.unmapped
    return rows, unmapped


def test_current_schema_maps_every_field(tmp_path: Path) -> None:
    path = make_signet_db(
        tmp_path / "ws" / "memory" / "memories.db",
        memories=[
            memory(
                1, type="decision", tags="alpha, beta ,alpha", importance=0.9, pinned=1,
                who="codex", why="because", category="c", scope="s1", visibility="private",
                memory_kind="semantic", source_type="document", source_id="doc-1",
                is_deleted=1, deleted_at="2025-03-05 10:00:00", version=3, access_count=4,
                idempotency_key="k1",
            ),
            memory(2, tags='["x", "y"]', created_at="2025-03-01 08:00:00"),
        ],
        history=[event("sig-000001", 1, "created", new_content="v1")],
        transcripts=[transcript("sess-1")],
    )  # fmt: skip
    older_agent_history = {"memory_id": "m", "event": "created", "agent_id": "bob"}
    assert map_history(older_agent_history).metadata == {"signet_agent_id": "bob"}
    with SignetDatabase(tmp_path / "ws") as db:
        assert db.schema.migration_version == 147
        assert db.schema.unknown_columns["memories"] == ()
        assert db.schema.other_tables == {"entities": 0}  # FTS, vectors, bookkeeping left out
        (first, second), unmapped = all_memories(db)
        trail = db.history_for(["sig-000001"])["sig-000001"]
        sessions = [t for b in db.transcripts() for t in b.rows]
    assert unmapped == []
    assert (first.id, first.type, first.tags) == ("sig-000001", "decision", ("alpha", "beta"))
    assert (first.importance, first.pinned, first.who, first.why) == (0.9, True, "codex", "because")
    assert (first.scope, first.visibility, first.memory_kind) == ("s1", "private", "semantic")
    assert first.is_deleted and first.deleted_at == "2025-03-05T10:00:00.000Z"
    assert first.values["source_type"] == "document" and first.values["version"] == 3
    assert first.values["idempotency_key"] == "k1"
    assert second.tags == ("x", "y") and second.created_at == "2025-03-01T08:00:00.000Z"
    assert path.exists()
    assert [(e.event, e.new_content, e.changed_by) for e in trail] == [
        ("created", "v1", "claude-code")
    ]
    assert sessions[0].session_key == "sess-1" and sessions[0].harness == "claude-code"


def test_an_older_schema_maps_with_signet_defaults_and_names_what_it_lacks(
    tmp_path: Path,
) -> None:
    make_signet_db(
        tmp_path / "memories.db",
        "older",
        memories=[memory(1, agent_id="ignored", is_deleted=1)],
        history=[event("sig-000001", 1, "modified", old_content="a", new_content="b")],
    )
    with SignetDatabase(tmp_path / "memories.db") as db:
        missing = db.schema.missing_columns["memories"]
        (row,), _ = all_memories(db)
        trail = db.history_for([row.id])[row.id]
        assert list(db.transcripts()) == [] and db.count("session_transcripts") == 0
        assert db.schema.other_tables == {"conversations": 0}
    assert {"agent_id", "is_deleted", "visibility", "scope", "content_hash"} <= set(missing)
    assert (row.agent_id, row.is_deleted, row.visibility, row.scope) == (
        "default", False, "global", None
    )  # fmt: skip
    assert trail[0].actor_type == "user" and trail[0].event == "modified"


def test_unknown_columns_and_tables_are_reported_and_carried(tmp_path: Path) -> None:
    make_signet_db(
        tmp_path / "memories.db",
        "extra",
        memories=[memory(1, sentiment="calm", raw_blob=b"\x00\x01\x02")],
        history=[event("sig-000001", 1, "created", tool_name="remember")],
        transcripts=[transcript("s", token_count=12)],
    )
    with SignetDatabase(tmp_path / "memories.db") as db:
        schema = db.schema
        (row,), _ = all_memories(db)
        trail = db.history_for([row.id])[row.id]
        session = next(iter(db.transcripts())).rows[0]
    assert schema.unknown_columns == {
        "memories": ("sentiment", "raw_blob"),
        "memory_history": ("tool_name",),
        "session_transcripts": ("token_count",),
    }
    assert schema.other_tables["custom_notes"] == 2
    assert schema.to_json()["unknownColumns"]["memories"] == ["sentiment", "raw_blob"]
    assert row.extra == {"sentiment": "calm", "raw_blob": {"blob_bytes": 3}}
    assert trail[0].metadata["signet_extra"] == {"tool_name": "remember"}
    assert session.extra == {"token_count": 12}


def test_rows_that_cannot_be_mapped_say_why() -> None:
    assert map_memory({"id": None, "content": "x"}) == Unmapped("memories", "<no id>", "id_missing")
    assert isinstance(empty := map_memory({"id": "a", "content": "  "}), Unmapped)
    assert empty.reason == "content_empty"
    nul = map_memory({"id": "b", "content": "a\x00b"})
    assert isinstance(nul, Unmapped) and nul.reason.startswith("content_invalid")
    long = map_memory({"id": "c", "content": "x" * 100_001})
    assert isinstance(long, Unmapped) and long.reason.startswith("content_too_long")
    odd = map_memory(
        {"id": "d", "content": "ok", "type": "mystery", "importance": 7, "visibility": "team",
         "created_at": "yesterday"}
    )  # fmt: skip
    assert isinstance(odd, SignetMemory)
    assert (odd.type, odd.importance, odd.visibility, odd.created_at) == (
        "fact", 1.0, "private", None
    )  # fmt: skip
    assert len(odd.notes) == 4  # each change is noted, none is silent


def test_tags_and_timestamps_in_every_shape_signet_wrote() -> None:
    notes: list[str] = []
    assert parse_tags("a,b, ,a", notes) == ("a", "b")
    assert parse_tags('["a","b"]', notes) == ("a", "b")
    assert parse_tags("[a, b]", notes) == ("a", "b")
    assert parse_tags(None, notes) == ()
    assert parse_tags("ok," + "x" * 101, notes) == ("ok",) and len(notes) == 1
    assert timestamp("2025-03-01T10:00:00Z", "t", notes) == "2025-03-01T10:00:00.000Z"
    assert timestamp("2025-03-01T12:00:00+02:00", "t", notes) == "2025-03-01T10:00:00.000Z"
    assert timestamp(1_740_823_200_000, "t", notes) == "2025-03-01T10:00:00.000Z"


def fingerprint(path: Path) -> tuple[str, int]:
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


def test_reading_leaves_the_file_and_its_directory_untouched(tmp_path: Path) -> None:
    path = make_signet_db(
        tmp_path / "memory" / "memories.db",
        memories=[memory(i) for i in range(5)],
        history=[event("sig-000001", 1, "created")],
        transcripts=[transcript("s")],
    )
    before, listing = fingerprint(path), sorted(os.listdir(path.parent))
    with SignetDatabase(tmp_path) as db:
        all_memories(db)
        db.history_for(["sig-000001"])
        list(db.transcripts())
        db.orphan_history()
    assert fingerprint(path) == before
    assert sorted(os.listdir(path.parent)) == listing == ["memories.db"]


def test_a_running_signet_is_read_through_its_wal_without_new_files(tmp_path: Path) -> None:
    path = make_signet_db(tmp_path / "memories.db", memories=[memory(1)])
    writer = sqlean.connect(str(path), isolation_level=None)  # Signet, still running
    try:
        writer.execute("PRAGMA wal_autocheckpoint = 0")
        writer.execute(
            "INSERT INTO memories (id, content, created_at, updated_at) "
            "VALUES ('late', 'written after the checkpoint', 'x', 'x')"
        )
        listing = sorted(os.listdir(tmp_path))
        assert listing == ["memories.db", "memories.db-shm", "memories.db-wal"]
        with SignetDatabase(path) as db:
            ids = [m.id for m in all_memories(db)[0]]
        assert ids == ["sig-000001", "late"]
        assert sorted(os.listdir(tmp_path)) == listing
    finally:
        writer.close()


def test_a_wal_left_without_its_shm_is_read_from_a_private_copy(tmp_path: Path) -> None:
    source = make_signet_db(tmp_path / "live" / "memories.db", memories=[memory(1)])
    writer = sqlean.connect(str(source), isolation_level=None)
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    writer.execute(
        "INSERT INTO memories (id, content, created_at, updated_at) "
        "VALUES ('w', 'in wal', 'x', 'x')"
    )
    crashed = tmp_path / "crashed"
    crashed.mkdir()
    for suffix in ("", "-wal"):  # what a crash can leave: no -shm
        (crashed / f"memories.db{suffix}").write_bytes(
            source.with_name(f"memories.db{suffix}").read_bytes()
        )
    writer.close()
    before = {p.name: fingerprint(p) for p in crashed.iterdir()}
    with SignetDatabase(crashed / "memories.db") as db:
        assert [m.id for m in all_memories(db)[0]] == ["sig-000001", "w"]
    assert {p.name: fingerprint(p) for p in crashed.iterdir()} == before  # no -shm created


def test_a_file_that_is_not_a_signet_database_is_refused_untouched(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not sqlite at all")
    with pytest.raises(DatabaseFileError):
        SignetDatabase(junk)
    other = tmp_path / "other.db"
    conn = sqlean.connect(str(other))
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.close()
    before = fingerprint(other)
    with pytest.raises(SignetSchemaError):
        SignetDatabase(other)
    assert fingerprint(other) == before
    with pytest.raises(DatabaseFileError):
        SignetDatabase(tmp_path / "nowhere")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["junk.db", "other.db"]


def test_a_file_written_while_read_immutable_is_noticed(tmp_path: Path) -> None:
    path = make_signet_db(tmp_path / "memories.db", memories=[memory(1)])
    with SignetDatabase(path) as db:
        db.check_unchanged()
        writer = sqlean.connect(str(path), isolation_level=None)
        writer.execute("PRAGMA journal_mode = DELETE")  # writes the main file at once
        writer.execute(
            "INSERT INTO memories (id, content, created_at, updated_at) "
            "VALUES ('late', 'late', 'x', 'x')"
        )
        writer.close()
        with pytest.raises(SignetDatabaseChanged, match="run the import again"):
            db.check_unchanged()
