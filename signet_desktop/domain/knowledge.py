"""Knowledge-graph values: entities, aliases, aspects, claims, links, mentions, provenance.

Every graph write carries a `Provenance` (who, for which agent, within which Dreaming pass or
ontology proposal, on which evidence, from which memory); `storage/graph.py` records it in
`graph_mutations` beside the row's before and after state.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from signet_desktop.domain.errors import InvalidInput

# Signet's reference gives no closed list of entity types; this short one covers what a
# coding agent's memory names. `unknown` is the default when a writer does not say.
ENTITY_TYPES: tuple[str, ...] = (
    "person", "organization", "project", "system", "tool", "service", "library",
    "concept", "skill", "task", "place", "event", "document", "unknown",
)  # fmt: skip
CLAIM_KINDS: tuple[str, ...] = ("attribute", "constraint", "policy", "action_type", "interface")
ENTITY_STATUSES: tuple[str, ...] = ("active", "archived", "merged", "unsupported")

MAX_NAME_CHARS = 200
MAX_DESCRIPTION_CHARS = 2_000
MAX_ASPECT_CHARS = 120
MAX_CLAIM_CHARS = 2_000
MAX_KEY_CHARS = 120
MAX_LINK_TYPE_CHARS = 64
MAX_REASON_CHARS = 1_000
MAX_EVIDENCE_ITEMS = 20
MAX_QUOTE_CHARS = 1_000
MAX_SOURCE_REF_CHARS = 300


def check_entity_type(entity_type: str | None) -> str:
    """A known entity type (blank: `unknown`); anything else is refused with the list."""
    value = (entity_type or "unknown").strip().lower()
    if value not in ENTITY_TYPES:
        raise InvalidInput(
            f"unknown entity type {entity_type!r}; allowed: {', '.join(ENTITY_TYPES)}",
            code="entity_type_invalid",
            details={"allowed": list(ENTITY_TYPES)},
        )
    return value


def check_text(value: object, what: str, limit: int, *, code: str = "invalid_input") -> str:
    """Non-blank text of at most `limit` characters, stripped."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{what} must be non-empty text", code=code)
    text = value.strip()
    if len(text) > limit:
        raise InvalidInput(f"{what} is longer than {limit} characters", code=code)
    return text


def check_unit(value: float, what: str) -> float:
    """A number in [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise InvalidInput(f"{what} must be a number between 0 and 1")
    return float(value)


@dataclass(frozen=True, slots=True)
class Evidence:
    """One citation behind a graph write: a quote and where it came from (`memory:<id>`...)."""

    quote: str
    source_ref: str


@dataclass(frozen=True, slots=True)
class Provenance:
    """Who writes, for which agent, within which pass/proposal, on which evidence."""

    actor: str
    agent_id: str
    pass_id: str | None = None
    proposal_id: str | None = None
    evidence: tuple[Evidence, ...] = ()
    source_memory_id: str | None = None

    def evidence_json(self) -> list[dict[str, str]]:
        """The evidence as JSON-ready objects."""
        return [{"quote": e.quote, "source_ref": e.source_ref} for e in self.evidence]


def check_evidence(items: tuple[Evidence, ...]) -> tuple[Evidence, ...]:
    """At most `MAX_EVIDENCE_ITEMS` citations with bounded quote and reference."""
    if len(items) > MAX_EVIDENCE_ITEMS:
        raise InvalidInput(f"at most {MAX_EVIDENCE_ITEMS} evidence items")
    for item in items:
        if len(item.quote) > MAX_QUOTE_CHARS or len(item.source_ref) > MAX_SOURCE_REF_CHARS:
            raise InvalidInput("an evidence quote or source_ref is too long")
    return items


@dataclass(frozen=True, slots=True)
class Entity:
    """One entity row (the embedding is not carried)."""

    id: str
    agent_id: str
    name: str
    canonical_name: str
    entity_type: str
    description: str | None
    mentions: int
    pinned: bool
    status: str
    merged_into: str | None
    source_kind: str | None
    source_id: str | None
    created_by: str
    created_at: str
    updated_at: str
    archived_at: str | None = None
    archived_reason: str | None = None
    proposal_id: str | None = None


@dataclass(frozen=True, slots=True)
class Alias:
    """Another name an entity goes by."""

    id: str
    entity_id: str
    alias: str
    canonical_alias: str
    source: str
    created_at: str


@dataclass(frozen=True, slots=True)
class Aspect:
    """A facet of an entity that claims hang under (e.g. `deployment`)."""

    id: str
    entity_id: str
    agent_id: str
    name: str
    canonical_name: str
    weight: float
    status: str
    created_at: str
    updated_at: str


@dataclass(frozen=True, slots=True)
class Claim:
    """One claim value (an `entity_attributes` row) with its version chain."""

    id: str
    aspect_id: str
    agent_id: str
    memory_id: str | None
    kind: str
    content: str
    confidence: float
    importance: float
    status: str
    claim_key: str | None
    group_key: str | None
    version: int
    version_root_id: str | None
    previous_attribute_id: str | None
    superseded_by: str | None
    evidence: tuple[Evidence, ...]
    proposal_id: str | None
    created_at: str
    updated_at: str


@dataclass(frozen=True, slots=True)
class Dependency:
    """A structural link between two entities (`entity_dependencies`)."""

    id: str
    agent_id: str
    source_entity_id: str
    target_entity_id: str
    dependency_type: str
    strength: float
    confidence: float
    reason: str | None
    aspect_id: str | None
    status: str
    created_at: str
    updated_at: str
    source_name: str = ""
    target_name: str = ""


@dataclass(frozen=True, slots=True)
class Relation:
    """A legacy semantic relation row (kept for projections)."""

    id: str
    agent_id: str
    source_entity_id: str
    target_entity_id: str
    relation_type: str
    strength: float
    confidence: float
    mentions: int
    created_at: str
    updated_at: str


@dataclass(frozen=True, slots=True)
class EntityMention:
    """A memory that mentions the entity, with the memory's own provenance."""

    memory_id: str
    mention_text: str | None
    confidence: float
    linked_at: str
    excerpt: str
    memory_type: str
    who: str | None
    source_type: str | None
    memory_created_at: str
    memory_deleted: bool


@dataclass(frozen=True, slots=True)
class AspectDetail:
    """An aspect with its claims: active first, then history (superseded, archived...)."""

    aspect: Aspect
    claims: tuple[Claim, ...]


@dataclass(frozen=True, slots=True)
class EntityDetail:
    """Everything the graph knows about one entity."""

    entity: Entity
    aliases: tuple[Alias, ...]
    aspects: tuple[AspectDetail, ...]
    outgoing: tuple[Dependency, ...]
    incoming: tuple[Dependency, ...]
    mentions: tuple[EntityMention, ...]
    mention_total: int


@dataclass(frozen=True, slots=True)
class EntityPage:
    """One page of an entity listing."""

    items: tuple[Entity, ...]
    total: int
    limit: int
    offset: int


@dataclass(frozen=True, slots=True)
class KnowledgeStats:
    """Counts per agent: entities by status and type, aspects, claims by status, links."""

    entities: Mapping[str, int]
    entity_types: Mapping[str, int]
    aspects: int
    claims: Mapping[str, int]
    dependencies: int
    mentions: int
    mutations: int


@dataclass(frozen=True, slots=True)
class GraphMutation:
    """One `graph_mutations` row: a write, its provenance and the row before/after."""

    id: str
    agent_id: str
    seq: int
    actor: str
    pass_id: str | None
    proposal_id: str | None
    operation: str
    target_table: str
    target_id: str
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None
    evidence: tuple[Evidence, ...]
    source_memory_id: str | None
    reverts_mutation_id: str | None
    created_at: str


@dataclass(frozen=True, slots=True)
class StructuredEntity:
    """An entity named in a structured remember payload (get-or-create by name and type)."""

    name: str
    entity_type: str = "unknown"
    description: str | None = None
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class StructuredClaim:
    """A claim under an aspect; `claim_key` makes it a versioned value (set, not add)."""

    content: str
    claim_key: str | None = None
    kind: str = "attribute"
    confidence: float = 1.0
    importance: float = 0.5


@dataclass(frozen=True, slots=True)
class StructuredAspect:
    """An aspect of a named entity, with its claims."""

    entity: str
    name: str
    entity_type: str | None = None
    claims: tuple[StructuredClaim, ...] = ()


@dataclass(frozen=True, slots=True)
class StructuredPayload:
    """A remember request's `structured` block, validated."""

    entities: tuple[StructuredEntity, ...] = ()
    aspects: tuple[StructuredAspect, ...] = ()
    hints: tuple[str, ...] = field(default_factory=tuple)

    @property
    def empty(self) -> bool:
        return not (self.entities or self.aspects or self.hints)


@dataclass(frozen=True, slots=True)
class StructuredOutcome:
    """What applying a structured payload wrote."""

    entities_linked: int = 0
    entity_ids: tuple[str, ...] = ()
    claims_written: int = 0
    hints_written: int = 0
    hints_deferred: bool = False
