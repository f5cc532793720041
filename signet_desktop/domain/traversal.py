"""Graph traversal values: focal entities, the rows a walk reads, and the path to a memory."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class GraphEntity:
    """An active entity of one agent, with its mention degree (`entities.mentions`)."""

    id: str
    name: str
    mentions: int


@dataclass(frozen=True, slots=True)
class GraphAspect:
    """An active aspect of an entity (`entity_aspects`), heaviest first."""

    id: str
    entity_id: str
    name: str
    weight: float


@dataclass(frozen=True, slots=True)
class GraphClaim:
    """An active claim value (`entity_attributes`) and the memory that is its evidence."""

    id: str
    aspect_id: str
    memory_id: str | None
    kind: str
    content: str
    confidence: float


@dataclass(frozen=True, slots=True)
class GraphEdge:
    """An active dependency seen from `entity_id`: the entity at the other end and how strong."""

    id: str
    entity_id: str
    other: GraphEntity
    dependency_type: str
    strength: float
    confidence: float
    outgoing: bool  # entity_id -> other (False: other -> entity_id)


@dataclass(frozen=True, slots=True)
class PathStep:
    """One step of the path that reached a memory.

    `kind`: `entity` (the focal entity or one a dependency led to), `aspect`, `claim` (an
    attribute whose evidence is the memory), `dependency` (the edge taken, `name` its type) or
    `mention` (the memory mentions the entity before it).
    """

    kind: str
    id: str
    name: str


@dataclass(frozen=True, slots=True)
class TraversalSummary:
    """What a traversal did for one query (`meta.traversal` in the recall response)."""

    partial: bool
    focal_entities: tuple[GraphEntity, ...]
    paths: int
    reasons: tuple[str, ...] = ()  # why it was partial: bounds hit, the time budget
