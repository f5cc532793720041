"""Scope is checked by the capability services, so a caller without HTTP gets the same refusal."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.db import database_of

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.errors import InvalidInput
from signet_desktop.domain.memory import Actor, MemoryPatch
from signet_desktop.domain.recall import RecallQuery
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest

BAD_AGENTS = ["", "a b", "-leading-dash", "x" * 129, "semi;colon", "nul\x00"]
ACTOR = Actor(changed_by="tester")


@pytest.fixture
def service(tmp_path: Path) -> Iterator[SignetService]:
    svc = build_service(
        WorkspacePaths.for_root(tmp_path),
        SignetConfig(),
        BuildOptions(embedder=HashEmbedder(64), inline_vectors=True),
    )
    yield svc
    svc.close()


def operations(service: SignetService, agent: str, memory_id: str) -> list[Callable[[], Any]]:
    memories = service.memories
    return [
        lambda: memories.remember(RememberRequest(content="a fact", agent_id=agent), ACTOR),
        lambda: memories.get(agent, memory_id),
        lambda: memories.list_page(agent),
        lambda: memories.count(agent),
        lambda: memories.modify(
            agent, memory_id, MemoryPatch(pinned=True), reason="r", if_version=None, actor=ACTOR
        ),
        lambda: memories.forget(agent, memory_id, reason="r", actor=ACTOR),
        lambda: memories.recover(agent, memory_id, reason="r", if_version=None, actor=ACTOR),
        lambda: memories.history(agent, memory_id),
        lambda: service.recall.search(RecallQuery(query="fact", agent_id=agent)),
    ]


def rows(service: SignetService) -> tuple[int, int]:
    conn = database_of(service).reader()
    memories = conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
    history = conn.execute("SELECT COUNT(*) FROM memory_history").fetchone()[0]
    return int(memories), int(history)


@pytest.mark.parametrize("agent", BAD_AGENTS, ids=repr)
def test_every_operation_refuses_a_bad_agent_id_with_the_http_code(
    service: SignetService, agent: str
) -> None:
    memory = service.memories.remember(RememberRequest(content="kept"), ACTOR).memory
    before = rows(service)
    for operation in operations(service, agent, memory.id):
        with pytest.raises(InvalidInput) as caught:
            operation()
        assert caught.value.code == "agent_id_invalid"
    assert rows(service) == before  # a refused request writes nothing


@pytest.mark.parametrize(
    ("actor", "code"),
    [
        (Actor(changed_by="x" * 200), "actor_invalid"),
        (Actor(changed_by="tab\there"), "actor_invalid"),
        (Actor(actor_type="Not Valid"), "actor_invalid"),
        (Actor(session_id="s" * 600), "session_invalid"),
        (Actor(session_id="line\nbreak"), "session_invalid"),
    ],
)
def test_writes_refuse_a_bad_actor_or_session(
    service: SignetService, actor: Actor, code: str
) -> None:
    memory = service.memories.remember(RememberRequest(content="kept"), ACTOR).memory
    before = rows(service)
    writes: list[Callable[[], Any]] = [
        lambda: service.memories.remember(RememberRequest(content="new fact"), actor),
        lambda: service.memories.modify(
            "default", memory.id, MemoryPatch(pinned=True), reason="r", if_version=None, actor=actor
        ),
        lambda: service.memories.forget("default", memory.id, reason="r", actor=actor),
    ]
    for write in writes:
        with pytest.raises(InvalidInput) as caught:
            write()
        assert caught.value.code == code
    assert rows(service) == before
