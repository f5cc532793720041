"""The Dreaming operation schema, version 1: an envelope and one typed payload per operation.

`{operation, payload, reason?, evidence?[{quote, source_ref}], provenance?, confidence, risk?}`
(Signet's `dreaming-operation-contract.ts`; payload keys camelCase). `parse_operation` never
raises: a raw value that is not a valid operation becomes a `Rejection` with a stable code and
a reason the model (or person) can act on.

Kinds: content operations must cite at least one exact quote; hygiene operations (archive_*,
merge_*) must name the pending attention record they resolve (`provenance: "attention:<id>"`);
control operations (flag, decline_attention) do neither.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

SCHEMA_VERSION = 1
MAX_TEXT = 2000
MAX_QUOTE = 1000  # domain/knowledge.py MAX_QUOTE_CHARS
MAX_EVIDENCE = 20

Id = Annotated[str, Field(min_length=1, max_length=256)]
Name = Annotated[str, Field(min_length=1, max_length=200)]
Text = Annotated[str, Field(min_length=1, max_length=MAX_TEXT)]
TimePrecision = Literal["day", "week", "month", "year", "approximate"]


class Payload(BaseModel):
    """A payload: camelCase keys, unknown keys refused, blank strings refused."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True
    )

    @field_validator("*", mode="before")
    @classmethod
    def _strip(cls, value: Any) -> Any:
        return value.strip() if isinstance(value, str) else value


class CreateEntity(Payload):
    name: Name
    type: Annotated[str, Field(min_length=1, max_length=64)] = "unknown"


class CreateAspect(Payload):
    entity_id: Id
    name: Name


class RenameAspect(Payload):
    entity_id: Id
    aspect_id: Id
    new_name: Name


class ClaimValue(Payload):
    entity_id: Id
    aspect_id: Id
    claim_key: Annotated[str, Field(min_length=1, max_length=200)]
    value: Text
    review_after: str | None = None
    occurred_at: str | None = None
    occurred_until: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    time_precision: TimePrecision | None = None


class SupersedeClaimValue(ClaimValue):
    attribute_id: Id | None = None


class CreateLink(Payload):
    from_entity_id: Id
    to_entity_id: Id
    link_type: Annotated[str, Field(min_length=1, max_length=64)]


class UpdateLink(Payload):
    link_id: Id
    link_type: Annotated[str, Field(min_length=1, max_length=64)]


class RenameEntity(Payload):
    entity_id: Id
    new_name: Name


class Archive(Payload):
    target: Id
    reason: Text


class MergeEntities(Payload):
    targets: Annotated[list[Id], Field(min_length=2, max_length=20)]
    survivor: Id


class MergeAspects(Payload):
    entity_id: Id
    target: Id
    sources: Annotated[list[Id], Field(min_length=1, max_length=20)]
    new_name: Name | None = None


class Flag(Payload):
    subject_ref: Annotated[str, Field(min_length=1, max_length=512)]
    details: Annotated[str, Field(max_length=MAX_TEXT)] = ""
    priority: Annotated[int, Field(ge=0, le=100)] = 50


class DeclineAttention(Payload):
    attention_id: Id


PAYLOADS: dict[str, type[Payload]] = {
    "create_entity": CreateEntity,
    "create_aspect": CreateAspect,
    "rename_aspect": RenameAspect,
    "add_claim_value": ClaimValue,
    "set_claim_value": ClaimValue,
    "supersede_claim_value": SupersedeClaimValue,
    "create_link": CreateLink,
    "update_link": UpdateLink,
    "rename_entity": RenameEntity,
    "archive_entity": Archive,
    "archive_aspect": Archive,
    "archive_claim_value": Archive,
    "archive_link": Archive,
    "merge_entities": MergeEntities,
    "merge_aspects": MergeAspects,
    "flag": Flag,
    "decline_attention": DeclineAttention,
}
OPERATIONS = tuple(PAYLOADS)
HYGIENE_OPS = frozenset(
    {"archive_entity", "archive_aspect", "archive_claim_value", "archive_link"}
    | {"merge_entities", "merge_aspects"}
)
CONTROL_OPS = frozenset({"flag", "decline_attention"})
CONTENT_OPS = frozenset(OPERATIONS) - HYGIENE_OPS - CONTROL_OPS


class Evidence(BaseModel):
    """One citation: a quote that must occur verbatim in the named source."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    quote: Annotated[str, Field(min_length=1, max_length=MAX_QUOTE)]
    source_ref: Annotated[str, Field(min_length=3, max_length=300)]


class Envelope(BaseModel):
    """The operation envelope (payload checked separately, by operation)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    operation: str
    payload: dict[str, Any]
    reason: Annotated[str, Field(max_length=MAX_TEXT)] | None = None
    evidence: Annotated[list[Evidence], Field(max_length=MAX_EVIDENCE)] = []
    provenance: Annotated[str, Field(max_length=300)] | None = None
    confidence: float
    risk: Literal["low", "medium", "high"] | None = None
    schema_version: Literal[1] = 1


@dataclass(frozen=True, slots=True)
class Operation:
    """A schema-valid operation: the envelope and its typed payload."""

    index: int
    envelope: Envelope
    payload: Payload

    @property
    def name(self) -> str:
        return self.envelope.operation

    @property
    def kind(self) -> str:
        if self.name in HYGIENE_OPS:
            return "hygiene"
        return "control" if self.name in CONTROL_OPS else "content"

    def payload_json(self) -> dict[str, Any]:
        """The payload as the wire writes it (camelCase, unset optionals left out)."""
        return self.payload.model_dump(by_alias=True, exclude_none=True)

    def evidence_json(self) -> list[dict[str, str]]:
        return [e.model_dump() for e in self.envelope.evidence]

    def attention_id(self) -> str | None:
        """The attention id `provenance: "attention:<id>"` names, if any."""
        return attention_id_of(self.envelope.provenance)


@dataclass(frozen=True, slots=True)
class Rejection:
    """A raw value that is not a valid operation, and why."""

    index: int
    operation: str
    code: str
    reason: str
    raw: Any


def attention_id_of(provenance: str | None) -> str | None:
    if not provenance:
        return None
    prefix, sep, rest = provenance.strip().partition(":")
    if sep and prefix == "attention" and rest.strip():
        return rest.strip()
    return None


def parse_operation(raw: object, index: int = 0) -> Operation | Rejection:
    """Validate one raw operation (a mapping); never raises."""
    if not isinstance(raw, dict):
        return Rejection(index, "", "operation_malformed", "an operation must be an object", raw)
    name = raw.get("operation")
    name = name if isinstance(name, str) else ""
    payload_model = PAYLOADS.get(name)
    if payload_model is None:
        shown = name or repr(raw.get("operation"))
        return Rejection(
            index,
            name,
            "unknown_operation",
            f"unknown operation {shown[:60]!r} (known: {', '.join(OPERATIONS)})",
            raw,
        )
    confidence = raw.get("confidence")
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, int | float)
        or not math.isfinite(confidence)
        or not 0 <= confidence <= 1
    ):
        return Rejection(
            index, name, "confidence_invalid", "confidence must be a finite number in 0..1", raw
        )
    try:
        envelope = Envelope.model_validate(raw)
    except ValidationError as exc:
        return Rejection(index, name, "operation_malformed", _describe(exc), raw)
    try:
        payload = payload_model.model_validate(envelope.payload)
    except ValidationError as exc:
        return Rejection(index, name, "payload_malformed", f"{name}: {_describe(exc)}", raw)
    return Operation(index, envelope, payload)


def parse_operations(raws: list[Any]) -> list[Operation | Rejection]:
    return [parse_operation(raw, i) for i, raw in enumerate(raws)]


def _describe(exc: ValidationError) -> str:
    """The first few field errors as `field: message` (no input values echoed)."""
    parts = []
    for error in exc.errors()[:4]:
        where = ".".join(str(p) for p in error["loc"]) or "value"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)
