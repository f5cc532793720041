"""Remember-time entity linking: mention rows to existing entities, never a new entity."""

from __future__ import annotations

import pytest

from signet_desktop.domain.memory import Actor
from signet_desktop.service.knowledge.lookup import entity_memories
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.storage.database import Database

ACTOR = Actor(changed_by="tester")
NOW = "2026-12-01T00:00:00.000Z"


def add_entity(
    db: Database, entity_id: str, name: str, agent: str = "default", status: str = "active"
) -> None:
    merged = "e-other" if status == "merged" else None
    with db.write() as conn:
        conn.execute(
            "INSERT INTO entities (id, agent_id, name, canonical_name, status, merged_into,"
            " created_at, updated_at) VALUES (?, ?, ?, lower(?), ?, ?, ?, ?)",
            (entity_id, agent, name, name, status, merged, NOW, NOW),
        )


def add_alias(db: Database, entity_id: str, alias: str, agent: str = "default") -> None:
    with db.write() as conn:
        conn.execute(
            "INSERT INTO entity_aliases (id, entity_id, agent_id, alias, canonical_alias,"
            " created_at) VALUES (?, ?, ?, ?, lower(?), ?)",
            (f"alias-{alias}", entity_id, agent, alias, alias, NOW),
        )


def count(db: Database, table: str) -> int:
    return int(db.reader().execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


@pytest.fixture
def service(db: Database) -> MemoryService:
    return MemoryService(db)


def test_a_memory_links_to_the_existing_entities_it_names(
    service: MemoryService, db: Database
) -> None:
    add_entity(db, "e-pg", "Postgres 16")
    add_entity(db, "e-ana", "Ana")
    add_entity(db, "e-stripe", "Stripe")
    add_alias(db, "e-stripe", "Stripe Billing")
    text = "Ana moved billing to Postgres 16; invoices go through Stripe Billing and Kafka"
    memory = service.remember(RememberRequest(content=text), ACTOR).memory
    links = service.mentions("default", memory.id)
    assert {(m.entity_id, m.mention_text) for m in links} == {
        ("e-pg", "Postgres 16"),
        ("e-ana", "Ana"),
        ("e-stripe", "Stripe Billing"),
    }
    assert {m.entity_id: m.confidence for m in links}["e-stripe"] == 0.9  # through an alias
    assert count(db, "entities") == 3 and count(db, "entity_aliases") == 1  # Kafka: no entity


def test_only_the_same_agents_active_entities_are_linked(
    service: MemoryService, db: Database
) -> None:
    add_entity(db, "e-other", "Kafka", agent="b")
    add_entity(db, "e-old", "Redis", status="archived")
    memory = service.remember(RememberRequest(content="Kafka feeds Redis"), ACTOR).memory
    assert service.mentions("default", memory.id) == []
    theirs = service.remember(RememberRequest(content="Kafka feeds Redis", agent_id="b"), ACTOR)
    assert [m.entity_id for m in service.mentions("b", theirs.memory.id)] == ["e-other"]


def test_bulk_remember_links_too_and_a_memory_without_names_writes_nothing(
    service: MemoryService, db: Database
) -> None:
    add_entity(db, "e-pg", "Postgres")
    outcomes = service.remember_many(
        [RememberRequest(content="Postgres is the store"), RememberRequest(content="no names")],
        ACTOR,
    )
    assert [len(service.mentions("default", o.memory.id)) for o in outcomes] == [1, 0]
    assert count(db, "memory_entity_mentions") == 1


def test_the_prompt_lookup_finds_memories_mentioning_named_entities(
    service: MemoryService, db: Database
) -> None:
    add_entity(db, "e-ledger", "Ledger")
    add_alias(db, "e-ledger", "LDG")
    low = service.remember(RememberRequest(content="Ledger exports run at 2am"), ACTOR).memory
    high = service.remember(
        RememberRequest(content="The Ledger service owns invoices", importance=0.9), ACTOR
    ).memory
    other = service.remember(RememberRequest(content="Ledger for agent b", agent_id="b"), ACTOR)
    service.remember(RememberRequest(content="unrelated note"), ACTOR)
    found = entity_memories(db.reader(), "default", "why is LDG slow today?")
    assert [m.id for m in found] == [high.id, low.id]  # importance first; b's row never
    assert other.memory.id not in {m.id for m in found}
    assert entity_memories(db.reader(), "default", "nothing named here") == []
    service.forget("default", high.id, reason="gone", actor=ACTOR)
    assert [m.id for m in entity_memories(db.reader(), "default", "Ledger?")] == [low.id]
