"""memories_fts follows the memories table through its triggers."""

from __future__ import annotations

import pytest

from signet_desktop.domain.memory import Actor
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.storage.database import Database


def fts_ids(db: Database, term: str) -> list[int]:
    rows = (
        db.reader()
        .execute("SELECT rowid FROM memories_fts WHERE memories_fts MATCH :t", {"t": term})
        .fetchall()
    )
    return [int(r[0]) for r in rows]


def test_update_and_delete_keep_fts_in_sync(db: Database) -> None:
    MemoryService(db).remember(RememberRequest(content="kafka retention is seven days"), Actor())
    assert len(fts_ids(db, "kafka")) == 1
    with db.write() as conn:
        conn.execute("UPDATE memories SET content = 'pulsar retention is three days'")
    assert fts_ids(db, "kafka") == [] and len(fts_ids(db, "pulsar")) == 1
    with db.write() as conn:
        conn.execute("UPDATE memories SET importance = 0.9")  # not a content update
    assert len(fts_ids(db, "pulsar")) == 1
    with db.write() as conn:
        conn.execute("DELETE FROM memories")
    assert fts_ids(db, "pulsar") == []
    integrity = (
        db.reader()
        .execute("SELECT COUNT(*) FROM memories_fts WHERE memories_fts MATCH 'retention'")
        .fetchone()[0]
    )
    assert integrity == 0


def test_history_is_append_only(db: Database) -> None:
    memory = MemoryService(db).remember(RememberRequest(content="x"), Actor()).memory
    with pytest.raises(Exception, match="append-only"), db.write() as conn:
        conn.execute(
            "UPDATE memory_history SET reason = 'tamper' WHERE memory_id = :id", {"id": memory.id}
        )
