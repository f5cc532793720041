"""Cues are written with the memory, follow content edits, and are read back scoped."""

from __future__ import annotations

import uuid
from datetime import date

from signet_desktop.domain.memory import NewMemory
from signet_desktop.storage import memories
from signet_desktop.storage.database import Database
from signet_desktop.storage.memory_cues import cues_for

SAID = "2023-05-08T13:56:00.000Z"


def add(db: Database, text: str, agent: str = "default") -> str:
    memory_id = str(uuid.uuid4())
    with db.write() as conn:
        memories.insert_memory(
            conn,
            memory_id,
            NewMemory(agent, text, created_at=SAID),
            actor="t",
            embedding_model=None,
        )
    return memory_id


def test_remember_stores_resolved_times_and_preference(db: Database) -> None:
    memory_id = add(db, "I love the lake; we went there yesterday")
    row = (
        db.reader()
        .execute(
            "SELECT times, first_day, last_day, preference FROM memory_cues WHERE memory_id = ?",
            (memory_id,),
        )
        .fetchone()
    )
    assert row["first_day"] == row["last_day"] == "2023-05-07"
    assert row["preference"] == "I love"
    [cue] = cues_for(db.reader(), "default", [memory_id])[memory_id].times
    assert (cue.expression, cue.start) == ("yesterday", date(2023, 5, 7))


def test_a_content_edit_rewrites_the_cues(db: Database) -> None:
    memory_id = add(db, "we went there yesterday")
    with db.write() as conn:
        memory = memories.get_memory(conn, "default", memory_id)
        assert memory is not None
        memories.update_memory_fields(conn, memory, {"content": "nothing dated"}, actor="t")
    assert cues_for(db.reader(), "default", [memory_id])[memory_id].times == ()


def test_rows_from_before_the_table_are_read_from_the_text(db: Database) -> None:
    memory_id = add(db, "last week I prefer tea")
    with db.write() as conn:
        conn.execute("DELETE FROM memory_cues")
    cues = cues_for(db.reader(), "default", [memory_id])[memory_id]
    assert cues.times[0].label() == "2023-05-01..2023-05-07" and cues.preference


def test_cues_are_read_in_the_agents_scope_only(db: Database) -> None:
    mine, gone = add(db, "yesterday"), add(db, "yesterday too")
    theirs = add(db, "yesterday", agent="other")
    with db.write() as conn:
        memory = memories.get_memory(conn, "default", gone)
        assert memory is not None
        memories.set_deleted(conn, memory, deleted=True, reason=None, actor="t")
    found = cues_for(db.reader(), "default", [mine, gone, theirs])
    assert list(found) == [mine]
