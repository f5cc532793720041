"""/api/embeddings/status, /api/embeddings/backfill, /api/repair/resync-vec and friends.

The HTTP side of `signet embed audit`, `signet embed backfill` and `signet repair resync-vec`;
Signet's own CLI reaches the same audit and backfill through `/api/repair/embedding-gaps` and
`/api/repair/re-embed`.
Resync only rebuilds the derived vec0 mirror from canonical vectors, so it applies unless
`dryRun: true`; backfill embeds at most `limit` memories per call (the CLI loops).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Request
from fastapi import Body as BodyParam
from fastapi.responses import JSONResponse
from pydantic import AliasChoices, Field

from signet_desktop.api.http.schemas import Body, StrictBody
from signet_desktop.api.http.scope import get_service, off_loop
from signet_desktop.api.views import (
    backfill_json,
    embedding_audit_json,
    embedding_gaps_json,
    re_embed_json,
    resync_json,
)
from signet_desktop.service.embeddings.service import DEFAULT_BACKFILL, MAX_BACKFILL

router = APIRouter(tags=["embeddings"])

MAX_GENERATION = 2**62  # generation ids are SQLite integers (signed 64-bit)


class BackfillBody(StrictBody):
    """POST /api/embeddings/backfill."""

    limit: int = Field(DEFAULT_BACKFILL, ge=1, le=MAX_BACKFILL)
    dry_run: bool = Field(False, validation_alias=AliasChoices("dryRun", "dry_run"))


class ResyncBody(StrictBody):
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


# -- Signet's repair routes (`signet embed audit|backfill` of Signet's own CLI) -------------

DEFAULT_RE_EMBED_BATCH = 50  # Signet's default batchSize


class ReEmbedBody(Body):
    """POST /api/repair/re-embed."""

    batch_size: int = Field(
        DEFAULT_RE_EMBED_BATCH,
        ge=1,
        le=MAX_BACKFILL,
        validation_alias=AliasChoices("batchSize", "batch_size"),
    )
    dry_run: bool = Field(False, validation_alias=AliasChoices("dryRun", "dry_run"))


@router.get("/api/repair/embedding-gaps", operation_id="repair_embedding_gaps")
async def repair_embedding_gaps(request: Request) -> JSONResponse:
    """How many live memories lack a current vector (fresh, not the cached status figure)."""
    audit = await off_loop(get_service(request).embeddings.audit)
    return JSONResponse(embedding_gaps_json(audit))


@router.post("/api/repair/re-embed", operation_id="repair_re_embed")
async def repair_re_embed(
    request: Request, body: Annotated[ReEmbedBody | None, BodyParam()] = None
) -> JSONResponse:
    """Embed up to `batchSize` memories that lack a vector; `dryRun` only counts them."""
    options = body or ReEmbedBody.model_validate({})
    outcome = await off_loop(
        get_service(request).embeddings.backfill,
        limit=options.batch_size,
        dry_run=options.dry_run,
    )
    return JSONResponse(re_embed_json(outcome, options.batch_size))
