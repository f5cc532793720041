"""/api/status: the service's facts plus what the runtime posted on the StatusBoard."""

from __future__ import annotations

import os

from fastapi import APIRouter, Request
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse

from signet_desktop.api.http.scope import get_service, off_loop
from signet_desktop.api.http.settings import HttpSettings
from signet_desktop.api.views import service_status_json

router = APIRouter(tags=["status"])


@router.get("/api/status", operation_id="status")
async def status(request: Request) -> JSONResponse:
    """Database, vector index and worker facts, and how this server is bound."""
    settings: HttpSettings = request.app.state.settings
    facts = service_status_json(await off_loop(get_service(request).status))
    body = {
        "status": "ok",
        "version": settings.version,
        "pid": os.getpid(),
        "uptime": round(settings.uptime_seconds, 3),
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
