"""Pydantic request models at the HTTP edge, with Signet's field names.

Bodies are strict about the fields they know: numbers are not read from strings and booleans
not from 0/1. Unknown fields are ignored, as Signet ignores them, and logged once per name
(`unknown_fields.py`). Query-string models are lax about types (every query value is a string).
Models turn themselves into the core's frozen request dataclasses; the core still validates
content, types and sizes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Annotated, Any, ClassVar, Literal

from fastapi import Path
from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    WithJsonSchema,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from signet_desktop.api.http.unknown_fields import note_unknown
from signet_desktop.domain.control_text import find_control
from signet_desktop.domain.errors import InvalidInput
from signet_desktop.domain.knowledge import parse_structured
from signet_desktop.domain.memory import MemoryPatch
from signet_desktop.domain.recall import (
    AS_OF_HELP,
    MAX_RECALL_LIMIT,
    RecallFilters,
    RecallQuery,
)
from signet_desktop.domain.scope import AGENT_ID_PATTERN
from signet_desktop.recall.filters import MAX_TAG_FILTERS
from signet_desktop.service.memories.service import RememberRequest

MAX_NESTING = 32
MAX_LIST_LIMIT = 1000
MAX_HISTORY_LIMIT = 1000
MAX_VERSION = 2**62

# Path segments: one of our rows by id, and a harness's session key.
RowId = Annotated[str, Path(min_length=1, max_length=64)]
SessionKey = Annotated[str, Path(min_length=1, max_length=512)]


def check_json_text(data: Any) -> None:
    """Refuse lone surrogates (which SQLite cannot store) and absurd nesting, anywhere."""
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_NESTING:
            raise ValueError(f"JSON is nested more than {MAX_NESTING} levels deep")
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError(
                    "text contains an invalid unicode escape (lone surrogate)"
                ) from None
        elif isinstance(value, dict):
            stack.extend((item, depth + 1) for pair in value.items() for item in pair)
        elif isinstance(value, list):
            stack.extend((item, depth + 1) for item in value)


CONTROL_ERROR = "string_control_character"


def refuse_control_characters(model: str, data: Any, skip: Iterable[str] = ()) -> None:
    """Raise a ValidationError at the path of a control character in `data` (a 422 naming it)."""
    found = find_control(data, skip)
    if found is None:
        return
    error = PydanticCustomError(CONTROL_ERROR, found.message)
    detail = InitErrorDetails(type=error, loc=found.loc, input=None)
    raise ValidationError.from_exception_data(model, [detail])


def normalise_timestamp(value: str) -> str:
    """ISO-8601 date or datetime -> UTC `YYYY-MM-DDTHH:MM:SS.mmmZ` (naive means UTC)."""
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        raise ValueError(
            "must be an ISO-8601 date or timestamp, e.g. 2025-01-31T12:00:00Z"
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    try:
        utc = parsed.astimezone(UTC)
    except OverflowError:  # e.g. 0001-01-01T00:00:00+01:00 is in year 0 once in UTC
        raise ValueError(TIMESTAMP_RANGE_MESSAGE) from None
    return utc.isoformat(timespec="milliseconds").replace("+00:00", "Z")


TIMESTAMP_RANGE_MESSAGE = "must fall between 0001-01-01 and 9999-12-31 once converted to UTC"
Timestamp = Annotated[
    str,
    AfterValidator(normalise_timestamp),
    WithJsonSchema(
        {
            "type": "string",
            "format": "date-time",
            "description": "ISO-8601 date or timestamp (no offset means UTC), "
            "between 0001-01-01 and 9999-12-31 in UTC",
        }
    ),
]
Score = Annotated[float, Field(ge=0.0, le=1.0)]
Version = Annotated[int, Field(ge=1, le=MAX_VERSION)]


def split_tags(tags: str | Iterable[str] | None) -> tuple[str, ...]:
    """Tags as a list or Signet's comma-separated string, trimmed, empties dropped."""
    if tags is None:
        return ()
    items = tags.split(",") if isinstance(tags, str) else tags
    return tuple(t.strip() for t in items if t.strip())


def as_of_field() -> Any:
    """Recall's reference time (`asOf` / `as_of`): the core checks it (400 bad_as_of)."""
    return Field(
        default=None,
        validation_alias=AliasChoices("asOf", "as_of"),
        description=AS_OF_HELP,
        json_schema_extra={"format": "date-time"},
    )


class Body(BaseModel):
    """Base of JSON bodies: strict types, unknown fields ignored (and logged), no NaN/Infinity,
    no control characters in any string or key (`domain/control_text.py`)."""

    model_config = ConfigDict(extra="ignore", strict=True, allow_inf_nan=False, frozen=True)
    # Top-level fields of raw text the core normalises itself (control characters dropped).
    RAW_TEXT_FIELDS: ClassVar[frozenset[str]] = frozenset()

    @model_validator(mode="before")
    @classmethod
    def _check_text(cls, data: Any) -> Any:
        check_json_text(data)
        refuse_control_characters(cls.__name__, data, cls.RAW_TEXT_FIELDS)
        note_unknown(cls, data)
        return data


class StrictBody(Body):
    """A body of our own repair routes, which no Signet client sends: unknown fields refused,
    so a typo such as `dryrun` is a 422 rather than a silent real run."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, frozen=True)


class Params(BaseModel):
    """Base of query-string models: values arrive as strings, unknown parameters ignored,
    control characters refused (as over HTTP, for the MCP tools that build these directly)."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False, frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _note_unknown(cls, data: Any) -> Any:
        refuse_control_characters(cls.__name__, data)
        note_unknown(cls, data)
        return data


def _agent_field() -> Any:
    # The core checks the pattern (400 agent_id_invalid); the schema states it for clients.
    return Field(
        default=None,
        validation_alias=AliasChoices("agentId", "agent_id"),
        json_schema_extra={"pattern": f"^{AGENT_ID_PATTERN.pattern}$", "maxLength": 128},
    )


def _non_empty(what: str) -> Any:
    """A required text the core refuses when blank (400), stated as minLength 1 for clients."""
    return Field(json_schema_extra={"minLength": 1, "description": f"{what}; not blank"})


def _check_tag_count(tags: TagsIn) -> TagsIn:
    count = len(tags) if isinstance(tags, list) else len(split_tags(tags))
    if count > MAX_TAG_FILTERS:
        raise ValueError(f"at most {MAX_TAG_FILTERS} tag filters per recall, got {count}")
    return tags


TagsIn = list[str] | str | None
# Recall applies every tag filter (all must match); more than MAX_TAG_FILTERS is refused
# rather than silently dropped. (`maxItems` constrains the list form only.)
TagFilters = Annotated[
    TagsIn,
    AfterValidator(_check_tag_count),
    Field(
        description=f"all must match; at most {MAX_TAG_FILTERS} (list or comma-separated)",
        json_schema_extra={"maxItems": MAX_TAG_FILTERS},
    ),
]
TagFilterText = Annotated[
    str | None,
    AfterValidator(_check_tag_count),
    Field(description=f"comma-separated, all must match; at most {MAX_TAG_FILTERS}"),
]


# Signet remember fields the core has no column for yet: kept in metadata so nothing is lost.
PROVENANCE_FIELDS = (
    "source_path", "runtime_path", "occurred_at", "observed_at", "source_created_at",
    "valid_from", "valid_until", "review_after",
)  # fmt: skip


def _valid_structured(value: dict[str, Any] | None) -> dict[str, Any] | None:
    """A `structured` block the core accepts (the core's message on a 422)."""
    try:
        parse_structured(value)
    except InvalidInput as exc:
        raise ValueError(exc.message) from None
    return value


class RememberBody(Body):
    """POST /api/memory/remember (and /api/memory/save, /api/hook/remember)."""

    content: str = _non_empty("the memory text (`critical:` and `[t1,t2]:` prefixes apply)")
    type: str | None = None
    tags: list[str] | str | None = None
    importance: Score | None = None
    pinned: bool | None = None
    who: str | None = None
    project: str | None = None
    scope: str | None = None
    visibility: Literal["global", "private"] | None = None
    source_type: str | None = Field(
        default=None, validation_alias=AliasChoices("sourceType", "source_type")
    )
    source_id: str | None = Field(
        default=None, validation_alias=AliasChoices("sourceId", "source_id")
    )
    source_path: str | None = Field(
        default=None, validation_alias=AliasChoices("sourcePath", "source_path")
    )
    runtime_path: str | None = Field(
        default=None, validation_alias=AliasChoices("runtimePath", "runtime_path")
    )
    idempotency_key: str | None = Field(
        default=None, validation_alias=AliasChoices("idempotencyKey", "idempotency_key")
    )
    created_at: Timestamp | None = Field(
        default=None, validation_alias=AliasChoices("createdAt", "created_at")
    )
    occurred_at: Timestamp | None = Field(default=None, validation_alias="occurredAt")
    observed_at: Timestamp | None = Field(default=None, validation_alias="observedAt")
    source_created_at: Timestamp | None = Field(default=None, validation_alias="sourceCreatedAt")
    valid_from: Timestamp | None = Field(default=None, validation_alias="validFrom")
    valid_until: Timestamp | None = Field(default=None, validation_alias="validUntil")
    review_after: Timestamp | None = Field(default=None, validation_alias="reviewAfter")
    session_id: str | None = Field(
        default=None, validation_alias=AliasChoices("sessionId", "session_id")
    )
    agent_id: str | None = _agent_field()
    metadata: dict[str, Any] | None = None
    # {entities, aspects, hints}: validated here (a bad block is a 422 and nothing is
    # written), applied with the memory (service/memories/structured.py).
    structured: Annotated[dict[str, Any] | None, AfterValidator(_valid_structured)] = None

    def to_request(self, agent_id: str) -> RememberRequest:
        """The core's remember request for this agent."""
        metadata = dict(self.metadata or {})
        for name in PROVENANCE_FIELDS:
            value = getattr(self, name)
            if value is not None:
                metadata.setdefault(name, value)
        return RememberRequest(
            content=self.content,
            agent_id=agent_id,
            type=self.type,
            tags=split_tags(self.tags),
            importance=self.importance,
            pinned=self.pinned,
            who=self.who,
            project=self.project,
            scope=self.scope,
            visibility=self.visibility or "global",
            source_type=self.source_type,
            source_id=self.source_id,
            idempotency_key=self.idempotency_key,
            session_id=self.session_id,
            created_at=self.created_at,
            metadata=metadata,
            structured=parse_structured(self.structured),
        )


class RecallTime(Body):
    """Signet's `time` window; start/end act as since/until."""

    start: Timestamp | None = None
    end: Timestamp | None = None
    facets: (
        list[Literal["session", "source", "captured", "observed", "occurred", "valid"]] | None
    ) = None
    mode: Literal["auto", "timeline", "filter"] | None = None


class RecallOptions(BaseModel):
    """Fields shared by the recall body and the search query string."""

    limit: int = Field(10, ge=1, le=MAX_RECALL_LIMIT)
    type: str | None = None
    who: str | None = None
    project: str | None = None
    scope: str | None = None
    since: Timestamp | None = None
    until: Timestamp | None = None
    pinned: bool | None = None
    importance_min: Score | None = Field(
        default=None, validation_alias=AliasChoices("importance_min", "importanceMin")
    )
    min_score: Score | None = Field(
        default=None, validation_alias=AliasChoices("min_score", "minScore")
    )
    keyword_query: str | None = Field(
        default=None, validation_alias=AliasChoices("keywordQuery", "keyword_query")
    )
    expand: bool = False
    agent_id: str | None = _agent_field()
    as_of: str | None = as_of_field()

    def build_query(
        self, query: str, agent_id: str, tags: tuple[str, ...], window: tuple[str | None, ...]
    ) -> RecallQuery:
        since, until = window
        return RecallQuery(
            query=query,
            agent_id=agent_id,
            limit=self.limit,
            keyword_query=self.keyword_query,
            min_score=self.min_score,
            expand=self.expand,
            as_of=self.as_of,
            filters=RecallFilters(
                type=self.type,
                tags=tags,
                who=self.who,
                project=self.project,
                scope=self.scope,
                since=since,
                until=until,
                pinned=self.pinned,
                importance_min=self.importance_min,
            ),
        )


class RecallBody(RecallOptions, Body):
    """POST /api/memory/recall."""

    query: str = _non_empty("the recall query")
    tags: TagFilters = None
    session_key: str | None = Field(
        default=None, validation_alias=AliasChoices("sessionKey", "session_key")
    )
    include_recalled: bool | None = Field(
        default=None, validation_alias=AliasChoices("includeRecalled", "include_recalled")
    )
    time: RecallTime | None = None
    aggregate: bool | None = None
    aggregate_budget: Literal["small", "medium", "large"] | None = Field(
        default=None, validation_alias=AliasChoices("aggregateBudget", "aggregate_budget")
    )
    save_aggregate: bool | None = Field(
        default=None, validation_alias=AliasChoices("saveAggregate", "save_aggregate")
    )
    # Which rankers run (ours; absent: all). `["transcript"]` searches session turns only.
    channels: list[str] | None = Field(default=None, max_length=8)

    def to_query(self, agent_id: str) -> RecallQuery:
        """The core's recall query; `time.start/end` fill in a missing since/until."""
        time = self.time or RecallTime()
        window = (self.since or time.start, self.until or time.end)
        query = self.build_query(self.query, agent_id, split_tags(self.tags), window)
        if self.channels is None:
            return query
        return replace(query, channels=tuple(self.channels))


class SearchParams(RecallOptions, Params):
    """GET /api/memory/search?q=... (the recall GET alias)."""

    q: str | None = None
    query: str | None = None
    tags: TagFilterText = None

    def to_query(self, agent_id: str) -> RecallQuery:
        """The core's recall query (an absent query is refused by the core as empty)."""
        text = self.q if self.q is not None else (self.query or "")
        return self.build_query(text, agent_id, split_tags(self.tags), (self.since, self.until))


class AgentParams(Params):
    """Query parameters of routes that only need the agent scope."""

    agent_id: str | None = _agent_field()


class ReasonParams(AgentParams):
    """A removal's query: the agent and why (`reason`, kept in the history)."""

    reason: str | None = Field(None, max_length=500)


class ListParams(AgentParams):
    """GET /api/memories."""

    limit: int = Field(100, ge=1, le=MAX_LIST_LIMIT)
    offset: int = Field(0, ge=0, le=2**53)
    type: str | None = Field(default=None, max_length=200, description="only this memory type")


class HistoryParams(AgentParams):
    """GET /api/memory/{id}/history."""

    limit: int = Field(200, ge=1, le=MAX_HISTORY_LIMIT)


class ChangeBody(Body):
    """What every lifecycle change carries: reason, expected version, actor, scope."""

    reason: str | None = None
    if_version: Version | None = Field(
        default=None, validation_alias=AliasChoices("if_version", "ifVersion")
    )
    changed_by: str | None = Field(
        default=None, validation_alias=AliasChoices("changed_by", "changedBy")
    )
    agent_id: str | None = _agent_field()


class PatchBody(ChangeBody):
    """PATCH /api/memory/{id}."""

    content: str | None = None
    type: str | None = None
    tags: list[str] | str | None = None
    importance: Score | None = None
    pinned: bool | None = None

    def to_patch(self) -> MemoryPatch:
        return MemoryPatch(
            content=self.content,
            type=self.type,
            tags=None if self.tags is None else split_tags(self.tags),
            importance=self.importance,
            pinned=self.pinned,
        )


class ForgetBody(ChangeBody):
    """DELETE /api/memory/{id} body (the same fields may come as query parameters)."""

    force: bool | None = None


class ForgetParams(AgentParams):
    """DELETE /api/memory/{id} query parameters."""

    reason: str | None = None
    force: bool | None = None
    if_version: Version | None = Field(
        default=None, validation_alias=AliasChoices("if_version", "ifVersion")
    )


class RecoverBody(ChangeBody):
    """POST /api/memory/{id}/recover."""
