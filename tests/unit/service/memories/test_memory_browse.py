"""MemoryService.browse/browse_count/browse_position/inspect: validation and scope."""

from __future__ import annotations

import pytest

from signet_desktop.domain.browse import BrowseQuery
from signet_desktop.domain.errors import InvalidInput, NotFound
from signet_desktop.domain.memory import Actor
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.storage.database import Database

ACTOR = Actor(changed_by="tester")


@pytest.fixture
def service(db: Database) -> MemoryService:
    return MemoryService(db)


def remember(service: MemoryService, content: str, agent: str = "a", **fields: object) -> str:
    request = RememberRequest(content=content, agent_id=agent, **fields)  # type: ignore[arg-type]
    return service.remember(request, ACTOR).memory.id


def test_browse_pages_count_and_position(service: MemoryService) -> None:
    ids = [remember(service, f"note {n}", tags=("even",) if n % 2 == 0 else ()) for n in range(5)]
    query = BrowseQuery(sort="content", descending=False)
    page = service.browse("a", query, limit=2, offset=2)
    assert [m.content for m in page] == ["note 2", "note 3"]
    assert service.browse_count("a", BrowseQuery(tag="even")) == 3
    assert service.browse_position("a", query, ids[4]) == 4
    assert service.browse_position("a", BrowseQuery(tag="even"), ids[1]) is None


def test_blank_filters_are_off_and_values_are_trimmed(service: MemoryService) -> None:
    remember(service, "alpha", who="ana")
    remember(service, "beta", who="bo")
    assert service.browse_count("a", BrowseQuery(who="  ", text="", tag=" ")) == 2
    assert [m.content for m in service.browse("a", BrowseQuery(who=" ana "))] == ["alpha"]


@pytest.mark.parametrize(
    ("call", "code"),
    [
        (lambda s: s.browse("a", BrowseQuery(sort="seq; DROP TABLE memories")), "bad_sort"),
        (lambda s: s.browse_count("a", BrowseQuery(sort="rowid")), "bad_sort"),
        (lambda s: s.browse("a", BrowseQuery(), limit=0), "bad_paging"),
        (lambda s: s.browse("a", BrowseQuery(), limit=1001), "bad_paging"),
        (lambda s: s.browse("a", BrowseQuery(), offset=-1), "bad_paging"),
        (lambda s: s.browse("a", BrowseQuery(text="x" * 600)), "field_invalid"),
        (lambda s: s.browse("a", BrowseQuery(tag="t" * 200)), "tags_invalid"),
        (lambda s: s.browse("bad agent!", BrowseQuery()), "agent_id_invalid"),
        (lambda s: s.browse_position("", BrowseQuery(), "x"), "agent_id_invalid"),
        (lambda s: s.inspect("bad agent!", "x"), "agent_id_invalid"),
    ],
)
def test_bad_input_is_refused(service: MemoryService, call: object, code: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        call(service)  # type: ignore[operator]
    assert refused.value.code == code


def test_one_agent_never_browses_or_inspects_another(service: MemoryService) -> None:
    theirs = remember(service, "b's secret", agent="b")
    remember(service, "mine", agent="a")
    assert [m.content for m in service.browse("a", BrowseQuery())] == ["mine"]
    assert service.browse_count("a", BrowseQuery(text="secret")) == 0
    assert service.browse_position("a", BrowseQuery(), theirs) is None
    with pytest.raises(NotFound):
        service.inspect("a", theirs)


def test_inspect_shows_deleted_memories_and_browse_lists_them(service: MemoryService) -> None:
    gone = remember(service, "old plan")
    service.forget("a", gone, reason="obsolete", actor=ACTOR)
    with pytest.raises(NotFound):
        service.get("a", gone)
    assert service.inspect("a", gone).is_deleted
    assert [m.id for m in service.browse("a", BrowseQuery(deleted=True))] == [gone]
    assert service.browse_count("a", BrowseQuery()) == 0
