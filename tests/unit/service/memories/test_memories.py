"""Memory lifecycle through the MemoryService: remember, dedupe, modify, forget, recover."""

from __future__ import annotations

import pytest

from signet_desktop.domain.errors import Conflict, InvalidInput, NotFound
from signet_desktop.domain.memory import Actor, MemoryPatch
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.storage.database import Database

ACTOR = Actor(changed_by="tester", request_id="req-1")


@pytest.fixture
def service(db: Database) -> MemoryService:
    return MemoryService(db)


def count(db: Database, table: str) -> int:
    return int(db.reader().execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def test_remember_stores_row_history_and_fts(service: MemoryService, db: Database) -> None:
    outcome = service.remember(
        RememberRequest(content="The deploy key lives in vault", tags=("ops",), who="ana"), ACTOR
    )
    memory = outcome.memory
    assert not outcome.deduped
    assert (memory.content, memory.tags, memory.who, memory.version) == (
        "The deploy key lives in vault",
        ("ops",),
        "ana",
        1,
    )
    events = service.history("default", memory.id)
    assert [e.event for e in events] == ["created"]
    assert events[0].changed_by == "tester" and events[0].request_id == "req-1"
    hits = (
        db.reader()
        .execute("SELECT rowid FROM memories_fts WHERE memories_fts MATCH 'vault'")
        .fetchall()
    )
    assert len(hits) == 1


def test_critical_and_tag_prefixes(service: MemoryService) -> None:
    memory = service.remember(RememberRequest(content="critical: [db, infra]: pg 16"), ACTOR).memory
    assert memory.pinned and memory.importance == 1.0
    assert memory.tags == ("db", "infra") and memory.content == "pg 16"


def test_dedupe_order_source_id_then_idempotency_then_content(
    service: MemoryService, db: Database
) -> None:
    first = service.remember(
        RememberRequest(content="alpha", source_id="s1", idempotency_key="k1"), ACTOR
    ).memory
    by_source = service.remember(RememberRequest(content="different", source_id="s1"), ACTOR)
    by_key = service.remember(RememberRequest(content="other", idempotency_key="k1"), ACTOR)
    by_content = service.remember(RememberRequest(content="  ALPHA.  "), ACTOR)
    assert all(o.deduped and o.memory.id == first.id for o in (by_source, by_key, by_content))
    assert count(db, "memories") == 1
    assert count(db, "memory_history") == 1


def test_dedupe_is_scoped_per_agent(service: MemoryService) -> None:
    a = service.remember(RememberRequest(content="same text", agent_id="a"), ACTOR)
    b = service.remember(RememberRequest(content="same text", agent_id="b"), ACTOR)
    assert not b.deduped and a.memory.id != b.memory.id


@pytest.mark.parametrize(
    ("request_kwargs", "code"),
    [
        ({"content": ""}, "content_empty"),
        ({"content": "   \n\t"}, "content_empty"),
        ({"content": "a\x00b"}, "content_invalid"),
        ({"content": "x" * 100_001}, "content_too_long"),
        ({"content": "ok", "importance": 1.5}, "importance_invalid"),
        ({"content": "ok", "importance": float("nan")}, "importance_invalid"),
        ({"content": "ok", "type": "nonsense"}, "bad_type"),
        ({"content": "ok", "tags": ("t" * 101,)}, "tags_invalid"),
        ({"content": "ok", "who": "w" * 600}, "field_invalid"),
    ],
)
def test_bad_remember_input_writes_nothing(
    service: MemoryService, db: Database, request_kwargs: dict[str, object], code: str
) -> None:
    with pytest.raises(InvalidInput) as raised:
        service.remember(RememberRequest(**request_kwargs), ACTOR)  # type: ignore[arg-type]
    assert raised.value.code == code
    assert count(db, "memories") == 0 and count(db, "memory_history") == 0


def test_modify_with_version_check_and_history(service: MemoryService) -> None:
    memory = service.remember(RememberRequest(content="tune gc"), ACTOR).memory
    change = service.modify(
        "default",
        memory.id,
        MemoryPatch(tags=("jvm",), importance=0.9),
        reason="triage",
        if_version=1,
        actor=ACTOR,
    )
    assert change.previous_version == 1 and change.changed == ("importance", "tags")
    changed = change.memory
    assert changed.version == 2 and changed.tags == ("jvm",) and changed.importance == 0.9
    with pytest.raises(Conflict) as raised:
        service.modify(
            "default", memory.id, MemoryPatch(pinned=True), reason="x", if_version=1, actor=ACTOR
        )
    assert raised.value.code == "version_conflict"
    events = service.history("default", memory.id)
    assert [e.event for e in events] == ["created", "modified"]
    assert events[1].reason == "triage"
    assert events[1].metadata["before"] == {"importance": 0.5, "tags": []}


def test_content_and_type_change_and_history_keeps_the_old_text(service: MemoryService) -> None:
    memory = service.remember(RememberRequest(content="evidence"), ACTOR).memory
    change = service.modify(
        "default", memory.id, MemoryPatch(content="rewritten", type="decision"), reason="typo",
        if_version=1, actor=ACTOR,
    )  # fmt: skip
    assert change.changed == ("content", "type") and change.vector == "none"
    assert service.get("default", memory.id).content == "rewritten"
    assert service.get("default", memory.id).type == "decision"
    event = service.history("default", memory.id)[-1]
    assert (event.event, event.old_content, event.new_content) == (
        "modified", "evidence", "rewritten",
    )  # fmt: skip
    assert event.metadata["contentChanged"] is True and event.metadata["ifVersion"] == 1
    assert event.metadata["before"] == {"type": "fact"}  # the old text is old_content


def test_modify_requires_reason_and_a_change(service: MemoryService) -> None:
    memory = service.remember(RememberRequest(content="x1"), ACTOR).memory
    with pytest.raises(InvalidInput, match="reason"):
        service.modify("default", memory.id, MemoryPatch(pinned=True), reason=" ",
                       if_version=None, actor=ACTOR)  # fmt: skip
    with pytest.raises(InvalidInput, match="nothing to change"):
        service.modify("default", memory.id, MemoryPatch(), reason="r", if_version=None,
                       actor=ACTOR)  # fmt: skip


def test_forget_and_recover_round_trip(service: MemoryService, db: Database) -> None:
    memory = service.remember(RememberRequest(content="temporary note"), ACTOR).memory
    deleted = service.forget("default", memory.id, reason="obsolete", actor=ACTOR).memory
    assert deleted.is_deleted and deleted.version == 2
    with pytest.raises(NotFound):
        service.get("default", memory.id)
    assert service.list_page("default").stats.total == 0
    recovered = service.recover(
        "default", memory.id, reason="oops", if_version=2, actor=ACTOR
    ).memory
    assert not recovered.is_deleted and recovered.version == 3
    events = [e.event for e in service.history("default", memory.id)]
    assert events == ["created", "deleted", "recovered"]


def test_forget_pinned_requires_force(service: MemoryService) -> None:
    memory = service.remember(RememberRequest(content="keep me", pinned=True), ACTOR).memory
    with pytest.raises(Conflict) as raised:
        service.forget("default", memory.id, reason="r", actor=ACTOR)
    assert raised.value.code == "pinned_requires_force"
    assert service.forget(
        "default", memory.id, reason="r", force=True, actor=ACTOR
    ).memory.is_deleted


def test_recover_statuses(service: MemoryService, db: Database) -> None:
    with pytest.raises(NotFound):
        service.recover("default", "no-such-id", reason="r", if_version=None, actor=ACTOR)
    live = service.remember(RememberRequest(content="live"), ACTOR).memory
    with pytest.raises(Conflict) as raised:
        service.recover("default", live.id, reason="r", if_version=None, actor=ACTOR)
    assert raised.value.code == "not_deleted"
    service.forget("default", live.id, reason="r", actor=ACTOR)
    with db.write() as conn:
        conn.execute(
            "UPDATE memories SET deleted_at = '2020-01-01T00:00:00.000Z' WHERE id = :id",
            {"id": live.id},
        )
    with pytest.raises(Conflict) as raised:
        service.recover("default", live.id, reason="r", if_version=None, actor=ACTOR)
    assert raised.value.code == "retention_expired"


def test_recover_refuses_to_duplicate_a_live_memory(service: MemoryService) -> None:
    old = service.remember(RememberRequest(content="same"), ACTOR).memory
    service.forget("default", old.id, reason="r", actor=ACTOR)
    service.remember(RememberRequest(content="same"), ACTOR)
    with pytest.raises(Conflict) as raised:
        service.recover("default", old.id, reason="r", if_version=None, actor=ACTOR)
    assert raised.value.code == "duplicate_live_memory"


def test_agent_cannot_touch_another_agents_memory(service: MemoryService) -> None:
    theirs = service.remember(RememberRequest(content="b's secret", agent_id="b"), ACTOR).memory
    with pytest.raises(NotFound):
        service.get("a", theirs.id)
    with pytest.raises(NotFound):
        service.modify("a", theirs.id, MemoryPatch(pinned=True), reason="r", if_version=None,
                       actor=ACTOR)  # fmt: skip
    with pytest.raises(NotFound):
        service.forget("a", theirs.id, reason="r", actor=ACTOR)
    with pytest.raises(NotFound):
        service.history("a", theirs.id)
    assert service.list_page("a").memories == []
    assert service.get("b", theirs.id).version == 1


def test_paging(service: MemoryService) -> None:
    for i in range(5):
        service.remember(RememberRequest(content=f"note {i}"), ACTOR)
    page = service.list_page("default", limit=2, offset=1)
    assert len(page.memories) == 2 and page.stats.total == 5
    with pytest.raises(InvalidInput):
        service.list_page("default", limit=-1)


def test_count_is_scoped_and_skips_deleted(service: MemoryService) -> None:
    kept = service.remember(RememberRequest(content="kept"), ACTOR).memory
    gone = service.remember(RememberRequest(content="gone"), ACTOR).memory
    service.remember(RememberRequest(content="theirs", agent_id="b"), ACTOR)
    service.forget("default", gone.id, reason="r", actor=ACTOR)
    assert service.count("default") == 1 == service.list_page("default").stats.total
    assert service.count("b") == 1
    assert service.get("default", kept.id).id == kept.id


def test_getting_a_forgotten_memory_says_until_when_it_can_be_recovered(
    service: MemoryService,
) -> None:
    memory = service.remember(RememberRequest(content="temporary note"), ACTOR).memory
    service.forget("default", memory.id, reason="done", actor=ACTOR)
    with pytest.raises(NotFound) as caught:
        service.get("default", memory.id)
    message = caught.value.message
    assert caught.value.code == "not_found"  # still a 404 for Signet's clients
    assert "was deleted on" in message and "can be recovered until" in message
    assert f"signet memory recover {memory.id}" in message
    with pytest.raises(NotFound, match="not found"):
        service.get("default", "no-such-id")
