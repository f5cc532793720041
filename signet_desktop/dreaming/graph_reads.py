"""The graph tools' reads for one agent (`dreaming/tools.py: GraphReads`) over
`storage/knowledge_reads.py`: entities by name, one entity with aspects and links, an
entity's claims, and a bounded walk over its links. Every read is in the pass's agent scope.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from signet_desktop.domain.knowledge import Aspect, Claim, Dependency, Entity
from signet_desktop.storage import knowledge_reads as reads
from signet_desktop.storage.connect import Connection

MAX_WALK = 200  # links visited by one walk


def entity_json(entity: Entity) -> dict[str, Any]:
    return {
        "id": entity.id,
        "name": entity.name,
        "type": entity.entity_type,
        "status": entity.status,
        "mentions": entity.mentions,
        "pinned": entity.pinned,
        "description": entity.description,
    }


def aspect_json(aspect: Aspect) -> dict[str, Any]:
    return {"id": aspect.id, "name": aspect.name, "status": aspect.status}


def claim_json(claim: Claim) -> dict[str, Any]:
    return {
        "id": claim.id,
        "aspectId": claim.aspect_id,
        "claimKey": claim.claim_key,
        "value": claim.content,
        "status": claim.status,
        "version": claim.version,
        "evidence": [{"quote": e.quote, "source_ref": e.source_ref} for e in claim.evidence],
    }


def link_json(link: Dependency) -> dict[str, Any]:
    return {
        "id": link.id,
        "from": link.source_entity_id,
        "fromName": link.source_name,
        "to": link.target_entity_id,
        "toName": link.target_name,
        "linkType": link.dependency_type,
        "status": link.status,
    }


class StoredGraph:
    """Graph reads of one agent on a fresh read connection each call."""

    def __init__(self, conn: Callable[[], Connection], agent_id: str) -> None:
        self._conn = conn
        self._agent = agent_id

    def search_entities(
        self, query: str, entity_type: str | None, limit: int
    ) -> list[dict[str, Any]]:
        page = reads.list_entities(
            self._conn(), self._agent, query=query, entity_type=entity_type or None, limit=limit
        )
        return [entity_json(e) for e in page.items]

    def get_entity(
        self, entity_id: str, include: tuple[str, ...], limit: int
    ) -> dict[str, Any] | None:
        conn = self._conn()
        entity = reads.entity(conn, self._agent, entity_id)
        if entity is None:
            return None
        out = entity_json(entity)
        if "aspects" in include:
            out["aspects"] = [
                aspect_json(a) for a in reads.aspects_of(conn, self._agent, entity_id)
            ]
            out["aspects"] = out["aspects"][:limit]
        if "links" in include:
            links = reads.dependencies_from(conn, self._agent, entity_id)
            links += reads.dependencies_to(conn, self._agent, entity_id)
            out["links"] = [link_json(link) for link in links[:limit]]
        return out

    def list_aspect_claims(
        self, entity_id: str, aspect_id: str | None, limit: int
    ) -> list[dict[str, Any]]:
        conn = self._conn()
        aspects = [a.id for a in reads.aspects_of(conn, self._agent, entity_id)]
        if aspect_id:
            aspects = [a for a in aspects if a == aspect_id]
        claims = reads.claims_of_aspects(conn, self._agent, aspects)
        return [claim_json(c) for a in aspects for c in claims.get(a, [])][:limit]

    def walk_links(self, entity_id: str, depth: int, limit: int) -> list[dict[str, Any]]:
        conn = self._conn()
        seen_links: dict[str, dict[str, Any]] = {}
        frontier, visited = [entity_id], {entity_id}
        for _ in range(depth):
            following: list[str] = []
            for node in frontier:
                links = reads.dependencies_from(conn, self._agent, node)
                links += reads.dependencies_to(conn, self._agent, node)
                for link in links:
                    if link.status != "active" or link.id in seen_links:
                        continue
                    seen_links[link.id] = link_json(link)
                    for other in (link.source_entity_id, link.target_entity_id):
                        if other not in visited:
                            visited.add(other)
                            following.append(other)
                    if len(seen_links) >= min(limit, MAX_WALK):
                        return list(seen_links.values())
            frontier = following
        return list(seen_links.values())
