"""The memory lifecycle publishes one event per change, after it commits, and none otherwise."""

from __future__ import annotations

import pytest

from signet_desktop.domain.errors import InvalidInput
from signet_desktop.domain.events import Event
from signet_desktop.domain.memory import Actor, MemoryPatch
from signet_desktop.service.events import EventBus, Subscription
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.storage.database import Database

ACTOR = Actor(changed_by="tester")


@pytest.fixture
def service(db: Database, bus: EventBus) -> MemoryService:
    return MemoryService(db, events=bus)


def kinds(subscription: Subscription) -> list[str]:
    return [delivery.event.kind for delivery in subscription.drain()]


def test_lifecycle_events_in_order(service: MemoryService, events: Subscription) -> None:
    memory = service.remember(RememberRequest(content="billing runs on Postgres"), ACTOR).memory
    patch = MemoryPatch(tags=("db",))
    service.modify("default", memory.id, patch, reason="tag", if_version=None, actor=ACTOR)
    service.forget("default", memory.id, reason="stale", actor=ACTOR)
    service.recover("default", memory.id, reason="oops", if_version=None, actor=ACTOR)
    delivered = events.drain()
    assert [d.event.kind for d in delivered] == [
        "memory.created",
        "memory.updated",
        "memory.deleted",
        "memory.recovered",
    ]
    first: Event = delivered[0].event
    assert first.agent_id == "default" and first.memory_id == memory.id
    assert delivered[1].event.changed == ("tags",)
    assert [getattr(d.event, "version", None) for d in delivered[1:]] == [2, 3, 4]


def test_published_after_commit_so_a_reader_sees_the_row(
    service: MemoryService, bus: EventBus, db: Database
) -> None:
    seen: list[int] = []

    def read_back(event: Event) -> None:
        memory_id = event.memory_id
        row = db.reader().execute("SELECT COUNT(*) FROM memories WHERE id = ?", (memory_id,))
        seen.append(int(row.fetchone()[0]))

    bus.connect(read_back)
    service.remember(RememberRequest(content="visible when announced"), ACTOR)
    assert seen == [1]


def test_dedupe_noop_and_refusal_publish_nothing(
    service: MemoryService, events: Subscription
) -> None:
    memory = service.remember(RememberRequest(content="only once"), ACTOR).memory
    events.drain()
    service.remember(RememberRequest(content="only once"), ACTOR)  # deduped
    unchanged = MemoryPatch(tags=())
    service.modify("default", memory.id, unchanged, reason="same", if_version=None, actor=ACTOR)
    with pytest.raises(InvalidInput):
        service.remember(RememberRequest(content="   "), ACTOR)
    assert kinds(events) == []


def test_other_agents_events_stay_out_of_a_scoped_subscription(
    service: MemoryService, bus: EventBus
) -> None:
    alice = bus.subscribe(agent_id="alice")
    service.remember(RememberRequest(content="bob's secret", agent_id="bob"), ACTOR)
    service.remember(RememberRequest(content="alice's note", agent_id="alice"), ACTOR)
    assert [d.event.agent_id for d in alice.drain()] == ["alice"]
