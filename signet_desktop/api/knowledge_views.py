"""Wire shapes of the knowledge graph (HTTP `/api/knowledge/*`, MCP knowledge tools).

Signet's knowledge routes answer in snake_case; the same shapes serve HTTP and MCP.
"""

from __future__ import annotations

from typing import Any

from signet_desktop.domain.expansion import Expansion
from signet_desktop.domain.knowledge import (
    Alias,
    Aspect,
    AspectDetail,
    Claim,
    Dependency,
    Entity,
    EntityDetail,
    EntityMention,
    EntityPage,
    Evidence,
    KnowledgeStats,
    StructuredOutcome,
)


def evidence_json(items: tuple[Evidence, ...]) -> list[dict[str, str]]:
    return [{"quote": e.quote, "source_ref": e.source_ref} for e in items]


def entity_json(entity: Entity) -> dict[str, Any]:
    return {
        "id": entity.id,
        "agent_id": entity.agent_id,
        "name": entity.name,
        "canonical_name": entity.canonical_name,
        "entity_type": entity.entity_type,
        "description": entity.description,
        "mentions": entity.mentions,
        "pinned": entity.pinned,
        "status": entity.status,
        "merged_into": entity.merged_into,
        "source_kind": entity.source_kind,
        "source_id": entity.source_id,
        "created_by": entity.created_by,
        "proposal_id": entity.proposal_id,
        "archived_at": entity.archived_at,
        "archived_reason": entity.archived_reason,
        "created_at": entity.created_at,
        "updated_at": entity.updated_at,
    }


def alias_json(alias: Alias) -> dict[str, Any]:
    return {
        "id": alias.id,
        "entity_id": alias.entity_id,
        "alias": alias.alias,
        "canonical_alias": alias.canonical_alias,
        "source": alias.source,
        "created_at": alias.created_at,
    }


def aspect_json(aspect: Aspect) -> dict[str, Any]:
    return {
        "id": aspect.id,
        "entity_id": aspect.entity_id,
        "name": aspect.name,
        "canonical_name": aspect.canonical_name,
        "weight": aspect.weight,
        "status": aspect.status,
        "created_at": aspect.created_at,
        "updated_at": aspect.updated_at,
    }


def claim_json(claim: Claim) -> dict[str, Any]:
    return {
        "id": claim.id,
        "aspect_id": claim.aspect_id,
        "memory_id": claim.memory_id,
        "kind": claim.kind,
        "content": claim.content,
        "confidence": claim.confidence,
        "importance": claim.importance,
        "status": claim.status,
        "claim_key": claim.claim_key,
        "group_key": claim.group_key,
        "version": claim.version,
        "version_root_id": claim.version_root_id,
        "previous_attribute_id": claim.previous_attribute_id,
        "superseded_by": claim.superseded_by,
        "proposal_id": claim.proposal_id,
        "evidence": evidence_json(claim.evidence),
        **claim.times.as_dict(),
        "created_at": claim.created_at,
        "updated_at": claim.updated_at,
    }


def dependency_json(link: Dependency) -> dict[str, Any]:
    return {
        "id": link.id,
        "source_entity_id": link.source_entity_id,
        "source_name": link.source_name,
        "target_entity_id": link.target_entity_id,
        "target_name": link.target_name,
        "dependency_type": link.dependency_type,
        "strength": link.strength,
        "confidence": link.confidence,
        "reason": link.reason,
        "aspect_id": link.aspect_id,
        "status": link.status,
        "created_at": link.created_at,
        "updated_at": link.updated_at,
    }


def mention_json(mention: EntityMention) -> dict[str, Any]:
    return {
        "memory_id": mention.memory_id,
        "mention_text": mention.mention_text,
        "confidence": mention.confidence,
        "linked_at": mention.linked_at,
        "excerpt": mention.excerpt,
        "memory_type": mention.memory_type,
        "who": mention.who,
        "source_type": mention.source_type,
        "memory_created_at": mention.memory_created_at,
        "memory_deleted": mention.memory_deleted,
    }


def aspect_detail_json(detail: AspectDetail) -> dict[str, Any]:
    return {**aspect_json(detail.aspect), "attributes": [claim_json(c) for c in detail.claims]}


def entity_detail_json(detail: EntityDetail) -> dict[str, Any]:
    """GET /api/knowledge/entities/{id}: the entity and everything hanging off it."""
    return {
        "entity": entity_json(detail.entity),
        "aliases": [alias_json(a) for a in detail.aliases],
        "aspects": [aspect_detail_json(a) for a in detail.aspects],
        "dependencies": {
            "outgoing": [dependency_json(d) for d in detail.outgoing],
            "incoming": [dependency_json(d) for d in detail.incoming],
        },
        "mentions": [mention_json(m) for m in detail.mentions],
        "mention_total": detail.mention_total,
    }


def entity_page_json(page: EntityPage) -> dict[str, Any]:
    """GET /api/knowledge/entities."""
    return {
        "items": [entity_json(e) for e in page.items],
        "total": page.total,
        "limit": page.limit,
        "offset": page.offset,
    }


def stats_json(stats: KnowledgeStats) -> dict[str, Any]:
    """GET /api/knowledge/stats."""
    return {
        "entities": sum(stats.entities.values()),
        "entities_by_status": dict(stats.entities),
        "entity_types": dict(stats.entity_types),
        "aspects": stats.aspects,
        "attributes": sum(stats.claims.values()),
        "attributes_by_status": dict(stats.claims),
        "dependencies": stats.dependencies,
        "mentions": stats.mentions,
        "mutations": stats.mutations,
    }


def structured_json(outcome: StructuredOutcome | None) -> dict[str, Any] | None:
    """The remember response's `structured`: what the applied block wrote (None: not applied)."""
    if outcome is None:
        return None
    return {
        "entity_ids": list(outcome.entity_ids),
        "entities_linked": outcome.entities_linked,
        "claims_written": outcome.claims_written,
        "hints_written": outcome.hints_written,
    }


def expansion_json(expansion: Expansion) -> dict[str, Any]:
    """POST /api/knowledge/expand (MCP `knowledge_expand`): Signet's shape, plus the budget
    spent (`budget`) and whether the walk was cut short (`traversal`)."""
    entity = expansion.entity
    return {
        "entity": {
            "id": entity.id,
            "name": entity.name,
            "type": entity.entity_type,
            "description": entity.description,
        },
        "constraints": [
            {"entityName": c.entity_name, "content": c.content, "importance": c.importance}
            for c in expansion.constraints
        ],
        "aspects": [
            {
                "name": aspect.name,
                "weight": aspect.weight,
                "attributes": [
                    {
                        "content": claim.content,
                        "kind": claim.kind,
                        "importance": claim.importance,
                        "confidence": claim.confidence,
                    }
                    for claim in aspect.claims
                ],
            }
            for aspect in expansion.aspects
        ],
        "dependencies": [
            {
                "target": link.target,
                "targetId": link.target_id,
                "type": link.dependency_type,
                "strength": link.strength,
            }
            for link in expansion.dependencies
        ],
        "memoryCount": expansion.memory_count,
        "memories": [
            {"id": m.id, "content": m.content, "tokens": m.tokens} for m in expansion.memories
        ],
        "budget": {
            "maxTokens": expansion.max_tokens,
            "usedTokens": expansion.used_tokens,
            "omitted": expansion.omitted,
        },
        "traversal": {"partial": bool(expansion.reasons), "reasons": list(expansion.reasons)},
    }
