"""Structured remember payloads: applied with the memory, rejected whole, no duplicates."""

from __future__ import annotations

import threading

import pytest

from signet_desktop.domain.errors import InvalidInput
from signet_desktop.domain.knowledge import parse_structured
from signet_desktop.domain.memory import Actor
from signet_desktop.service.knowledge.service import KnowledgeService
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.storage.database import Database

ACTOR = Actor(changed_by="agent-x")

PAYLOAD = {
    "entities": [
        {"name": "Postgres 16", "type": "system", "aliases": ["PG16"]},
        "Ana",
    ],
    "aspects": [
        {
            "entity": "Postgres 16",
            "name": "deployment",
            "claims": ["runs in docker", {"content": "5433", "claim_key": "port"}],
        },
        {"entity": "Billing", "entity_type": "service", "name": "storage", "claims": ["postgres"]},
    ],
    "hints": ["which port does postgres use?", "where does billing store data?"],
}


def count(db: Database, table: str) -> int:
    return int(db.reader().execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def remember(db: Database, text: str, raw: object, agent: str = "a") -> object:
    request = RememberRequest(content=text, agent_id=agent, structured=parse_structured(raw))  # type: ignore[arg-type]
    return MemoryService(db).remember(request, ACTOR)


def test_payload_is_applied_with_the_memory(db: Database) -> None:
    outcome = remember(db, "Postgres 16 moved to port 5433 for billing", PAYLOAD)
    applied = outcome.structured  # type: ignore[attr-defined]
    assert applied is not None
    assert (applied.entities_linked, applied.claims_written, applied.hints_written) == (3, 3, 2)
    memory_id = outcome.memory.id  # type: ignore[attr-defined]
    knowledge = KnowledgeService(db)
    page = knowledge.list_entities("a")
    assert {(e.name, e.entity_type) for e in page.items} == {
        ("Postgres 16", "system"), ("Ana", "unknown"), ("Billing", "service"),
    }  # fmt: skip
    pg = next(e for e in page.items if e.name == "Postgres 16")
    detail = knowledge.get_entity("a", pg.id)
    assert [a.alias for a in detail.aliases] == ["PG16"]
    claims = detail.aspects[0].claims
    assert {c.content for c in claims} == {"runs in docker", "5433"}
    assert all(c.memory_id == memory_id for c in claims)
    assert all(any(e.source_ref == f"memory:{memory_id}" for e in c.evidence) for c in claims)
    assert detail.entity.source_kind == "memory" and detail.entity.source_id == memory_id
    assert [m.memory_id for m in detail.mentions] == [memory_id] and detail.entity.mentions == 1
    assert count(db, "memory_hints") == 2
    actors = {r[0] for r in db.reader().execute("SELECT DISTINCT actor FROM graph_mutations")}
    assert actors == {"agent-x"}


def test_a_second_memory_reuses_entities_and_versions_keyed_claims(db: Database) -> None:
    remember(db, "first", PAYLOAD)
    second = {"aspects": [{"entity": "postgres 16", "entity_type": "system", "name": "Deployment",
                           "claims": [{"content": "6432", "claim_key": "port"}]}]}  # fmt: skip
    outcome = remember(db, "second: the port is now 6432", second)
    assert outcome.structured.entities_linked == 1  # type: ignore[attr-defined]
    assert count(db, "entities") == 3 and count(db, "entity_aspects") == 2
    rows = (
        db.reader()
        .execute(
            "SELECT content, status, version FROM entity_attributes WHERE claim_key = 'port' "
            "ORDER BY version"
        )
        .fetchall()
    )
    assert [tuple(r) for r in rows] == [("5433", "superseded", 1), ("6432", "active", 2)]


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        ({"entities": [{"name": "X", "type": "spaceship"}]}, "unknown entity type"),
        ({"aspects": [{"entity": "X", "name": "a" * 500}]}, "longer than"),
        ({"aspects": [{"entity": "X", "name": "ok", "claims": ["c" * 5000]}]}, "longer than"),
        ({"entities": [f"e{n}" for n in range(51)]}, "at most 50"),
        ({"aspects": [{"entity": "X", "name": "n", "claims": ["c"] * 21}]}, "at most 20"),
        ({"hints": ["h"] * 11}, "at most 10"),
        ({"entities": "Postgres"}, "must be a list"),
        ({"entities": [{"type": "system"}]}, "name must be non-empty"),
    ],
)
def test_bad_payloads_are_refused_before_anything_is_written(
    db: Database, raw: dict[str, object], needle: str
) -> None:
    with pytest.raises(InvalidInput) as err:
        remember(db, "never stored", raw)
    assert needle in err.value.message
    assert count(db, "memories") == 0 and count(db, "entities") == 0


def test_a_failure_inside_the_transaction_rolls_back_the_memory(db: Database) -> None:
    remember(db, "setup", {"aspects": [{"entity": "Ana", "name": "role"}]})
    knowledge = KnowledgeService(db)
    ana = knowledge.list_entities("a").items[0]
    aspect = knowledge.get_entity("a", ana.id).aspects[0].aspect
    with db.write() as conn:  # an aspect merged away cannot take claims
        from signet_desktop.storage import graph_claims
        from tests.support.graph import provenance

        other, _ = graph_claims.create_aspect(conn, provenance("a"), ana.id, "job")
        graph_claims.merge_aspects(conn, provenance("a"), other.id, [aspect.id])
    before = count(db, "memories")
    with pytest.raises(Exception):  # noqa: B017 (Conflict from the graph primitive)
        remember(db, "rolled back", {"aspects": [{"entity": "Ana", "name": "role"}]})
    assert count(db, "memories") == before


def test_concurrent_structured_writes_make_one_entity(db: Database) -> None:
    service = MemoryService(db)
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            aspect = {"entity": "Shared Thing", "name": "notes", "claims": [f"note {n}"]}
            raw = {"entities": [{"name": "Shared Thing", "type": "concept"}], "aspects": [aspect]}
            request = RememberRequest(
                content=f"note number {n} about the shared thing", agent_id="a",
                structured=parse_structured(raw),
            )  # fmt: skip
            service.remember(request, ACTOR)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert count(db, "entities") == 1 and count(db, "entity_aspects") == 1
    assert count(db, "entity_attributes") == 12
    assert db.reader().execute("SELECT mentions FROM entities").fetchone()[0] == 12


def test_dedupe_applies_nothing(db: Database) -> None:
    remember(db, "same text", {"entities": ["Ana"]})
    outcome = remember(db, "same text", {"entities": ["Bob"]})
    assert outcome.deduped and outcome.structured is None  # type: ignore[attr-defined]
    assert count(db, "entities") == 1
