"""/api/embeddings/status, /api/embeddings/backfill and /api/repair/resync-vec.

The HTTP side of `signet embed audit`, `signet embed backfill` and `signet repair resync-vec`.
Resync only rebuilds the derived vec0 mirror from canonical vectors, so it applies unless
`dryRun: true`; backfill embeds at most `limit` memories per call (the CLI loops).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Request
from fastapi import Body as BodyParam
from fastapi.responses import JSONResponse
from pydantic import AliasChoices, Field

from signet_desktop.api.http.schemas import Body
from signet_desktop.api.http.scope import get_service, off_loop
from signet_desktop.api.views import backfill_json, embedding_audit_json, resync_json
from signet_desktop.service.embeddings import DEFAULT_BACKFILL, MAX_BACKFILL

router = APIRouter(tags=["embeddings"])

MAX_GENERATION = 2**62  # generation ids are SQLite integers (signed 64-bit)


class BackfillBody(Body):
    """POST /api/embeddings/backfill."""

    limit: int = Field(DEFAULT_BACKFILL, ge=1, le=MAX_BACKFILL)
    dry_run: bool = Field(False, validation_alias=AliasChoices("dryRun", "dry_run"))


class ResyncBody(Body):
    """POST /api/repair/resync-vec."""

    generation: int | None = Field(None, ge=1, le=MAX_GENERATION)
    full: bool = False
    dry_run: bool = Field(False, validation_alias=AliasChoices("dryRun", "dry_run"))


@router.get("/api/embeddings/status", operation_id="embeddings_status")
async def embeddings_status(request: Request) -> JSONResponse:
    """Generations, coverage of live memories, vec0 mirror health and queued backfills."""
    audit = await off_loop(get_service(request).embeddings.audit)
    return JSONResponse(embedding_audit_json(audit))


@router.post("/api/embeddings/backfill", operation_id="embeddings_backfill")
async def embeddings_backfill(
    request: Request, body: Annotated[BackfillBody | None, BodyParam()] = None
) -> JSONResponse:
    """Embed up to `limit` memories that lack a current vector (503 when the embedder is down)."""
    options = body or BackfillBody.model_validate({})
    outcome = await off_loop(
        get_service(request).embeddings.backfill, limit=options.limit, dry_run=options.dry_run
    )
    return JSONResponse(backfill_json(outcome))


@router.post("/api/repair/resync-vec", operation_id="repair_resync_vec")
async def repair_resync_vec(
    request: Request, body: Annotated[ResyncBody | None, BodyParam()] = None
) -> JSONResponse:
    """Rebuild the vec0 mirror from canonical vectors (503 when sqlite-vec is not loaded)."""
    options = body or ResyncBody.model_validate({})
    report = await off_loop(
        get_service(request).embeddings.resync,
        generation=options.generation,
        full=options.full,
        dry_run=options.dry_run,
    )
    return JSONResponse(resync_json(report))
