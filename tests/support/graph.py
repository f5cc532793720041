"""Seed a knowledge graph for tests through the real write primitives (storage/graph.py).

    seeded = seed_graph(db, "agent-a", entities=[("Postgres", "system"), ("Ana", "person")],
                        aspects={"Postgres": {"deployment": ["runs on port 5433"]}},
                        links=[("Ana", "Postgres", "maintains")],
                        mentions={"Postgres": ["Postgres 16 runs the billing service"]})
    seeded.entity("Postgres").id, seeded.memory_ids["Postgres"], seeded.claims[...]

Mentions are real memories: each text is remembered through `MemoryService.remember` (the
one passed in, else one built on `db`) and linked with `graph.link_mention`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from signet_desktop.domain.knowledge import Aspect, Claim, Dependency, Entity, Provenance
from signet_desktop.domain.memory import Actor
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.storage import graph, graph_claims, graph_links, knowledge_reads
from signet_desktop.storage.database import Database

SEED_ACTOR = "test-seed"


@dataclass
class SeededGraph:
    """What `seed_graph` wrote, by name."""

    agent_id: str
    entities: dict[str, Entity] = field(default_factory=dict)
    aspects: dict[tuple[str, str], Aspect] = field(default_factory=dict)
    claims: dict[tuple[str, str], list[Claim]] = field(default_factory=dict)
    links: list[Dependency] = field(default_factory=list)
    memory_ids: dict[str, list[str]] = field(default_factory=dict)

    def entity(self, name: str) -> Entity:
        return self.entities[name]


def provenance(agent_id: str, **kw: object) -> Provenance:
    """A test provenance for `agent_id` (actor `test-seed` unless given)."""
    return Provenance(actor=str(kw.pop("actor", SEED_ACTOR)), agent_id=agent_id, **kw)  # type: ignore[arg-type]


def seed_graph(
    db: Database,
    agent_id: str = "default",
    *,
    entities: Iterable[tuple[str, str] | str] = (),
    aspects: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
    links: Iterable[tuple[str, str, str]] = (),
    mentions: Mapping[str, Sequence[str]] | None = None,
    memories: MemoryService | None = None,
) -> SeededGraph:
    """Create entities (name or (name, type)), aspects with claims, links (source, target,
    type) and mentions (entity name -> memory texts remembered and linked) for `agent_id`.

    Names used in `aspects`, `links` or `mentions` but not in `entities` are created as
    `unknown`. Everything goes through `storage/graph.py`, so the mutation log is filled too.
    """
    seeded = SeededGraph(agent_id)
    prov = provenance(agent_id)
    wanted: dict[str, str] = {}
    for item in entities:
        name, kind = (item, "unknown") if isinstance(item, str) else item
        wanted[name] = kind
    for name in [*(aspects or {}), *(m for link in links for m in link[:2]), *(mentions or {})]:
        wanted.setdefault(name, "unknown")
    links = list(links)
    with db.write() as conn:
        for name, kind in wanted.items():
            seeded.entities[name], _ = graph.create_entity(conn, prov, name=name, entity_type=kind)
        for name, by_aspect in (aspects or {}).items():
            for aspect_name, contents in by_aspect.items():
                aspect, _ = graph_claims.create_aspect(
                    conn, prov, seeded.entities[name].id, aspect_name
                )
                seeded.aspects[(name, aspect_name)] = aspect
                seeded.claims[(name, aspect_name)] = [
                    graph_claims.add_claim_value(conn, prov, aspect.id, text)[0]
                    for text in contents
                ]
        for source, target, kind in links:
            link, _ = graph_links.create_link(
                conn, prov, seeded.entities[source].id, seeded.entities[target].id, kind
            )
            seeded.links.append(link)
    if mentions:
        service = memories or MemoryService(db)
        for name, texts in mentions.items():
            ids = []
            for text in texts:
                memory = service.remember(
                    RememberRequest(content=text, agent_id=agent_id), Actor(changed_by=SEED_ACTOR)
                ).memory
                with db.write() as conn:
                    graph.link_mention(
                        conn, provenance(agent_id, source_memory_id=memory.id), memory.id,
                        seeded.entities[name].id, name,
                    )  # fmt: skip
                ids.append(memory.id)
            seeded.memory_ids[name] = ids
        reader = db.reader()
        for name, old in list(seeded.entities.items()):
            fresh = knowledge_reads.entity(reader, agent_id, old.id)
            seeded.entities[name] = fresh or old
    return seeded
