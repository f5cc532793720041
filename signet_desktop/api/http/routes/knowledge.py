"""/api/knowledge/*: the knowledge graph (entities, aliases, aspects, claims, links).

Reads: `GET /api/knowledge/entities` (q, type, status, limit, offset), `GET
/api/knowledge/entities/{id}` (aspects with claims and their history, links both ways,
mentions with the memory's provenance), `GET /api/knowledge/stats`, `POST
/api/knowledge/expand` (one entity by name, Signet's shape, `service/knowledge/expand.py`).
Writes (explicit operations, each logged in `graph_mutations` with the actor): `POST
/api/knowledge/entities`, `.../{id}/aliases|aspects|claims|archive|rename`, `POST
/api/knowledge/links` and `.../links/{id}/archive`, `POST /api/knowledge/claims/{id}/archive`.
Another agent's id is a 404. A malformed body (an unknown entity type, an oversized field) is
a 422.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, TypeVar

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import AfterValidator, AliasChoices, Field

from signet_desktop.api.http.schemas import AgentParams, Body, Params, RowId
from signet_desktop.api.http.scope import (
    body_agent,
    get_service,
    off_loop,
    resolve_actor,
    resolve_agent,
)
from signet_desktop.api.knowledge_views import (
    alias_json,
    aspect_json,
    claim_json,
    dependency_json,
    entity_detail_json,
    entity_json,
    entity_page_json,
    expansion_json,
    stats_json,
)
from signet_desktop.domain.errors import InvalidInput
from signet_desktop.domain.expansion import DEFAULT_MAX_TOKENS, MAX_QUESTION_CHARS, MAX_TOKENS
from signet_desktop.domain.knowledge import (
    CLAIM_KINDS,
    ENTITY_STATUSES,
    ENTITY_TYPES,
    MAX_ALIASES_PER_ENTITY,
    MAX_ASPECT_CHARS,
    MAX_CLAIM_CHARS,
    MAX_DESCRIPTION_CHARS,
    MAX_EVIDENCE_ITEMS,
    MAX_KEY_CHARS,
    MAX_LINK_TYPE_CHARS,
    MAX_NAME_CHARS,
    MAX_QUOTE_CHARS,
    MAX_REASON_CHARS,
    MAX_SOURCE_REF_CHARS,
    Evidence,
    check_entity_type,
)
from signet_desktop.domain.memory import Actor
from signet_desktop.service.knowledge.service import (
    MAX_LIST_LIMIT,
    MAX_MENTION_LIMIT,
    MAX_QUERY_CHARS,
    KnowledgeService,
)

T = TypeVar("T")

router = APIRouter(tags=["knowledge"])

Unit = Annotated[float, Field(ge=0.0, le=1.0)]


def _known_type(value: str) -> str:
    try:
        return check_entity_type(value)
    except InvalidInput as exc:
        raise ValueError(exc.message) from None


EntityType = Annotated[
    str,
    Field(max_length=32, json_schema_extra={"enum": list(ENTITY_TYPES)}),
    AfterValidator(_known_type),
]
Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS)]


class EvidenceItem(Body):
    """A citation: a quote and where it is from (`memory:<id>`, `transcript:<key>#<n>`...)."""

    quote: str = Field("", max_length=MAX_QUOTE_CHARS)
    source_ref: str = Field(
        min_length=1,
        max_length=MAX_SOURCE_REF_CHARS,
        validation_alias=AliasChoices("source_ref", "sourceRef"),
    )


EvidenceList = Annotated[list[EvidenceItem], Field(max_length=MAX_EVIDENCE_ITEMS)]


def _evidence(items: list[EvidenceItem] | None) -> tuple[Evidence, ...]:
    return tuple(Evidence(i.quote, i.source_ref) for i in items or ())


class WriteBody(Body):
    """Fields every knowledge write takes."""

    agent_id: str | None = Field(None, validation_alias=AliasChoices("agentId", "agent_id"))
    changed_by: str | None = Field(None, validation_alias=AliasChoices("changed_by", "changedBy"))


class EntityBody(WriteBody):
    """POST /api/knowledge/entities: get-or-create by name and type."""

    name: Name
    entity_type: EntityType = Field(
        "unknown", validation_alias=AliasChoices("type", "entity_type", "entityType")
    )
    description: str | None = Field(None, max_length=MAX_DESCRIPTION_CHARS)
    aliases: list[Name] = Field(default_factory=list, max_length=MAX_ALIASES_PER_ENTITY)
    evidence: EvidenceList | None = None


class AliasBody(WriteBody):
    alias: Name


class AspectBody(WriteBody):
    name: str = Field(min_length=1, max_length=MAX_ASPECT_CHARS)
    weight: Unit = 0.5


class ClaimBody(WriteBody):
    """POST /api/knowledge/entities/{id}/claims: under `aspect` (name) or `aspect_id`."""

    content: str = Field(
        min_length=1, max_length=MAX_CLAIM_CHARS, validation_alias=AliasChoices("content", "value")
    )
    aspect: str | None = Field(None, min_length=1, max_length=MAX_ASPECT_CHARS)
    aspect_id: str | None = Field(
        None, max_length=64, validation_alias=AliasChoices("aspect_id", "aspectId")
    )
    claim_key: str | None = Field(
        None, max_length=MAX_KEY_CHARS, validation_alias=AliasChoices("claim_key", "claimKey")
    )
    kind: str = Field("attribute", json_schema_extra={"enum": list(CLAIM_KINDS)})
    confidence: Unit = 1.0
    importance: Unit = 0.5
    evidence: EvidenceList | None = None


class LinkBody(WriteBody):
    """POST /api/knowledge/links: source -[dependency_type]-> target."""

    source_entity_id: str = Field(
        max_length=64, validation_alias=AliasChoices("source_entity_id", "sourceEntityId", "source")
    )
    target_entity_id: str = Field(
        max_length=64, validation_alias=AliasChoices("target_entity_id", "targetEntityId", "target")
    )
    dependency_type: str = Field(
        min_length=1,
        max_length=MAX_LINK_TYPE_CHARS,
        validation_alias=AliasChoices("dependency_type", "dependencyType", "type"),
    )
    strength: Unit = 0.5
    confidence: Unit = 1.0
    reason: str | None = Field(None, max_length=MAX_REASON_CHARS)
    evidence: EvidenceList | None = None


class ArchiveBody(WriteBody):
    reason: str | None = Field(None, max_length=MAX_REASON_CHARS)


class RenameBody(WriteBody):
    name: Name
    keep_alias: bool = Field(True, validation_alias=AliasChoices("keep_alias", "keepAlias"))


class ListParams(Params):
    """GET /api/knowledge/entities."""

    q: str | None = Field(
        None, max_length=MAX_QUERY_CHARS, validation_alias=AliasChoices("q", "query")
    )
    type: Annotated[str, AfterValidator(_known_type)] | None = None
    status: str = Field("active", json_schema_extra={"enum": [*ENTITY_STATUSES, "all"]})
    limit: int = Field(50, ge=1, le=MAX_LIST_LIMIT)
    offset: int = Field(0, ge=0, le=2**53)  # SQLite integers stop at 2**63
    agent_id: str | None = Field(None, validation_alias=AliasChoices("agentId", "agent_id"))


class DetailParams(AgentParams):
    """GET /api/knowledge/entities/{id}."""

    mention_limit: int = Field(
        50,
        ge=1,
        le=MAX_MENTION_LIMIT,
        validation_alias=AliasChoices("mentionLimit", "mention_limit", "mentions"),
    )


class ExpandBody(Body):
    """POST /api/knowledge/expand: Signet's `{entity, aspect, question, maxTokens}`."""

    entity: str | None = Field(
        None,
        max_length=MAX_NAME_CHARS,
        validation_alias=AliasChoices("entity", "entity_name", "entityName"),
    )
    aspect: str | None = Field(
        None,
        max_length=MAX_ASPECT_CHARS,
        validation_alias=AliasChoices("aspect", "aspect_filter", "aspectFilter"),
    )
    question: str | None = Field(None, max_length=MAX_QUESTION_CHARS)
    max_tokens: int = Field(
        DEFAULT_MAX_TOKENS,
        ge=1,
        le=MAX_TOKENS,
        validation_alias=AliasChoices("maxTokens", "max_tokens"),
    )
    agent_id: str | None = Field(None, validation_alias=AliasChoices("agentId", "agent_id"))


def _who(request: Request, body: WriteBody | None, params: AgentParams) -> tuple[str, Actor]:
    agent = body_agent(request, body, params)
    return agent, resolve_actor(request, body.changed_by if body else None)


async def _write(
    request: Request,
    body: WriteBody | None,
    params: AgentParams,
    op: Callable[[KnowledgeService], Callable[..., T]],
    *args: object,
    **kwargs: object,
) -> T:
    """Run one knowledge write off the loop as the caller's agent, recording its actor."""
    agent, actor = _who(request, body, params)
    method = op(get_service(request).knowledge)
    return await off_loop(method, agent, *args, actor=actor, **kwargs)


# --- reads ----------------------------------------------------------------------------------


@router.get("/api/knowledge/entities", operation_id="knowledge_entities")
async def knowledge_entities(
    request: Request, params: Annotated[ListParams, Query()]
) -> JSONResponse:
    """The agent's entities, pinned then most mentioned first."""
    service = get_service(request).knowledge
    page = await off_loop(
        service.list_entities,
        resolve_agent(request, params.agent_id),
        query=params.q,
        entity_type=params.type,
        status=params.status,
        limit=params.limit,
        offset=params.offset,
    )
    return JSONResponse(entity_page_json(page))


@router.get("/api/knowledge/entities/{entity_id}", operation_id="knowledge_entity")
async def knowledge_entity(
    entity_id: RowId, request: Request, params: Annotated[DetailParams, Query()]
) -> JSONResponse:
    """One entity with its aliases, aspects, claims (with history), links and mentions."""
    service = get_service(request).knowledge
    detail = await off_loop(
        service.get_entity,
        resolve_agent(request, params.agent_id),
        entity_id,
        mention_limit=params.mention_limit,
    )
    return JSONResponse(entity_detail_json(detail))


@router.get("/api/knowledge/stats", operation_id="knowledge_stats")
async def knowledge_stats(
    request: Request, params: Annotated[AgentParams, Query()]
) -> JSONResponse:
    """Counts of the agent's graph."""
    service = get_service(request).knowledge
    found = await off_loop(service.stats, resolve_agent(request, params.agent_id))
    return JSONResponse(stats_json(found))


@router.post("/api/knowledge/expand", operation_id="knowledge_expand")
async def knowledge_expand(body: ExpandBody, request: Request) -> JSONResponse:
    """One entity by name: constraints, aspects and claims, links, and the memories the graph
    reaches from it within `maxTokens` (a read: it changes nothing)."""
    expansion = get_service(request).expansion
    found = await off_loop(
        expansion.expand,
        resolve_agent(request, body.agent_id),
        body.entity,
        aspect=body.aspect,
        question=body.question,
        max_tokens=body.max_tokens,
    )
    return JSONResponse(expansion_json(found))


# --- writes ---------------------------------------------------------------------------------


@router.post(
    "/api/knowledge/entities",
    operation_id="knowledge_entity_create",
    responses={201: {"description": "created (200: the entity already existed)"}},
)
async def knowledge_entity_create(
    body: EntityBody, request: Request, params: Annotated[AgentParams, Query()]
) -> JSONResponse:
    """Get-or-create an entity (201 when created, 200 when it already existed)."""
    entity, created = await _write(
        request,
        body,
        params,
        lambda knowledge: knowledge.create_entity,
        body.name,
        entity_type=body.entity_type,
        description=body.description,
        aliases=body.aliases,
        evidence=_evidence(body.evidence),
    )
    return JSONResponse(
        {"entity": entity_json(entity), "created": created}, status_code=201 if created else 200
    )


@router.post("/api/knowledge/entities/{entity_id}/aliases", operation_id="knowledge_alias_add")
async def knowledge_alias_add(
    entity_id: RowId, body: AliasBody, request: Request, params: Annotated[AgentParams, Query()]
) -> JSONResponse:
    alias = await _write(
        request,
        body,
        params,
        lambda knowledge: knowledge.add_alias,
        entity_id,
        body.alias,
    )
    return JSONResponse({"alias": alias_json(alias)}, status_code=201)


@router.post("/api/knowledge/entities/{entity_id}/aspects", operation_id="knowledge_aspect_add")
async def knowledge_aspect_add(
    entity_id: RowId, body: AspectBody, request: Request, params: Annotated[AgentParams, Query()]
) -> JSONResponse:
    aspect = await _write(
        request,
        body,
        params,
        lambda knowledge: knowledge.create_aspect,
        entity_id,
        body.name,
        weight=body.weight,
    )
    return JSONResponse({"aspect": aspect_json(aspect)}, status_code=201)


@router.post("/api/knowledge/entities/{entity_id}/claims", operation_id="knowledge_claim_add")
async def knowledge_claim_add(
    entity_id: RowId, body: ClaimBody, request: Request, params: Annotated[AgentParams, Query()]
) -> JSONResponse:
    """Add a claim (or, with `claim_key`, set the keyed value: a new version supersedes)."""
    claim = await _write(
        request,
        body,
        params,
        lambda knowledge: knowledge.add_claim,
        entity_id,
        body.content,
        aspect=body.aspect,
        aspect_id=body.aspect_id,
        claim_key=body.claim_key,
        kind=body.kind,
        confidence=body.confidence,
        importance=body.importance,
        evidence=_evidence(body.evidence),
    )
    return JSONResponse({"attribute": claim_json(claim)}, status_code=201)


@router.post("/api/knowledge/entities/{entity_id}/archive", operation_id="knowledge_entity_archive")
async def knowledge_entity_archive(
    entity_id: RowId,
    request: Request,
    params: Annotated[AgentParams, Query()],
    body: ArchiveBody | None = None,
) -> JSONResponse:
    entity = await _write(
        request,
        body,
        params,
        lambda knowledge: knowledge.archive_entity,
        entity_id,
        reason=body.reason if body else None,
    )
    return JSONResponse({"entity": entity_json(entity)})


@router.post("/api/knowledge/entities/{entity_id}/rename", operation_id="knowledge_entity_rename")
async def knowledge_entity_rename(
    entity_id: RowId, body: RenameBody, request: Request, params: Annotated[AgentParams, Query()]
) -> JSONResponse:
    entity = await _write(
        request,
        body,
        params,
        lambda knowledge: knowledge.rename_entity,
        entity_id,
        body.name,
        keep_alias=body.keep_alias,
    )
    return JSONResponse({"entity": entity_json(entity)})


@router.post("/api/knowledge/links", operation_id="knowledge_link_create")
async def knowledge_link_create(
    body: LinkBody, request: Request, params: Annotated[AgentParams, Query()]
) -> JSONResponse:
    """Get-or-create the active link (201 when created)."""
    link, created = await _write(
        request,
        body,
        params,
        lambda knowledge: knowledge.create_link,
        body.source_entity_id,
        body.target_entity_id,
        body.dependency_type,
        strength=body.strength,
        confidence=body.confidence,
        reason=body.reason if body else None,
        evidence=_evidence(body.evidence),
    )
    return JSONResponse(
        {"dependency": dependency_json(link), "created": created},
        status_code=201 if created else 200,
    )


@router.post("/api/knowledge/links/{link_id}/archive", operation_id="knowledge_link_archive")
async def knowledge_link_archive(
    link_id: RowId,
    request: Request,
    params: Annotated[AgentParams, Query()],
    body: ArchiveBody | None = None,
) -> JSONResponse:
    link = await _write(
        request,
        body,
        params,
        lambda knowledge: knowledge.archive_link,
        link_id,
    )
    return JSONResponse({"dependency": dependency_json(link)})


@router.post("/api/knowledge/claims/{claim_id}/archive", operation_id="knowledge_claim_archive")
async def knowledge_claim_archive(
    claim_id: RowId,
    request: Request,
    params: Annotated[AgentParams, Query()],
    body: ArchiveBody | None = None,
) -> JSONResponse:
    claim = await _write(
        request,
        body,
        params,
        lambda knowledge: knowledge.archive_claim,
        claim_id,
    )
    return JSONResponse({"attribute": claim_json(claim)})
