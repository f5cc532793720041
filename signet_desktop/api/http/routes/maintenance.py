"""/api/maintenance: the retention sweep's schedule, its recorded runs, and a run on request.

`GET /api/maintenance?limit=` answers the `maintenance` block of /api/status plus the newest
recorded runs; `POST /api/maintenance/run` (and Signet's `POST /api/repair/retention-sweep`)
runs the sweep now and answers its record (409 `maintenance_running` while one runs). The
sweep is process-wide: it purges every agent's expired tombstones.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import Field

from signet_desktop.api.http.schemas import Params
from signet_desktop.api.http.scope import get_service, off_loop
from signet_desktop.service.retention import run_fact

router = APIRouter(tags=["maintenance"])


class RunsParams(Params):
    """GET /api/maintenance."""

    limit: int = Field(20, ge=1, le=100)


@router.get("/api/maintenance", operation_id="maintenance_status")
async def maintenance_status(
    request: Request, params: Annotated[RunsParams, Query()]
) -> JSONResponse:
    """Interval, retention windows, the next run, and the newest runs."""
    retention = get_service(request).retention
    runs = await off_loop(retention.recent, params.limit)
    return JSONResponse({**retention.status_fact(), "runs": [run_fact(r) for r in runs]})


@router.post("/api/maintenance/run", operation_id="maintenance_run")
@router.post("/api/repair/retention-sweep", operation_id="retention_sweep")
async def maintenance_run(request: Request) -> JSONResponse:
    """Run the sweep now; its record with what each step removed."""
    report = await off_loop(get_service(request).retention.run, "manual")
    return JSONResponse(run_fact(report.run, more=report.more))
