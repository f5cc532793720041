"""/api/status: the service's facts plus what the runtime posted on the StatusBoard."""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Request
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse

from signet_desktop.api.http.scope import get_service, off_loop
from signet_desktop.api.http.settings import HttpSettings
from signet_desktop.api.views import (
    health_json,
    pipeline_flags_json,
    service_status_json,
)
from signet_desktop.service.facade import ServiceStatus, SignetService
from signet_desktop.service.health import health_of
from signet_desktop.service.pipeline.service import PipelineStatus

router = APIRouter(tags=["status"])


@router.get("/api/status", operation_id="status")
async def status(request: Request) -> JSONResponse:
    """Database, vector index and worker facts, how this server is bound, and Signet's
    `startedAt`, `memoryDb`, `pipelineV2` and composite `health{score, status}`."""
    settings: HttpSettings = request.app.state.settings
    service = get_service(request)
    db_ok, service_status, pipeline = await off_loop(_facts, service)
    facts = service_status_json(service_status)
    body = {
        "status": "running",
        "version": settings.version,
        "pid": os.getpid(),
        "uptime": round(settings.uptime_seconds, 3),
        "startedAt": _started_at(service_status.process, settings),
        "memoryDb": db_ok,
        "pipelineV2": pipeline_flags_json(pipeline),
        "health": health_json(health_of(service_status, db_ok)),
        "host": settings.host,
        "port": settings.port,
        "agentsDir": settings.agents_dir,
        "shuttingDown": bool(request.app.state.shutting_down),
        "auth": {
            "tokenRequired": settings.auth_token is not None,
            "trustLoopbackClients": settings.trust_loopback_clients,
        },
        **facts,
    }
    return JSONResponse(jsonable_encoder(body))


def _facts(service: SignetService) -> tuple[bool, ServiceStatus, PipelineStatus]:
    """Everything /api/status reads, in one trip to the thread pool."""
    return service.ping(), service.status(), service.pipeline.status()


def _started_at(process: Mapping[str, Any], settings: HttpSettings) -> str:
    """When the daemon started: the runtime's own record, else when this app was built."""
    runtime = process.get("runtime")
    if isinstance(runtime, Mapping) and runtime.get("startedAt"):
        return str(runtime["startedAt"])
    moment = datetime.fromtimestamp(settings.started_at, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
