"""The bounded graph walk: from focal entities to the memories their structure points at.

From each focal entity the walk reads its aspects (heaviest first, at most
`max_aspects_per_entity`), their active claims (at most `max_attributes_per_aspect` each, with
confidence >= `min_confidence`) and the memories mentioning it, then follows dependency edges
(either direction, strength >= `min_dependency_strength`, the `max_branching` strongest per
entity) breadth first for up to `max_dependency_hops` hops. Every entity is visited once (a
visited set: cycles end), and at most `max_traversal_paths` memories are collected. Each
memory keeps the first (shortest) path that reached it, and a weight: the product of the edge
strengths along the path times the claim's (or mention's) confidence.

The walk is partial when the time budget ran out or a bound cut something off (more aspects,
claims, edges or paths than allowed); it then returns what it found, with the reasons.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from signet_desktop.domain.traversal import (
    GraphAspect,
    GraphClaim,
    GraphEdge,
    GraphEntity,
    PathStep,
)

MENTION_CONFIDENCE = 1.0


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
    """What the walk reads (one agent's active rows; `recall/traversal.py` binds it)."""

    def aspects(self, entity_id: str, limit: int) -> Sequence[GraphAspect]: ...

    def claims(
        self, aspect_ids: Sequence[str], per_aspect: int, min_confidence: float
    ) -> Sequence[GraphClaim]: ...

    def edges(
        self, entity_id: str, min_strength: float, min_confidence: float, limit: int
    ) -> Sequence[GraphEdge]: ...

    def mentioned_in(self, entity_id: str, limit: int) -> Sequence[str]: ...


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
    frontier: list[tuple[GraphEntity, tuple[PathStep, ...], float]] = [
        (entity, (PathStep("entity", entity.id, entity.name),), 1.0) for entity in focal
    ]
    try:
        for hop in range(bounds.max_dependency_hops + 1):
            for entity, path, weight in frontier:
                _check_time(clock, deadline, result)
                result.entities += 1
                _claims(reader, entity, path, weight, bounds, result)
            # Mentions share what room is left, so one hub entity cannot take every path.
            for place, (entity, path, weight) in enumerate(frontier):
                _check_time(clock, deadline, result)
                share = -(
                    -(bounds.max_traversal_paths - len(result.reached)) // (len(frontier) - place)
                )
                _mentions(reader, entity, path, weight, share, bounds, result)
            if hop == bounds.max_dependency_hops:
                break
            following: list[tuple[GraphEntity, tuple[PathStep, ...], float]] = []
            for entity, path, weight in frontier:
                _check_time(clock, deadline, result)
                following += _edges(reader, entity, path, weight, bounds, visited, result)
            if not following:
                break
            frontier = following
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


def _claims(
    reader: GraphReader,
    entity: GraphEntity,
    path: tuple[PathStep, ...],
    weight: float,
    bounds: TraversalBounds,
    result: Walk,
) -> None:
    aspects = list(reader.aspects(entity.id, bounds.max_aspects_per_entity + 1))
    if len(aspects) > bounds.max_aspects_per_entity:
        result.note(f"maxAspectsPerEntity ({bounds.max_aspects_per_entity}) reached")
        aspects = aspects[: bounds.max_aspects_per_entity]
    if not aspects:
        return
    per_aspect = bounds.max_attributes_per_aspect
    claims = reader.claims([a.id for a in aspects], per_aspect + 1, bounds.min_confidence)
    by_aspect = {aspect.id: aspect for aspect in aspects}
    counted: dict[str, int] = {}
    for claim in claims:
        counted[claim.aspect_id] = counted.get(claim.aspect_id, 0) + 1
        if counted[claim.aspect_id] > per_aspect:
            result.note(f"maxAttributesPerAspect ({per_aspect}) reached")
            continue
        if claim.memory_id is None:
            continue
        aspect = by_aspect[claim.aspect_id]
        steps = (
            *path,
            PathStep("aspect", aspect.id, aspect.name),
            PathStep("claim", claim.id, claim.content[:80]),
        )
        _add(result, bounds, Reached(claim.memory_id, steps, weight * claim.confidence))


def _mentions(
    reader: GraphReader,
    entity: GraphEntity,
    path: tuple[PathStep, ...],
    weight: float,
    share: int,
    bounds: TraversalBounds,
    result: Walk,
) -> None:
    # One more than its share, so a hub entity shows as a bound that was hit.
    found = list(reader.mentioned_in(entity.id, max(0, share) + 1))
    if len(found) > share:
        result.note(f"maxTraversalPaths ({bounds.max_traversal_paths}) reached")
        found = found[:share]
    for memory_id in found:
        steps = (*path, PathStep("mention", memory_id, entity.name))
        _add(result, bounds, Reached(memory_id, steps, weight * MENTION_CONFIDENCE))


def _edges(
    reader: GraphReader,
    entity: GraphEntity,
    path: tuple[PathStep, ...],
    weight: float,
    bounds: TraversalBounds,
    visited: set[str],
    result: Walk,
) -> list[tuple[GraphEntity, tuple[PathStep, ...], float]]:
    edges = list(
        reader.edges(
            entity.id,
            bounds.min_dependency_strength,
            bounds.min_confidence,
            bounds.max_branching + 1,
        )
    )
    if len(edges) > bounds.max_branching:
        result.note(f"maxBranching ({bounds.max_branching}) reached")
        edges = edges[: bounds.max_branching]
    following = []
    for edge in edges:
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
