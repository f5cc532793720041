"""Expand one entity for an agent (`knowledge_expand`, POST /api/knowledge/expand).

The entity is found by name: an exact name or alias of the agent's active entities first, else
the entities the text names as recall's traversal finds them (its phrases and words). Another
agent's entities are never read. The answer is Signet's: the entity, the constraints of it and
of the entities it depends on (always surfaced), its active aspects (`aspect` keeps those whose
name contains it) with their active claims, its outgoing links, and the memories the bounded
graph walk (`graph/traversal.py`, the configured bounds) reaches from it. With an aspect filter
the walk follows only matching aspects' claims and skips plain mentions, so the memories are
the filtered aspects' evidence. A `question` orders the memories: most of its words first.

Every text leaves through the content-safety gate (a blocked one is the withheld marker).
`max_tokens` (about four characters a token) bounds the memories' text: memories are taken in
order while they fit; the rest are counted as `omitted`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from signet_desktop.domain import scope
from signet_desktop.domain.entities import canonical_entity_name
from signet_desktop.domain.errors import InvalidInput, NotFound
from signet_desktop.domain.expansion import (
    DEFAULT_MAX_TOKENS,
    MAX_QUESTION_CHARS,
    MAX_TOKENS,
    Constraint,
    ExpandedAspect,
    ExpandedClaim,
    ExpandedLink,
    ExpandedMemory,
    Expansion,
)
from signet_desktop.domain.knowledge import MAX_ASPECT_CHARS, MAX_NAME_CHARS, Claim
from signet_desktop.domain.traversal import GraphAspect, GraphClaim, GraphEdge, GraphEntity
from signet_desktop.graph.traversal import GraphReader, TraversalBounds, walk
from signet_desktop.recall.sanitize import query_tokens
from signet_desktop.recall.traversal import ConnectionReader, focal_entities
from signet_desktop.service.safety.service import PromptGate, policy_gate
from signet_desktop.storage import graph_reads, memories
from signet_desktop.storage import knowledge_reads as reads
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.handle import DatabaseHandle

CHARS_PER_TOKEN = 4
MAX_LINKS = 30  # Signet's LIMIT on the dependencies it lists
MAX_CONSTRAINTS = 50
FILTER_SCAN_ASPECTS = 200  # aspects read per entity before an aspect filter picks


class _AspectFilter:
    """A GraphReader that keeps only aspects whose name contains `text` and reads no mentions."""

    def __init__(self, inner: GraphReader, text: str) -> None:
        self._inner = inner
        self._text = text.casefold()

    def aspects_with_claims(
        self, entity_ids: Sequence[str], per_entity: int, per_aspect: int, min_confidence: float
    ) -> Sequence[tuple[GraphAspect, Sequence[GraphClaim]]]:
        found = self._inner.aspects_with_claims(
            entity_ids, FILTER_SCAN_ASPECTS, per_aspect, min_confidence
        )
        kept: list[tuple[GraphAspect, Sequence[GraphClaim]]] = []
        taken: dict[str, int] = {}
        for aspect, claims in found:
            if self._text in aspect.name.casefold() and taken.get(aspect.entity_id, 0) < per_entity:
                taken[aspect.entity_id] = taken.get(aspect.entity_id, 0) + 1
                kept.append((aspect, claims))
        return kept

    def edges(
        self, entity_ids: Sequence[str], min_strength: float, min_confidence: float, per_entity: int
    ) -> Sequence[GraphEdge]:
        return self._inner.edges(entity_ids, min_strength, min_confidence, per_entity)

    def mentioned_in(
        self, entity_ids: Sequence[str], per_entity: int
    ) -> Mapping[str, Sequence[str]]:
        return {}


def _text(name: str, value: object, limit: int, *, required: bool = False) -> str | None:
    if value is None:
        if required:
            raise InvalidInput(f"{name} is required", code=f"{name}_required")
        return None
    if not isinstance(value, str) or len(value) > limit:
        raise InvalidInput(f"{name} must be text of at most {limit} characters")
    stripped = value.strip()
    if required and not stripped:
        raise InvalidInput(f"{name} is required", code=f"{name}_required")
    return stripped or None


def _check_budget(max_tokens: object) -> int:
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
        raise InvalidInput("maxTokens must be an integer")
    if not 1 <= max_tokens <= MAX_TOKENS:
        raise InvalidInput(f"maxTokens must be between 1 and {MAX_TOKENS}")
    return max_tokens


def resolve(conn: Connection, agent_id: str, name: str) -> GraphEntity | None:
    """The agent's active entity `name` means: exact name or alias, else the first it names."""
    exact = graph_reads.entities_named(conn, agent_id, [canonical_entity_name(name)], 1)
    if exact:
        return next(iter(exact.values()))
    named = focal_entities(conn, agent_id, name, limit=1)
    return named[0] if named else None


class EntityExpansion:
    """`expand(agent, name, ...)`: one entity's structure and evidence, within a budget."""

    def __init__(
        self,
        db: DatabaseHandle,
        bounds: TraversalBounds | None = None,
        gate: PromptGate | None = None,
    ) -> None:
        self._db = db
        self._bounds = bounds or TraversalBounds()
        self._gate: PromptGate = gate or policy_gate

    def expand(
        self,
        agent_id: str,
        name: object,
        *,
        aspect: object = None,
        question: object = None,
        max_tokens: object = DEFAULT_MAX_TOKENS,
    ) -> Expansion:
        """The entity `name` names, expanded (NotFound `entity_not_found` when none)."""
        scope.check_agent_id(agent_id)
        wanted = _text("entity", name, MAX_NAME_CHARS, required=True)
        assert wanted is not None
        aspect_filter = _text("aspect", aspect, MAX_ASPECT_CHARS)
        asked = _text("question", question, MAX_QUESTION_CHARS)
        budget = _check_budget(max_tokens)
        conn = self._db.reader()
        focal = resolve(conn, agent_id, wanted)
        entity = None if focal is None else reads.entity(conn, agent_id, focal.id)
        if focal is None or entity is None:
            raise NotFound(f'entity "{wanted}" not found', code="entity_not_found")
        links = self._links(conn, agent_id, focal.id)
        reader: GraphReader = ConnectionReader(conn, agent_id)
        if aspect_filter is not None:
            reader = _AspectFilter(reader, aspect_filter)
        walked = walk(reader, [focal], self._bounds)
        reached = _ordered(list(walked.reached), conn, agent_id, asked)
        chosen, used = self._fit(agent_id, reached, budget)
        related = [(entity.id, entity.name), *((k.target_id, k.target) for k in links)]
        return Expansion(
            entity=entity,
            constraints=self._constraints(conn, agent_id, related),
            aspects=self._aspects(conn, agent_id, entity.id, aspect_filter),
            dependencies=tuple(links),
            memory_count=len(reached),
            memories=tuple(chosen),
            max_tokens=budget,
            used_tokens=used,
            omitted=len(reached) - len(chosen),
            reasons=tuple(walked.reasons),
        )

    def _claims(self, agent_id: str, claims: Sequence[Claim]) -> list[str]:
        return policy_gate(agent_id, "memory", [(c.id, c.content) for c in claims])

    def _aspects(
        self, conn: Connection, agent_id: str, entity_id: str, text: str | None
    ) -> tuple[ExpandedAspect, ...]:
        active = [a for a in reads.aspects_of(conn, agent_id, entity_id) if a.status == "active"]
        if text is not None:
            active = [a for a in active if text.casefold() in a.name.casefold()]
        active = active[: self._bounds.max_aspects_per_entity]
        claims = reads.claims_of_aspects(conn, agent_id, [a.id for a in active])
        out: list[ExpandedAspect] = []
        for aspect in active:
            live = sorted(
                (c for c in claims.get(aspect.id, ()) if c.status == "active"),
                key=lambda c: -c.importance,
            )[: self._bounds.max_attributes_per_aspect]
            texts = self._claims(agent_id, live)
            out.append(
                ExpandedAspect(
                    aspect.name,
                    aspect.weight,
                    tuple(
                        ExpandedClaim(text, c.kind, c.importance, c.confidence)
                        for c, text in zip(live, texts, strict=True)
                    ),
                )
            )
        return tuple(out)

    def _constraints(
        self, conn: Connection, agent_id: str, entities: Sequence[tuple[str, str]]
    ) -> tuple[Constraint, ...]:
        found: list[tuple[str, Claim]] = []
        for entity_id, entity_name in dict.fromkeys(entities):
            aspects = [a.id for a in reads.aspects_of(conn, agent_id, entity_id)]
            for claims in reads.claims_of_aspects(conn, agent_id, aspects).values():
                found += [
                    (entity_name, c)
                    for c in claims
                    if c.status == "active" and c.kind == "constraint"
                ]
        found.sort(key=lambda item: -item[1].importance)
        texts = self._claims(agent_id, [claim for _, claim in found])
        unique = dict.fromkeys(
            (name, text, claim.importance) for (name, claim), text in zip(found, texts, strict=True)
        )
        return tuple(Constraint(*item) for item in list(unique)[:MAX_CONSTRAINTS])

    def _links(self, conn: Connection, agent_id: str, entity_id: str) -> list[ExpandedLink]:
        links = [
            ExpandedLink(d.target_entity_id, d.target_name, d.dependency_type, d.strength)
            for d in reads.dependencies_from(conn, agent_id, entity_id)
            if d.status == "active" and d.strength >= self._bounds.min_dependency_strength
        ]
        return links[:MAX_LINKS]

    def _fit(
        self, agent_id: str, found: Sequence[tuple[str, str]], budget: int
    ) -> tuple[list[ExpandedMemory], int]:
        """The memories (gated) in order while they fit the budget; the tokens they use."""
        texts = self._gate(agent_id, "memory", list(found))
        chosen: list[ExpandedMemory] = []
        used = 0
        for (memory_id, _), text in zip(found, texts, strict=True):
            tokens = max(1, math.ceil(len(text) / CHARS_PER_TOKEN))
            if used + tokens <= budget:
                chosen.append(ExpandedMemory(memory_id, text, tokens))
                used += tokens
        return chosen, used


def _is_constraint(claim: Claim) -> bool:
    return claim.status == "active" and claim.kind == "constraint"


def _ordered(
    ids: list[str], conn: Connection, agent_id: str, question: str | None
) -> list[tuple[str, str]]:
    """(id, content) of the live memories among `ids`, in walk order or by the question's words."""
    live = memories.get_memories(conn, agent_id, ids)
    found = [(i, live[i].content) for i in ids if i in live]
    words = query_tokens(question) if question else []
    if words:
        found.sort(key=lambda item: -len(set(words) & set(query_tokens(item[1]))))
    return found
