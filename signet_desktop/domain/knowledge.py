"""Knowledge-graph values: entities, aliases, aspects, claims, links, mentions, provenance.

Every graph write carries a `Provenance` (who, for which agent, within which Dreaming pass or
ontology proposal, on which evidence, from which memory); `storage/graph_rows.py` records it in
`graph_mutations` beside the row's before and after state.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any, ClassVar

from signet_desktop.domain.control_text import control_message, first_control
from signet_desktop.domain.errors import InvalidInput
from signet_desktop.domain.events import Event

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
    """Non-blank text of at most `limit` characters without control characters, stripped.

    (SQLite's `length()` stops at NUL: a NUL-led alias failed the table's CHECK as a 500.)
    """
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{what} must be non-empty text", code=code)
    text = value.strip()
    if len(text) > limit:
        raise InvalidInput(f"{what} is longer than {limit} characters", code=code)
    char = first_control(text)
    if char is not None:
        raise InvalidInput(f"{what} {control_message(char)}", code=code)
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


TIME_PRECISIONS = ("day", "week", "month", "year", "approximate")


@dataclass(frozen=True, slots=True)
class ClaimTimes:
    """When a claim holds (`valid_*`), when what it says happened (`occurred_*`), how precise
    those are, and when it should be looked at again — as the writer stated them (ISO-8601)."""

    valid_from: str | None = None
    valid_until: str | None = None
    occurred_at: str | None = None
    occurred_until: str | None = None
    time_precision: str | None = None
    review_after: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        """Field name -> value (the names are the `entity_attributes` columns too)."""
        return {name: getattr(self, name) for name in CLAIM_TIME_FIELDS}

    @classmethod
    def read(cls, source: Any) -> ClaimTimes:
        """From anything with these fields as keys (a row) or attributes (a payload)."""
        if hasattr(source, "keys"):
            return cls(**{name: source[name] for name in CLAIM_TIME_FIELDS})
        return cls(**{name: getattr(source, name) for name in CLAIM_TIME_FIELDS})


CLAIM_TIME_FIELDS = tuple(f.name for f in fields(ClaimTimes))


def check_times(times: ClaimTimes) -> ClaimTimes:
    """Dates and times must be ISO-8601 (a date or a date-time), the precision a known one;
    InvalidInput (`claim_invalid`) naming the field otherwise."""
    for name, value in times.as_dict().items():
        if name == "time_precision" or value is None:
            continue
        try:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
        except (TypeError, ValueError):
            raise InvalidInput(
                f"{name} must be an ISO-8601 date or time, not {str(value)[:40]!r}",
                code="claim_invalid",
            ) from None
    if times.time_precision is not None and times.time_precision not in TIME_PRECISIONS:
        raise InvalidInput(
            f"time_precision must be one of {', '.join(TIME_PRECISIONS)}", code="claim_invalid"
        )
    return times


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
    times: ClaimTimes = ClaimTimes()


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


@dataclass(frozen=True, slots=True, kw_only=True)
class KnowledgeChanged(Event):
    """Graph rows of an agent changed (after commit): which operation, which entities."""

    kind: ClassVar[str] = "knowledge.changed"
    operation: str
    entity_ids: tuple[str, ...] = ()
    memory_id: str | None = None


# --- structured remember payloads ---------------------------------------------------------

MAX_STRUCTURED_ENTITIES = 50
MAX_STRUCTURED_ASPECTS = 50
MAX_CLAIMS_PER_ASPECT = 20
MAX_ALIASES_PER_ENTITY = 10
MAX_STRUCTURED_HINTS = 10
MAX_HINT_CHARS = 500


def _structured_error(message: str) -> InvalidInput:
    return InvalidInput(f"structured: {message}", code="structured_invalid")


def _items(raw: Mapping[str, Any], key: str, limit: int, *alternates: str) -> list[Any]:
    value: Any = next((raw[k] for k in (key, *alternates) if raw.get(k) is not None), [])
    if not isinstance(value, list):
        raise _structured_error(f"{key} must be a list")
    if len(value) > limit:
        raise _structured_error(f"at most {limit} {key} (got {len(value)})")
    return value


def _field(item: Mapping[str, Any], *names: str) -> Any:
    return next((item[n] for n in names if item.get(n) is not None), None)


def _structured_text(value: object, what: str, limit: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _structured_error(f"{what} must be non-empty text")
    if len(value.strip()) > limit:
        raise _structured_error(f"{what} is longer than {limit} characters")
    return value.strip()


def _structured_type(value: object, where: str) -> str:
    if value is not None and not isinstance(value, str):
        raise _structured_error(f"{where}: type must be text")
    try:
        return check_entity_type(value)
    except InvalidInput as exc:
        raise InvalidInput(
            f"structured: {where}: {exc.message}", code="entity_type_invalid", details=exc.details
        ) from None


def _structured_unit(value: object, what: str, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise _structured_error(f"{what} must be a number between 0 and 1")
    return float(value)


def _parse_entity(item: object, n: int) -> StructuredEntity:
    where = f"entities[{n}]"
    if isinstance(item, str):
        item = {"name": item}
    if not isinstance(item, Mapping):
        raise _structured_error(f"{where} must be a name or an object")
    aliases = _items(item, "aliases", MAX_ALIASES_PER_ENTITY)
    description = _field(item, "description")
    return StructuredEntity(
        name=_structured_text(_field(item, "name"), f"{where}.name", MAX_NAME_CHARS),
        entity_type=_structured_type(_field(item, "type", "entity_type", "entityType"), where),
        description=None
        if description is None
        else _structured_text(description, f"{where}.description", MAX_DESCRIPTION_CHARS),
        aliases=tuple(
            _structured_text(a, f"{where}.aliases[{i}]", MAX_NAME_CHARS)
            for i, a in enumerate(aliases)
        ),
    )


def _parse_claim(item: object, where: str) -> StructuredClaim:
    if isinstance(item, str):
        item = {"content": item}
    if not isinstance(item, Mapping):
        raise _structured_error(f"{where} must be text or an object")
    key = _field(item, "claim_key", "claimKey", "key")
    kind = _field(item, "kind") or "attribute"
    if kind not in CLAIM_KINDS:
        raise _structured_error(f"{where}.kind must be one of {', '.join(CLAIM_KINDS)}")
    return StructuredClaim(
        content=_structured_text(
            _field(item, "content", "value"), f"{where}.content", MAX_CLAIM_CHARS
        ),
        claim_key=None
        if key is None
        else _structured_text(key, f"{where}.claim_key", MAX_KEY_CHARS),
        kind=kind,
        confidence=_structured_unit(_field(item, "confidence"), f"{where}.confidence", 1.0),
        importance=_structured_unit(_field(item, "importance"), f"{where}.importance", 0.5),
    )


def _parse_aspect(item: object, n: int) -> StructuredAspect:
    where = f"aspects[{n}]"
    if not isinstance(item, Mapping):
        raise _structured_error(f"{where} must be an object")
    claims = _items(item, "claims", MAX_CLAIMS_PER_ASPECT, "attributes")
    raw_type = _field(item, "entity_type", "entityType", "type")
    return StructuredAspect(
        entity=_structured_text(
            _field(item, "entity", "entity_name", "entityName"), f"{where}.entity", MAX_NAME_CHARS
        ),
        name=_structured_text(_field(item, "name", "aspect"), f"{where}.name", MAX_ASPECT_CHARS),
        entity_type=None if raw_type is None else _structured_type(raw_type, where),
        claims=tuple(_parse_claim(c, f"{where}.claims[{i}]") for i, c in enumerate(claims)),
    )


def parse_structured(raw: Mapping[str, Any] | None) -> StructuredPayload | None:
    """A remember request's `structured` block, validated (InvalidInput, nothing written).

    `entities`: names or `{name, type, description, aliases}`; `aspects`: `{entity, name,
    entity_type?, claims: [text | {content, claim_key, kind, confidence, importance}]}`;
    `hints`: up to 10 texts. Unknown keys are ignored; an empty block is None.
    """
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise _structured_error("must be an object")
    entities = _items(raw, "entities", MAX_STRUCTURED_ENTITIES)
    aspects = _items(raw, "aspects", MAX_STRUCTURED_ASPECTS)
    hints = _items(raw, "hints", MAX_STRUCTURED_HINTS)
    payload = StructuredPayload(
        entities=tuple(_parse_entity(e, n) for n, e in enumerate(entities)),
        aspects=tuple(_parse_aspect(a, n) for n, a in enumerate(aspects)),
        hints=tuple(
            _structured_text(h, f"hints[{n}]", MAX_HINT_CHARS) for n, h in enumerate(hints)
        ),
    )
    return None if payload.empty else payload
