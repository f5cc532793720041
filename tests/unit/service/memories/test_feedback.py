"""Memory feedback: a running mean per (agent, session, memory), all or nothing, scoped."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.db import database_of
from support.mcp_inprocess import built_service

from signet_desktop.domain.errors import InvalidInput, NotFound
from signet_desktop.domain.memory import Actor
from signet_desktop.service.facade import SignetService
from signet_desktop.service.hooks.service import HookContext
from signet_desktop.service.memories.service import RememberRequest


@pytest.fixture
def service(tmp_path: Path) -> Iterator[SignetService]:
    with built_service(tmp_path) as svc:
        yield svc


def _remember(service: SignetService, agent: str, content: str) -> str:
    request = RememberRequest(agent_id=agent, content=content)
    return service.memories.remember(request, Actor()).memory.id


def _rows(service: SignetService) -> list[tuple[Any, ...]]:
    conn = database_of(service).reader()
    return [
        tuple(row)
        for row in conn.execute(
            "SELECT agent_id, session_key, memory_id, score, ratings, injected "
            "FROM memory_feedback ORDER BY agent_id, session_key, memory_id"
        )
    ]


def test_ratings_fold_into_a_running_mean_per_session(service: SignetService) -> None:
    a = _remember(service, "alice", "first memory")
    b = _remember(service, "alice", "second memory")
    feedback = service.feedback
    first = feedback.rate("alice", "s1", {a: 1, b: -0.5})
    assert first.session_key == "s1"
    assert [(r.memory_id, r.score, r.ratings) for r in first.rated] == [(a, 1.0, 1), (b, -0.5, 1)]
    second = feedback.rate("alice", "s1", {a: 0})
    assert [(r.score, r.ratings) for r in second.rated] == [(0.5, 2)]
    feedback.rate("alice", "s2", {a: -1})  # another session keeps its own mean
    assert set(_rows(service)) == {
        ("alice", "s1", a, 0.5, 2, 0),
        ("alice", "s1", b, -0.5, 1, 0),
        ("alice", "s2", a, -1.0, 1, 0),
    }


def test_injected_says_whether_the_hooks_put_it_in_that_session(service: SignetService) -> None:
    shown = _remember(service, "alice", "injected memory")
    start = service.hooks.session_start(HookContext("alice", "claude-code", "s1"))
    assert [m.id for m in start.memories] == [shown]  # the ledger now holds it for s1
    found = _remember(service, "alice", "searched memory")  # stored after the start
    rated = service.feedback.rate("alice", "s1", {shown: 1, found: 0.5}).rated
    assert {r.memory_id: r.injected for r in rated} == {shown: True, found: False}


@pytest.mark.parametrize(
    ("ratings", "code"),
    [
        ({}, "ratings_invalid"),
        (None, "ratings_invalid"),
        ([], "ratings_invalid"),
        ({"MID": 1.5}, "ratings_invalid"),
        ({"MID": -2}, "ratings_invalid"),
        ({"MID": float("nan")}, "ratings_invalid"),
        ({"MID": True}, "ratings_invalid"),
        ({"MID": "0.5"}, "ratings_invalid"),
        ({"": 0.5}, "ratings_invalid"),
        ({"a\x00b": 0.5}, "ratings_invalid"),
        ({f"m{i}": 0 for i in range(201)}, "ratings_invalid"),
    ],
)
def test_bad_ratings_are_refused_and_write_nothing(
    service: SignetService, ratings: Any, code: str
) -> None:
    memory_id = _remember(service, "alice", "a memory")
    if isinstance(ratings, dict) and "MID" in ratings:
        ratings = {memory_id: ratings["MID"]}
    with pytest.raises(InvalidInput) as refused:
        service.feedback.rate("alice", "s1", ratings)
    assert refused.value.code == code
    assert _rows(service) == []


@pytest.mark.parametrize("session_key", ["", "x" * 513, "tab\there"])
def test_a_bad_session_key_is_refused(service: SignetService, session_key: str) -> None:
    memory_id = _remember(service, "alice", "a memory")
    with pytest.raises(InvalidInput):
        service.feedback.rate("alice", session_key, {memory_id: 1})
    assert _rows(service) == []


def test_only_the_agents_live_memories_are_rated_all_or_nothing(service: SignetService) -> None:
    mine = _remember(service, "alice", "alice's memory")
    theirs = _remember(service, "bob", "bob's memory")
    gone = _remember(service, "alice", "forgotten memory")
    service.memories.forget("alice", gone, reason="test", actor=Actor())
    for other in (theirs, gone, "no-such-id"):
        with pytest.raises(NotFound) as refused:
            service.feedback.rate("alice", "s1", {mine: 1, other: 1})
        assert refused.value.code == "not_found" and other in refused.value.message
        assert mine not in refused.value.message
    assert _rows(service) == []


def test_feedback_goes_with_the_memory_when_it_is_purged(service: SignetService) -> None:
    memory_id = _remember(service, "alice", "to be purged")
    service.feedback.rate("alice", "s1", {memory_id: 1})
    with database_of(service).write() as conn:
        conn.execute("DELETE FROM memories WHERE id = :id", {"id": memory_id})
    assert _rows(service) == []
