"""The knowledge graph as a capability: list, inspect and count an agent's entities, and the
explicit operations a person or agent asks for (create, alias, aspect, claim, link, rename,
archive).

Every call checks its agent id and actor (`domain/scope.py`); another agent's entity is
`NotFound`, never data. Writes go through `storage/graph.py` in one write transaction with a
`Provenance` naming the actor; `knowledge.changed` is published after the commit.
"""

from __future__ import annotations

from collections.abc import Sequence

from signet_desktop.domain import scope
from signet_desktop.domain.errors import InvalidInput, NotFound
from signet_desktop.domain.events import DiscardEvents, EventSink
from signet_desktop.domain.knowledge import (
    ENTITY_STATUSES,
    Alias,
    Aspect,
    AspectDetail,
    Claim,
    Dependency,
    Entity,
    EntityDetail,
    EntityPage,
    Evidence,
    KnowledgeChanged,
    KnowledgeStats,
    Provenance,
    check_entity_type,
    check_evidence,
)
from signet_desktop.domain.memory import Actor
from signet_desktop.storage import graph, graph_claims, graph_links
from signet_desktop.storage import knowledge_reads as reads
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.handle import DatabaseHandle

MAX_LIST_LIMIT = 500
DEFAULT_LIST_LIMIT = 50
MAX_QUERY_CHARS = 200
DEFAULT_MENTION_LIMIT = 50
MAX_MENTION_LIMIT = 500


def check_page(limit: int, offset: int) -> tuple[int, int]:
    """A listing window: 1..500 rows from a non-negative offset."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIST_LIMIT:
        raise InvalidInput(f"limit must be between 1 and {MAX_LIST_LIMIT}")
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise InvalidInput("offset must be 0 or more")
    return limit, offset


def check_status(status: str | None) -> str | None:
    """An entity status filter; `all` (or None) lists every status."""
    if status is None or status == "all":
        return None
    if status not in ENTITY_STATUSES:
        raise InvalidInput(
            f"status must be one of {', '.join(ENTITY_STATUSES)} or all",
            code="status_invalid",
        )
    return status


def write_claim(
    conn: Connection,
    prov: Provenance,
    aspect_id: str,
    content: str,
    *,
    claim_key: str | None,
    kind: str,
    confidence: float,
    importance: float,
) -> tuple[Claim, bool]:
    """A claim under an aspect: keyed, it sets the key's value (superseding another);
    unkeyed, it adds one. True when something was written."""
    if claim_key is None:
        return graph_claims.add_claim_value(
            conn,
            prov,
            aspect_id,
            content,
            kind=kind,
            confidence=confidence,
            importance=importance,
        )
    return graph_claims.set_claim_value(
        conn,
        prov,
        aspect_id,
        claim_key,
        content,
        kind=kind,
        confidence=confidence,
        importance=importance,
    )


class KnowledgeService:
    """Knowledge-graph reads and explicit writes over one database, scoped by agent."""

    def __init__(self, db: DatabaseHandle, events: EventSink | None = None) -> None:
        self._db = db
        self._events: EventSink = events or DiscardEvents()

    # --- reads ----------------------------------------------------------------------------

    def list_entities(
        self,
        agent_id: str,
        *,
        query: str | None = None,
        entity_type: str | None = None,
        status: str | None = "active",
        limit: int = DEFAULT_LIST_LIMIT,
        offset: int = 0,
    ) -> EntityPage:
        """A page of the agent's entities (pinned, then most mentioned first)."""
        scope.check_agent_id(agent_id)
        limit, offset = check_page(limit, offset)
        if query is not None and len(query) > MAX_QUERY_CHARS:
            raise InvalidInput(f"query is longer than {MAX_QUERY_CHARS} characters")
        kind = None if entity_type in (None, "") else check_entity_type(entity_type)
        return reads.list_entities(
            self._db.reader(),
            agent_id,
            query=(query or "").strip() or None,
            entity_type=kind,
            status=check_status(status),
            limit=limit,
            offset=offset,
        )

    def get_entity(
        self, agent_id: str, entity_id: str, *, mention_limit: int = DEFAULT_MENTION_LIMIT
    ) -> EntityDetail:
        """The entity with its aliases, aspects and claims (with superseded history), links
        both ways and the memories that mention it. NotFound for another agent's id."""
        scope.check_agent_id(agent_id)
        if not 1 <= mention_limit <= MAX_MENTION_LIMIT:
            raise InvalidInput(f"mention limit must be between 1 and {MAX_MENTION_LIMIT}")
        conn = self._db.reader()
        entity = reads.entity(conn, agent_id, entity_id)
        if entity is None:
            raise NotFound(f"entity {entity_id} not found", code="entity_not_found")
        aspects = reads.aspects_of(conn, agent_id, entity_id)
        claims = reads.claims_of_aspects(conn, agent_id, [a.id for a in aspects])
        mentions, total = reads.mentions_of_entity(conn, agent_id, entity_id, mention_limit)
        return EntityDetail(
            entity=entity,
            aliases=tuple(reads.aliases_of(conn, agent_id, entity_id)),
            aspects=tuple(AspectDetail(a, tuple(claims.get(a.id, ()))) for a in aspects),
            outgoing=tuple(reads.dependencies_from(conn, agent_id, entity_id)),
            incoming=tuple(reads.dependencies_to(conn, agent_id, entity_id)),
            mentions=tuple(mentions),
            mention_total=total,
        )

    def stats(self, agent_id: str) -> KnowledgeStats:
        """Counts of the agent's entities, aspects, claims, links, mentions and mutations."""
        scope.check_agent_id(agent_id)
        return reads.stats(self._db.reader(), agent_id)

    # --- explicit writes ------------------------------------------------------------------

    def _provenance(
        self, agent_id: str, actor: Actor, evidence: Sequence[Evidence] = ()
    ) -> Provenance:
        scope.check_agent_id(agent_id)
        scope.check_actor(actor)
        return Provenance(
            actor=actor.changed_by,
            agent_id=agent_id,
            evidence=check_evidence(tuple(evidence)),
        )

    def _changed(self, agent_id: str, operation: str, *entity_ids: str) -> None:
        self._events.publish(
            KnowledgeChanged(
                agent_id=agent_id, operation=operation, entity_ids=tuple(dict.fromkeys(entity_ids))
            )
        )

    def create_entity(
        self,
        agent_id: str,
        name: str,
        *,
        actor: Actor,
        entity_type: str = "unknown",
        description: str | None = None,
        aliases: Sequence[str] = (),
        evidence: Sequence[Evidence] = (),
    ) -> tuple[Entity, bool]:
        """Get-or-create an entity by name and type (with aliases); (entity, created)."""
        prov = self._provenance(agent_id, actor, evidence)
        with self._db.write() as conn:
            entity, created = graph.create_entity(
                conn, prov, name=name, entity_type=entity_type, description=description
            )
            for alias in aliases:
                graph.add_alias(conn, prov, entity.id, alias)
        self._changed(agent_id, "create_entity", entity.id)
        return entity, created

    def add_alias(self, agent_id: str, entity_id: str, alias: str, *, actor: Actor) -> Alias:
        prov = self._provenance(agent_id, actor)
        with self._db.write() as conn:
            found, _ = graph.add_alias(conn, prov, entity_id, alias)
        self._changed(agent_id, "add_alias", entity_id)
        return found

    def create_aspect(
        self, agent_id: str, entity_id: str, name: str, *, actor: Actor, weight: float = 0.5
    ) -> Aspect:
        prov = self._provenance(agent_id, actor)
        with self._db.write() as conn:
            aspect, _ = graph_claims.create_aspect(conn, prov, entity_id, name, weight=weight)
        self._changed(agent_id, "create_aspect", entity_id)
        return aspect

    def add_claim(
        self,
        agent_id: str,
        entity_id: str,
        content: str,
        *,
        actor: Actor,
        aspect: str | None = None,
        aspect_id: str | None = None,
        claim_key: str | None = None,
        kind: str = "attribute",
        confidence: float = 1.0,
        importance: float = 0.5,
        evidence: Sequence[Evidence] = (),
    ) -> Claim:
        """A claim on an entity's aspect (by id, or by name: created if new). With a
        `claim_key` the value is set: a different value supersedes the active one."""
        prov = self._provenance(agent_id, actor, evidence)
        if (aspect is None) == (aspect_id is None):
            raise InvalidInput("name the aspect either by `aspect` or by `aspect_id`")
        with self._db.write() as conn:
            if aspect_id is None:
                target, _ = graph_claims.create_aspect(conn, prov, entity_id, str(aspect))
            else:
                target = _own_aspect(conn, prov, entity_id, aspect_id)
            claim, _ = write_claim(
                conn,
                prov,
                target.id,
                content,
                claim_key=claim_key,
                kind=kind,
                confidence=confidence,
                importance=importance,
            )
        self._changed(agent_id, "add_claim", entity_id)
        return claim

    def create_link(
        self,
        agent_id: str,
        source_entity_id: str,
        target_entity_id: str,
        dependency_type: str,
        *,
        actor: Actor,
        strength: float = 0.5,
        confidence: float = 1.0,
        reason: str | None = None,
        evidence: Sequence[Evidence] = (),
    ) -> tuple[Dependency, bool]:
        """Get-or-create the active link source -[type]-> target; (link, created)."""
        prov = self._provenance(agent_id, actor, evidence)
        with self._db.write() as conn:
            link, created = graph_links.create_link(
                conn,
                prov,
                source_entity_id,
                target_entity_id,
                dependency_type,
                strength=strength,
                confidence=confidence,
                reason=reason,
            )
        self._changed(agent_id, "create_link", source_entity_id, target_entity_id)
        return link, created

    def archive_entity(
        self, agent_id: str, entity_id: str, *, actor: Actor, reason: str | None = None
    ) -> Entity:
        prov = self._provenance(agent_id, actor)
        with self._db.write() as conn:
            entity = graph.archive_entity(conn, prov, entity_id, reason)
        self._changed(agent_id, "archive_entity", entity_id)
        return entity

    def rename_entity(
        self, agent_id: str, entity_id: str, name: str, *, actor: Actor, keep_alias: bool = True
    ) -> Entity:
        prov = self._provenance(agent_id, actor)
        with self._db.write() as conn:
            entity = graph.rename_entity(conn, prov, entity_id, name, keep_alias=keep_alias)
        self._changed(agent_id, "rename_entity", entity_id)
        return entity

    def archive_claim(self, agent_id: str, claim_id: str, *, actor: Actor) -> Claim:
        prov = self._provenance(agent_id, actor)
        with self._db.write() as conn:
            claim = graph_claims.archive_claim_value(conn, prov, claim_id)
            owner = reads.aspect(conn, agent_id, claim.aspect_id)
        self._changed(agent_id, "archive_claim", *(() if owner is None else (owner.entity_id,)))
        return claim

    def archive_link(self, agent_id: str, link_id: str, *, actor: Actor) -> Dependency:
        prov = self._provenance(agent_id, actor)
        with self._db.write() as conn:
            link = graph_links.archive_link(conn, prov, link_id)
        self._changed(agent_id, "archive_link", link.source_entity_id, link.target_entity_id)
        return link


def _own_aspect(conn: Connection, prov: Provenance, entity_id: str, aspect_id: str) -> Aspect:
    found = reads.aspect(conn, prov.agent_id, aspect_id)
    if found is None or found.entity_id != entity_id:
        raise NotFound(f"aspect {aspect_id} not found", code="aspect_not_found")
    return found
