"""Batch forget and modify in the core: one transaction, events after commit, stale tokens."""

from __future__ import annotations

import pytest

from signet_desktop.domain.errors import Conflict, InvalidInput
from signet_desktop.domain.memory import Actor, BatchPatch, MemoryPatch, MemorySelector
from signet_desktop.service.events import EventBus, Subscription
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.storage.database import Database

ACTOR = Actor(changed_by="tester")


@pytest.fixture
def service(db: Database, bus: EventBus) -> MemoryService:
    return MemoryService(db, events=bus)


def _remember(service: MemoryService, *texts: str, tags: tuple[str, ...] = ()) -> list[str]:
    return [
        service.remember(RememberRequest(content=text, tags=tags), ACTOR).memory.id
        for text in texts
    ]


def test_a_token_goes_stale_when_a_candidate_changes(service: MemoryService) -> None:
    ids = _remember(service, *(f"note {i}" for i in range(26)), tags=("bulk",))
    selector = MemorySelector(tags=("bulk",), limit=200)
    preview = service.preview_forget("default", selector)
    assert len(preview.candidates) == 26 and preview.requires_confirm
    assert service.preview_forget("default", selector).confirm_token == preview.confirm_token
    service.modify("default", ids[0], MemoryPatch(pinned=True), reason="r", if_version=None,
                   actor=ACTOR)  # fmt: skip
    with pytest.raises(Conflict) as raised:
        service.forget_batch("default", selector, reason="r", confirm_token=preview.confirm_token,
                             actor=ACTOR)  # fmt: skip
    assert raised.value.code == "confirm_token_mismatch"
    assert service.count("default") == 26


def test_batch_events_follow_the_commit(service: MemoryService, events: Subscription) -> None:
    a, b = _remember(service, "first", "second")
    events.drain()
    outcome = service.forget_batch(
        "default", MemorySelector(ids=(a, b, a)), reason="r", actor=ACTOR
    )
    assert outcome.deleted == 2 and [item.status for item in outcome.results] == ["deleted"] * 2
    assert [d.event.kind for d in events.drain()] == ["memory.deleted", "memory.deleted"]


def test_batch_modify_refuses_before_writing(service: MemoryService, events: Subscription) -> None:
    (a,) = _remember(service, "first")
    events.drain()
    patches = [BatchPatch(a, MemoryPatch(tags=("x",))), BatchPatch("other", MemoryPatch())]
    with pytest.raises(InvalidInput) as raised:
        service.modify_batch("default", patches, reason="r", actor=ACTOR)
    assert raised.value.code == "empty_patch" and raised.value.details["index"] == 1
    assert service.get("default", a).tags == () and events.drain() == []


def test_list_page_filters_by_type(service: MemoryService) -> None:
    service.remember(RememberRequest(content="a rule", type="rule"), ACTOR)
    service.remember(RememberRequest(content="a fact"), ACTOR)
    page = service.list_page("default", memory_type="rule")
    assert [m.type for m in page.memories] == ["rule"] and page.stats.total == 2
