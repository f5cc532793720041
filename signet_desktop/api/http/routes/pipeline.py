"""/api/pipeline/status, /api/pipeline/pause and /api/pipeline/resume, in Signet's shapes.

`status` lists the hosted workers and the queue's job counts per state (`queues.memory` is the
whole `memory_jobs` table, as Signet names it; `jobTypes` splits it by job type); `mode` is
`controlled-write`, or `paused` while the workers are paused. Pause and resume act on the
daemon's worker host and answer with the new status.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from signet_desktop.api.http.scope import get_service, off_loop
from signet_desktop.api.views import pipeline_status_json

router = APIRouter(tags=["pipeline"])


@router.get("/api/pipeline/status", operation_id="pipeline_status")
async def pipeline_status(request: Request) -> JSONResponse:
    """Workers, queue counts per state and the pipeline mode."""
    status = await off_loop(get_service(request).pipeline.status)
    return JSONResponse(pipeline_status_json(status))


@router.post("/api/pipeline/pause", operation_id="pipeline_pause")
async def pipeline_pause(request: Request) -> JSONResponse:
    """Stop taking jobs (running ones finish; leased, unstarted ones go back to pending)."""
    status = await off_loop(get_service(request).pipeline.pause)
    return JSONResponse(pipeline_status_json(status))


@router.post("/api/pipeline/resume", operation_id="pipeline_resume")
async def pipeline_resume(request: Request) -> JSONResponse:
    """Take jobs again."""
    status = await off_loop(get_service(request).pipeline.resume)
    return JSONResponse(pipeline_status_json(status))
