"""The bounded graph walk: from focal entities to the memories their structure points at.

From each focal entity the walk reads its aspects (heaviest first, at most
`max_aspects_per_entity`), their active claims (at most `max_attributes_per_aspect` each, with
confidence >= `min_confidence`) and the memories mentioning it (unless it is a hub with more
mentions than `max_traversal_paths`), then follows dependency edges
(either direction, strength >= `min_dependency_strength`, the `max_branching` strongest per
entity) breadth first for up to `max_dependency_hops` hops. Every entity is visited once (a
visited set: cycles end), and at most `max_traversal_paths` memories are collected. Each
memory keeps the first (shortest) path that reached it, and a weight: the product of the edge
strengths along the path times the claim's (or mention's) confidence.

The walk reads a hop at a time (one query each for the frontier's aspects with their claims,
its mentions and its edges), so its cost grows with hops, not with entities. It is
partial when the time budget ran out or a bound cut something off (more aspects, claims,
edges or paths than allowed); it then returns what it found, with the reasons.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from signet_desktop.domain.traversal import (
    GraphAspect,
    GraphClaim,
    GraphEdge,
    GraphEntity,
    PathStep,
)

MENTION_CONFIDENCE = 1.0
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class TraversalBounds:
    """Signet's traversal bounds (memory.pipelineV2.traversal.*)."""

    max_aspects_per_entity: int = 10
    max_attributes_per_aspect: int = 20
    max_dependency_hops: int = 10
    min_dependency_strength: float = 0.3
    max_branching: int = 4
    max_traversal_paths: int = 50
    min_confidence: float = 0.5
    timeout_ms: int = 500


class GraphReader(Protocol):
    """What the walk reads, a hop at a time (one agent's active rows; bound in recall/)."""

    def aspects_with_claims(
        self, entity_ids: Sequence[str], per_entity: int, per_aspect: int, min_confidence: float
    ) -> Sequence[tuple[GraphAspect, Sequence[GraphClaim]]]:
        """Each entity's aspects (heaviest first, `per_entity` each) with their claims of
        confidence >= `min_confidence` (most confident first, `per_aspect` each)."""
        ...

    def edges(
        self, entity_ids: Sequence[str], min_strength: float, min_confidence: float, per_entity: int
    ) -> Sequence[GraphEdge]: ...

    def mentioned_in(
        self, entity_ids: Sequence[str], per_entity: int
    ) -> Mapping[str, Sequence[str]]:
        """entity id -> ids of memories linked to it (at most `per_entity` each)."""
        ...


@dataclass(frozen=True, slots=True)
class Reached:
    """A memory the walk reached: the path from its focal entity and the path's weight."""

    memory_id: str
    path: tuple[PathStep, ...]
    weight: float

    @property
    def hops(self) -> int:
        """Dependency edges on the path."""
        return sum(1 for step in self.path if step.kind == "dependency")


@dataclass(slots=True)
class Walk:
    """The walk's result: reached memories (in the order found), and whether it was partial."""

    reached: dict[str, Reached] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    entities: int = 0

    @property
    def partial(self) -> bool:
        return bool(self.reasons)

    def note(self, reason: str) -> None:
        if reason not in self.reasons:
            self.reasons.append(reason)


class _Budget(Exception):
    """Raised inside the walk when it must stop (time budget or the path bound)."""


Frontier = list[tuple[GraphEntity, tuple[PathStep, ...], float]]


def walk(
    reader: GraphReader,
    focal: Sequence[GraphEntity],
    bounds: TraversalBounds,
    clock: Callable[[], float] = time.perf_counter,
) -> Walk:
    """Walk from `focal` within `bounds` (see the module docstring)."""
    result = Walk()
    deadline = clock() + bounds.timeout_ms / 1000
    visited = {entity.id for entity in focal}
    frontier: Frontier = [
        (entity, (PathStep("entity", entity.id, entity.name),), 1.0) for entity in focal
    ]
    try:
        for hop in range(bounds.max_dependency_hops + 1):
            _check_time(clock, deadline, result)
            result.entities += len(frontier)
            _claims(reader, frontier, bounds, result)
            _check_time(clock, deadline, result)
            _mentions(reader, frontier, bounds, result)
            if hop == bounds.max_dependency_hops:
                break
            if len(result.reached) >= bounds.max_traversal_paths:
                result.note(f"maxTraversalPaths ({bounds.max_traversal_paths}) reached")
                break  # no room for what another hop would find: skip its reads
            _check_time(clock, deadline, result)
            frontier = _edges(reader, frontier, bounds, visited, result)
            if not frontier:
                break
    except _Budget:
        pass
    return result


def _check_time(clock: Callable[[], float], deadline: float, result: Walk) -> None:
    if clock() > deadline:
        result.note("time budget exceeded")
        raise _Budget


def _add(result: Walk, bounds: TraversalBounds, found: Reached) -> None:
    if found.memory_id in result.reached:
        return  # the first path that reached it is the shortest (breadth first)
    if len(result.reached) >= bounds.max_traversal_paths:
        result.note(f"maxTraversalPaths ({bounds.max_traversal_paths}) reached")
        raise _Budget
    result.reached[found.memory_id] = found


def _grouped(items: Sequence[_T], key: Callable[[_T], str]) -> dict[str, list[_T]]:
    grouped: dict[str, list[_T]] = {}
    for item in items:
        grouped.setdefault(key(item), []).append(item)
    return grouped


def _claims(reader: GraphReader, frontier: Frontier, bounds: TraversalBounds, result: Walk) -> None:
    limit, per_aspect = bounds.max_aspects_per_entity, bounds.max_attributes_per_aspect
    found = reader.aspects_with_claims(
        [entity.id for entity, _, _ in frontier], limit + 1, per_aspect + 1, bounds.min_confidence
    )
    aspects = _grouped(found, lambda pair: pair[0].entity_id)
    if any(len(group) > limit for group in aspects.values()):
        result.note(f"maxAspectsPerEntity ({limit}) reached")
    chosen = {entity_id: group[:limit] for entity_id, group in aspects.items()}
    if any(len(claims) > per_aspect for group in chosen.values() for _, claims in group):
        result.note(f"maxAttributesPerAspect ({per_aspect}) reached")
    for entity, path, weight in frontier:
        for aspect, claims in chosen.get(entity.id, []):
            for claim in claims[:per_aspect]:
                if claim.memory_id is None:
                    continue
                steps = (
                    *path,
                    PathStep("aspect", aspect.id, aspect.name),
                    PathStep("claim", claim.id, claim.content[:80]),
                )
                _add(result, bounds, Reached(claim.memory_id, steps, weight * claim.confidence))


def _mentions(
    reader: GraphReader, frontier: Frontier, bounds: TraversalBounds, result: Walk
) -> None:
    # A hub's mentions are not walked: more than the walk may collect, any bounded sample of
    # them is arbitrary (its aspects, claims and edges still are). Its memories stay findable
    # through the flat channels, where their own text decides.
    walked = [item for item in frontier if item[0].mentions <= bounds.max_traversal_paths]
    for entity, _, _ in frontier:
        if entity.mentions > bounds.max_traversal_paths:
            result.note(
                f"mentions of {entity.name} not walked ({entity.mentions} > "
                f"maxTraversalPaths {bounds.max_traversal_paths})"
            )
    room = bounds.max_traversal_paths - len(result.reached)
    if not walked or room <= 0:
        return
    found = reader.mentioned_in([entity.id for entity, _, _ in walked], room)
    for place, (entity, path, weight) in enumerate(walked):
        # Mentions share what room is left, so one entity cannot take every path.
        left = bounds.max_traversal_paths - len(result.reached)
        share = -(-left // (len(walked) - place))
        memory_ids = list(found.get(entity.id, ()))
        if len(memory_ids) > share:
            result.note(f"maxTraversalPaths ({bounds.max_traversal_paths}) reached")
        for memory_id in memory_ids[:share]:
            steps = (*path, PathStep("mention", memory_id, entity.name))
            _add(result, bounds, Reached(memory_id, steps, weight * MENTION_CONFIDENCE))


def _edges(
    reader: GraphReader,
    frontier: Frontier,
    bounds: TraversalBounds,
    visited: set[str],
    result: Walk,
) -> Frontier:
    found = reader.edges(
        [entity.id for entity, _, _ in frontier],
        bounds.min_dependency_strength,
        bounds.min_confidence,
        bounds.max_branching + 1,
    )
    edges = _grouped(found, lambda e: e.entity_id)
    following: Frontier = []
    for entity, path, weight in frontier:
        mine = edges.get(entity.id, [])
        if len(mine) > bounds.max_branching:
            result.note(f"maxBranching ({bounds.max_branching}) reached")
        for edge in mine[: bounds.max_branching]:
            if edge.other.id in visited:
                continue  # a cycle, or an entity another path reached first
            visited.add(edge.other.id)
            steps = (
                *path,
                PathStep("dependency", edge.id, edge.dependency_type),
                PathStep("entity", edge.other.id, edge.other.name),
            )
            following.append((edge.other, steps, weight * edge.strength))
    return following
