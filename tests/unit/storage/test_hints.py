"""memory_hints writes: bound to a live memory of the agent, trimmed, bounded and deduped."""

from __future__ import annotations

from signet_desktop.domain.memory import Actor
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.storage import hints as hint_rows
from signet_desktop.storage.database import Database


def remember(db: Database, content: str, agent: str = "default") -> str:
    request = RememberRequest(content=content, agent_id=agent)
    return MemoryService(db).remember(request, Actor()).memory.id


def test_insert_trims_dedupes_skips_empties_and_counts(db: Database) -> None:
    memory = remember(db, "Ana moved to Lisbon in 2021 for a job at a bakery.")
    with db.write() as conn:
        written = hint_rows.insert_hints(
            conn,
            "default",
            memory,
            ["  where does Ana live?  ", "Where does   Ana live?", "", "   ", "when did Ana move"],
        )
    assert written == 2
    reader = db.reader()
    assert hint_rows.hints_for(reader, "default", [memory]) == {
        memory: ["where does Ana live?", "when did Ana move"]
    }
    with db.write() as conn:  # a second apply of the same hints writes nothing
        assert hint_rows.insert_hints(conn, "default", memory, ["WHEN did ana move"]) == 0
    assert hint_rows.count(reader, "default") == 2


def test_long_hints_are_cut_and_the_per_memory_limit_holds(db: Database) -> None:
    memory = remember(db, "A memory with many possible questions about it.")
    long = "why " * 100
    many = [long] + [f"question number {n}" for n in range(20)]
    with db.write() as conn:
        assert hint_rows.insert_hints(conn, "default", memory, many, limit=3) == 3
    stored = hint_rows.hints_for(db.reader(), "default", [memory])[memory]
    assert len(stored[0]) <= hint_rows.HINT_MAX_CHARS and stored[0].startswith("why why")
    with db.write() as conn:  # the memory is full at its limit; a higher limit leaves room
        assert hint_rows.insert_hints(conn, "default", memory, ["one more question"], limit=3) == 0
        assert hint_rows.insert_hints(conn, "default", memory, ["one more question"], limit=4) == 1


def test_other_agents_and_deleted_memories_get_nothing(db: Database) -> None:
    mine = remember(db, "Agent A's private fact about the deploy key rotation.", agent="a")
    gone = remember(db, "A fact that is forgotten before hints arrive.", agent="a")
    MemoryService(db).forget("a", gone, reason="test", actor=Actor())
    with db.write() as conn:
        assert hint_rows.insert_hints(conn, "b", mine, ["how is the deploy key rotated"]) == 0
        assert hint_rows.insert_hints(conn, "a", gone, ["what was forgotten"]) == 0
    assert hint_rows.count(db.reader()) == 0
    assert hint_rows.hints_for(db.reader(), "b", [mine]) == {}


def test_delete_for_memory_drops_only_that_agents_rows(db: Database) -> None:
    memory = remember(db, "The staging database runs on port 5433.")
    with db.write() as conn:
        hint_rows.insert_hints(conn, "default", memory, ["which port does staging use"])
        assert hint_rows.delete_for_memory(conn, "other", memory) == 0
        assert hint_rows.delete_for_memory(conn, "default", memory) == 1
    assert hint_rows.count(db.reader()) == 0
