"""Passage windows: a memory's session memories ring by ring, live, in the agent's scope."""

from __future__ import annotations

from signet_desktop.domain.memory import Actor
from signet_desktop.recall.passages import Window, session_windows
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.storage.database import Database


def remember(
    service: MemoryService, content: str, session: str | None, agent: str = "default"
) -> str:
    request = RememberRequest(content=content, session_id=session, agent_id=agent)
    return service.remember(request, Actor()).memory.id


def test_rings_walk_outwards_in_seq_order_skipping_deleted_and_other_sessions(
    db: Database,
) -> None:
    service = MemoryService(db)
    turns = [remember(service, f"turn {i}", "s1") for i in range(3)]
    remember(service, "another session, in between", "s2")
    gone = remember(service, "forgotten", "s1")
    turns += [remember(service, f"turn {i}", "s1") for i in range(3, 6)]
    service.forget("default", gone, reason="test", actor=Actor())

    windows = session_windows(db.reader(), "default", [turns[2], turns[0]], width=2)
    middle = windows[turns[2]]
    assert middle.rings == ((turns[1], turns[3]), (turns[0], turns[4]))
    assert middle.near == (turns[1], turns[3]) and middle.outer == (turns[0], turns[4])
    assert middle.ids == (turns[2], turns[1], turns[3], turns[0], turns[4])
    assert windows[turns[0]].rings == ((turns[1],), (turns[2],))  # the session's first turn
    wider = session_windows(db.reader(), "default", [turns[2]], width=3)[turns[2]]
    assert wider.outer == (turns[0], turns[4], turns[5])  # nothing before turn 0
    assert session_windows(db.reader(), "default", [turns[2]], width=1)[turns[2]].outer == ()
    assert session_windows(db.reader(), "default", [turns[2]], width=0)[turns[2]] == Window(
        turns[2]
    )


def test_no_session_another_agent_or_deleted_gives_an_empty_window(db: Database) -> None:
    service = MemoryService(db)
    mine = [remember(service, f"mine {i}", "shared", agent="a") for i in range(2)]
    theirs = remember(service, "theirs, in between", "shared", agent="b")
    mine.append(remember(service, "mine 2", "shared", agent="a"))
    alone = remember(service, "no session", None, agent="a")

    windows = session_windows(db.reader(), "a", [mine[0], theirs, alone], width=2)
    assert windows[mine[0]].ids == (mine[0], mine[1], mine[2])  # b's memory is never a ring
    assert windows[theirs] == Window(theirs)  # b's id asked for by a: nothing read
    assert windows[alone] == Window(alone)
    assert session_windows(db.reader(), "a", [], width=2) == {}
