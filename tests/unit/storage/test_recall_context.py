"""Session neighbours for recall's context signals: same agent, same session, live, seq order."""

from __future__ import annotations

from signet_desktop.domain.memory import Actor
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.storage.database import Database
from signet_desktop.storage.recall_context import (
    CandidateContext,
    candidate_context,
    session_rings,
)


def remember(
    service: MemoryService, content: str, session: str | None, agent: str = "default"
) -> str:
    request = RememberRequest(content=content, session_id=session, who="ana", agent_id=agent)
    return service.remember(request, Actor()).memory.id


def test_neighbours_are_the_adjacent_live_memories_of_the_same_session(db: Database) -> None:
    service = MemoryService(db)
    first = remember(service, "one", "s1")
    other_session = remember(service, "interleaved from another session", "s2")
    no_session = remember(service, "no session at all", None)
    second = remember(service, "two", "s1")
    removed = remember(service, "three (forgotten)", "s1")
    fourth = remember(service, "four", "s1")
    service.forget("default", removed, reason="test", actor=Actor())

    facts = candidate_context(
        db.reader(), "default", [first, second, fourth, no_session, other_session]
    )
    assert facts[first] == CandidateContext("ana", None, second)
    assert facts[second] == CandidateContext("ana", first, fourth)  # skips the forgotten one
    assert facts[fourth] == CandidateContext("ana", second, None)
    assert facts[no_session].neighbour_ids == ()
    assert facts[other_session].neighbour_ids == ()


def test_another_agent_is_never_a_neighbour_nor_a_candidate(db: Database) -> None:
    service = MemoryService(db)
    mine = remember(service, "mine, first", "shared-session", agent="a")
    theirs = remember(service, "theirs, in between", "shared-session", agent="b")
    mine_too = remember(service, "mine, second", "shared-session", agent="a")

    facts = candidate_context(db.reader(), "a", [mine, theirs, mine_too])
    assert set(facts) == {mine, mine_too}  # b's id asked for by a: not returned
    assert facts[mine].next_id == mine_too and facts[mine_too].previous_id == mine


def test_deleted_candidates_and_empty_lists_return_nothing(db: Database) -> None:
    service = MemoryService(db)
    gone = remember(service, "gone", "s")
    service.forget("default", gone, reason="test", actor=Actor())
    assert candidate_context(db.reader(), "default", [gone]) == {}
    assert candidate_context(db.reader(), "default", []) == {}


def test_session_rings_are_the_nearest_live_memories_each_side(db: Database) -> None:
    service = MemoryService(db)
    turns = [remember(service, f"turn {i}", "s1") for i in range(2)]
    gone = remember(service, "forgotten", "s1")
    remember(service, "another agent's", "s1", agent="b")
    turns += [remember(service, f"turn {i}", "s1") for i in range(2, 5)]
    service.forget("default", gone, reason="test", actor=Actor())

    rings = session_rings(db.reader(), "default", [turns[2], gone, turns[4]], width=3)
    assert set(rings) == {turns[2], turns[4]}  # the forgotten candidate has no window
    assert rings[turns[2]] == ((turns[1], turns[3]), (turns[0], turns[4]))  # no 3rd step
    assert rings[turns[4]] == ((turns[3],), (turns[2],), (turns[1],))  # the last turn
    one = session_rings(db.reader(), "default", [turns[2]], width=1)
    assert one == {turns[2]: ((turns[1], turns[3]),)}
    assert session_rings(db.reader(), "default", [turns[2]], width=0) == {}
    assert session_rings(db.reader(), "b", [turns[2]], width=2) == {}
