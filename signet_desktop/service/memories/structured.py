"""Structured remember payloads: a memory's `structured` block applied with the memory.

Runs inside the remember write transaction (like `service/knowledge/mention_linking.py`), so the
memory, its entities, aspects, claims, mention links and hints commit together or not at
all. Every graph write goes through `storage/graph.py` with the new memory as its source
(`Provenance.source_memory_id`, evidence `memory:<id>`); hints go to `storage/hints.py`.
The payload was validated before the transaction (`domain/knowledge.py: parse_structured`).
"""

from __future__ import annotations

from signet_desktop.domain.entities import canonical_entity_name
from signet_desktop.domain.knowledge import (
    Entity,
    Evidence,
    Provenance,
    StructuredOutcome,
    StructuredPayload,
)
from signet_desktop.domain.memory import Actor, Memory
from signet_desktop.service.knowledge.service import write_claim
from signet_desktop.storage import graph, graph_claims, hints
from signet_desktop.storage import knowledge_reads as reads
from signet_desktop.storage.connect import Connection

QUOTE_CHARS = 280


def provenance_for(memory: Memory, actor: Actor) -> Provenance:
    """The provenance of graph rows a remembered memory's payload writes."""
    return Provenance(
        actor=actor.changed_by,
        agent_id=memory.agent_id,
        evidence=(Evidence(memory.content[:QUOTE_CHARS], f"memory:{memory.id}"),),
        source_memory_id=memory.id,
    )


def apply_structured(
    conn: Connection, memory: Memory, payload: StructuredPayload, actor: Actor
) -> StructuredOutcome:
    """Write the payload for `memory` (get-or-create entities, aspects, claims; link the
    memory to every entity it names; attach its hints). Returns what was written."""
    prov = provenance_for(memory, actor)
    named: dict[str, Entity] = {}  # canonical name -> entity, for aspects naming them
    linked: dict[str, Entity] = {}  # entity id -> entity, every one the memory names
    claims = 0
    for item in payload.entities:
        entity, _ = graph.create_entity(
            conn, prov, name=item.name, entity_type=item.entity_type, description=item.description
        )
        for alias in item.aliases:
            graph.add_alias(conn, prov, entity.id, alias)
        named.setdefault(canonical_entity_name(item.name), entity)
        linked[entity.id] = entity
    for aspect_item in payload.aspects:
        entity = _entity_for(conn, prov, named, aspect_item.entity, aspect_item.entity_type)
        linked[entity.id] = entity
        aspect, _ = graph_claims.create_aspect(conn, prov, entity.id, aspect_item.name)
        for claim in aspect_item.claims:
            _, wrote = write_claim(
                conn,
                prov,
                aspect.id,
                claim.content,
                claim_key=claim.claim_key or None,
                kind=claim.kind,
                confidence=claim.confidence,
                importance=claim.importance,
            )
            claims += int(wrote)
    ids = tuple(linked)
    for entity in linked.values():
        graph.link_mention(conn, prov, memory.id, entity.id, entity.name)
    written = hints.insert_hints(conn, memory.agent_id, memory.id, payload.hints)
    return StructuredOutcome(
        entities_linked=len(ids), entity_ids=ids, claims_written=claims, hints_written=written
    )


def _entity_for(
    conn: Connection,
    prov: Provenance,
    named: dict[str, Entity],
    name: str,
    entity_type: str | None,
) -> Entity:
    """The entity an aspect names: one of the payload's, else an active one of the agent's
    (of that type when given), else a new one (`unknown` when no type is given)."""
    canonical = canonical_entity_name(name)
    found = named.get(canonical)
    if found is not None and (entity_type is None or found.entity_type == entity_type):
        return found
    existing = reads.live_entity_named(conn, prov.agent_id, name, entity_type)
    if existing is None:
        existing, _ = graph.create_entity(
            conn, prov, name=name, entity_type=entity_type or "unknown"
        )
    named.setdefault(canonical, existing)
    return existing
