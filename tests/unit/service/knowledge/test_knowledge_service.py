"""KnowledgeService: scoped reads (list, detail, stats) and explicit writes with events."""

from __future__ import annotations

import pytest

from signet_desktop.domain.errors import Conflict, InvalidInput, NotFound
from signet_desktop.domain.events import Event
from signet_desktop.domain.knowledge import KnowledgeChanged
from signet_desktop.domain.memory import Actor
from signet_desktop.service.knowledge.service import KnowledgeService
from signet_desktop.storage.database import Database
from tests.support.graph import seed_graph

ACTOR = Actor(changed_by="ana")


class Recorder:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def publish(self, event: Event) -> None:
        self.events.append(event)


@pytest.fixture
def events() -> Recorder:
    return Recorder()


@pytest.fixture
def knowledge(db: Database, events: Recorder) -> KnowledgeService:
    return KnowledgeService(db, events)


def test_list_filters_by_query_type_and_status(db: Database, knowledge: KnowledgeService) -> None:
    seeded = seed_graph(
        db, "a", entities=[("Postgres", "system"), ("Ana", "person"), ("Pgbouncer", "tool")]
    )
    knowledge.add_alias("a", seeded.entity("Ana").id, "Ana Lima", actor=ACTOR)
    knowledge.archive_entity("a", seeded.entity("Pgbouncer").id, actor=ACTOR)
    assert {e.name for e in knowledge.list_entities("a").items} == {"Postgres", "Ana"}
    assert [e.name for e in knowledge.list_entities("a", query="lima").items] == ["Ana"]
    assert [e.name for e in knowledge.list_entities("a", entity_type="system").items] == [
        "Postgres"
    ]
    assert knowledge.list_entities("a", status="all").total == 3
    page = knowledge.list_entities("a", limit=1, offset=1)
    assert (page.total, len(page.items)) == (2, 1)
    with pytest.raises(InvalidInput) as err:
        knowledge.list_entities("a", entity_type="planet")
    assert err.value.code == "entity_type_invalid"
    with pytest.raises(InvalidInput):
        knowledge.list_entities("a", limit=0)
    with pytest.raises(InvalidInput):
        knowledge.list_entities("a", status="gone")


def test_detail_has_aspects_history_links_and_mentions(
    db: Database, knowledge: KnowledgeService
) -> None:
    seeded = seed_graph(
        db,
        "a",
        entities=[("Postgres", "system")],
        links=[("Ana", "Postgres", "maintains"), ("Postgres", "Disk", "runs_on")],
        mentions={"Postgres": ["Postgres 16 runs billing"]},
    )
    pg = seeded.entity("Postgres").id
    knowledge.add_claim("a", pg, "5432", aspect="deployment", claim_key="port", actor=ACTOR)
    knowledge.add_claim("a", pg, "5433", aspect="deployment", claim_key="port", actor=ACTOR)
    detail = knowledge.get_entity("a", pg)
    (aspect,) = detail.aspects
    assert [(c.content, c.status, c.version) for c in aspect.claims] == [
        ("5433", "active", 2),
        ("5432", "superseded", 1),
    ]
    assert [d.target_name for d in detail.outgoing] == ["Disk"]
    assert [d.source_name for d in detail.incoming] == ["Ana"]
    (mention,) = detail.mentions
    assert mention.excerpt == "Postgres 16 runs billing" and detail.mention_total == 1
    assert detail.entity.mentions == 1
    stats = knowledge.stats("a")
    assert stats.entities == {"active": 3} and stats.claims == {"active": 1, "superseded": 1}
    assert (stats.aspects, stats.dependencies, stats.mentions) == (1, 2, 1)


def test_agent_b_cannot_list_get_or_modify_agent_a(
    db: Database, knowledge: KnowledgeService
) -> None:
    seeded = seed_graph(
        db, "a", entities=["Secret Project"], links=[("Secret Project", "X", "uses")]
    )
    sid = seeded.entity("Secret Project").id
    assert knowledge.list_entities("b").total == 0
    assert knowledge.list_entities("b", query="secret").items == ()
    assert knowledge.stats("b").entities == {}
    for call in (
        lambda: knowledge.get_entity("b", sid),
        lambda: knowledge.add_alias("b", sid, "mine", actor=ACTOR),
        lambda: knowledge.create_aspect("b", sid, "role", actor=ACTOR),
        lambda: knowledge.add_claim("b", sid, "x", aspect="role", actor=ACTOR),
        lambda: knowledge.archive_entity("b", sid, actor=ACTOR),
        lambda: knowledge.rename_entity("b", sid, "Mine", actor=ACTOR),
        lambda: knowledge.archive_link("b", seeded.links[0].id, actor=ACTOR),
    ):
        with pytest.raises(NotFound):
            call()
    other = knowledge.create_entity("b", "Other", actor=ACTOR)[0]
    with pytest.raises(NotFound):
        knowledge.create_link("b", other.id, sid, "uses", actor=ACTOR)
    assert knowledge.get_entity("a", sid).entity.name == "Secret Project"
    with pytest.raises(InvalidInput):
        knowledge.list_entities("not valid!")


def test_writes_publish_knowledge_changed_after_commit(
    knowledge: KnowledgeService, events: Recorder
) -> None:
    ana, created = knowledge.create_entity(
        "a", "Ana", entity_type="person", aliases=["Annie"], actor=ACTOR
    )
    again, created_again = knowledge.create_entity("a", "ana", entity_type="person", actor=ACTOR)
    bob = knowledge.create_entity("a", "Bob", entity_type="person", actor=ACTOR)[0]
    link, _ = knowledge.create_link("a", ana.id, bob.id, "works with", actor=ACTOR)
    renamed = knowledge.rename_entity("a", bob.id, "Robert", actor=ACTOR)
    assert created and not created_again and again.id == ana.id
    assert link.dependency_type == "works_with" and renamed.name == "Robert"
    assert ana.created_by == "ana" and ana.source_kind == "explicit"
    kinds = [(e.operation, e.agent_id) for e in events.events if isinstance(e, KnowledgeChanged)]
    assert kinds[0] == ("create_entity", "a") and ("create_link", "a") in kinds
    with pytest.raises(Conflict):
        knowledge.rename_entity("a", bob.id, "Ana", actor=ACTOR)
    with pytest.raises(InvalidInput):
        knowledge.create_entity("a", "Z", entity_type="planet", actor=ACTOR)
    with pytest.raises(InvalidInput):
        knowledge.add_claim("a", ana.id, "x", actor=ACTOR)  # no aspect named
