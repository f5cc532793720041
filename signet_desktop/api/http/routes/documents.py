"""/api/documents*: submit a document for ingest, follow it, read its chunks, delete it.

`POST /api/documents {source_type: text|url|file, content|url|path, title?, content_type?,
connector_id?, metadata?}` validates everything before writing and answers 201 `{id, status:
"queued"}`, or 200 `{id, status, deduplicated: true}` when the agent already has that URL or
content. Its body may be as large as `documents.maxContentBytes` allows (the gate's per-route
limit); other routes keep 1 MiB. Ingest runs in the background (`document.progress` and
`document.finished` on `/api/events`). Everything is scoped by agent (`agentId` or
`x-signet-agent-id`); another agent's document is 404.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import AliasChoices, Field

from signet_desktop.api.document_views import (
    chunk_json,
    delete_json,
    document_json,
    ticket_json,
)
from signet_desktop.api.http.principal import principal_of
from signet_desktop.api.http.schemas import AgentParams, Body, ReasonParams, RowId
from signet_desktop.api.http.scope import (
    body_agent,
    get_service,
    header_reason,
    off_loop,
    resolve_actor,
    resolve_agent,
)
from signet_desktop.domain.documents import DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, DocumentRequest

router = APIRouter(tags=["documents"])


class DocumentBody(Body):
    """POST /api/documents (Signet's snake_case; camelCase accepted too)."""

    # A file's text as sent: the chunker drops its control characters (form feeds, NULs).
    RAW_TEXT_FIELDS = frozenset({"content"})

    source_type: str = Field(
        validation_alias=AliasChoices("source_type", "sourceType"), max_length=16
    )
    content: str | None = None
    url: str | None = Field(None, max_length=4096)
    path: str | None = Field(None, max_length=4096)
    title: str | None = Field(None, max_length=500)
    content_type: str | None = Field(
        None, validation_alias=AliasChoices("content_type", "contentType"), max_length=200
    )
    connector_id: str | None = Field(
        None, validation_alias=AliasChoices("connector_id", "connectorId"), max_length=64
    )
    project: str | None = Field(None, max_length=512)
    metadata: dict[str, Any] = Field(default_factory=dict)
    agent_id: str | None = Field(None, validation_alias=AliasChoices("agentId", "agent_id"))

    def to_request(self) -> DocumentRequest:
        return DocumentRequest(
            source_type=self.source_type,
            content=self.content,
            url=self.url,
            path=self.path,
            title=self.title,
            content_type=self.content_type,
            connector_id=self.connector_id,
            project=self.project,
            metadata=self.metadata,
        )


class ListDocumentsParams(AgentParams):
    """GET /api/documents."""

    status: str | None = Field(None, max_length=16)
    limit: int = Field(DEFAULT_LIST_LIMIT, ge=1, le=MAX_LIST_LIMIT)


class ChunkParams(AgentParams):
    """GET /api/documents/{id}/chunks."""

    limit: int = Field(1000, ge=1, le=1000)
    offset: int = Field(0, ge=0, le=2**53)


@router.post("/api/documents", operation_id="documents_submit", status_code=201)
async def documents_submit(
    body: DocumentBody, params: Annotated[AgentParams, Query()], request: Request
) -> JSONResponse:
    """Queue a document; 201 with its id, or 200 `deduplicated` for one the agent has."""
    agent_id = body_agent(request, body, params)
    ticket = await off_loop(
        get_service(request).documents.submit,
        agent_id,
        body.to_request(),
        local=principal_of(request).local,  # only the local user reads its default roots
    )
    return JSONResponse(ticket_json(ticket), status_code=200 if ticket.deduplicated else 201)


@router.get("/api/documents", operation_id="documents_list")
async def documents_list(
    request: Request, params: Annotated[ListDocumentsParams, Query()]
) -> JSONResponse:
    """The agent's documents newest first (`status` filters; `limit` 50 by default, ≤ 500)."""
    found = await off_loop(
        get_service(request).documents.list,
        resolve_agent(request, params.agent_id),
        status=params.status,
        limit=params.limit,
    )
    return JSONResponse({"documents": [document_json(d) for d in found], "count": len(found)})


@router.get("/api/documents/{document_id}", operation_id="document_get")
async def document_get(
    document_id: RowId, request: Request, params: Annotated[AgentParams, Query()]
) -> JSONResponse:
    """One document with its pipeline state, error and latest job."""
    found = await off_loop(
        get_service(request).documents.get, resolve_agent(request, params.agent_id), document_id
    )
    return JSONResponse(document_json(found, with_job=True))


@router.get("/api/documents/{document_id}/chunks", operation_id="document_chunks")
async def document_chunks(
    document_id: RowId, request: Request, params: Annotated[ChunkParams, Query()]
) -> JSONResponse:
    """The document's chunks in order: memory id, index and text."""
    found = await off_loop(
        get_service(request).documents.chunks,
        resolve_agent(request, params.agent_id),
        document_id,
        limit=params.limit,
        offset=params.offset,
    )
    return JSONResponse(
        {"documentId": document_id, "chunks": [chunk_json(c) for c in found], "count": len(found)}
    )


@router.delete("/api/documents/{document_id}", operation_id="document_delete")
async def document_delete(
    document_id: RowId, request: Request, params: Annotated[ReasonParams, Query()]
) -> JSONResponse:
    """Delete the document, soft-delete its chunk memories, cancel work in flight."""
    outcome = await off_loop(
        get_service(request).documents.delete,
        resolve_agent(request, params.agent_id),
        document_id,
        header_reason(request, params.reason),
        actor=resolve_actor(request),
    )
    return JSONResponse(delete_json(outcome))
