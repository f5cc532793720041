"""An entity expanded for an agent (`knowledge_expand`): its structure and memories behind it."""

from __future__ import annotations

from dataclasses import dataclass

from signet_desktop.domain.knowledge import Entity

DEFAULT_MAX_TOKENS = 2_000  # Signet's default response budget
MAX_TOKENS = 10_000  # Signet's ceiling
MAX_QUESTION_CHARS = 2_000


@dataclass(frozen=True, slots=True)
class ExpandedClaim:
    """An active claim of an aspect, as it may enter a prompt (gated)."""

    content: str
    kind: str
    importance: float
    confidence: float


@dataclass(frozen=True, slots=True)
class ExpandedAspect:
    name: str
    weight: float
    claims: tuple[ExpandedClaim, ...]


@dataclass(frozen=True, slots=True)
class Constraint:
    """A constraint claim of the entity or of one it depends on: always surfaced."""

    entity_name: str
    content: str
    importance: float


@dataclass(frozen=True, slots=True)
class ExpandedLink:
    """An active outgoing dependency of the entity."""

    target_id: str
    target: str
    dependency_type: str
    strength: float


@dataclass(frozen=True, slots=True)
class ExpandedMemory:
    """A memory the graph reached, gated, with its share of the token budget."""

    id: str
    content: str
    tokens: int


@dataclass(frozen=True, slots=True)
class Expansion:
    """The whole answer; `memory_count` counts every live memory reached, `omitted` those the
    budget left out, `reasons` why the walk was partial (empty: it was complete)."""

    entity: Entity
    constraints: tuple[Constraint, ...]
    aspects: tuple[ExpandedAspect, ...]
    dependencies: tuple[ExpandedLink, ...]
    memory_count: int
    memories: tuple[ExpandedMemory, ...]
    max_tokens: int
    used_tokens: int
    omitted: int
    reasons: tuple[str, ...] = ()
