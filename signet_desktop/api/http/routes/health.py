"""/health, /health/live and /health/ready: answered without a token, cheap, never cached;
and /api/features, Signet's feature flags (agent.yaml `features:` as written)."""

from __future__ import annotations

import os
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from signet_desktop.api.http.scope import get_service, off_loop
from signet_desktop.api.http.settings import HttpSettings

router = APIRouter(tags=["health"])


def _settings(request: Request) -> HttpSettings:
    settings: HttpSettings = request.app.state.settings
    return settings


@router.get("/health", operation_id="health")
async def health(request: Request) -> JSONResponse:
    """Signet's health document. Paths and pid are shown only to authenticated callers."""
    settings = _settings(request)
    db_ok = await off_loop(get_service(request).ping)
    body: dict[str, Any] = {
        "status": "healthy" if db_ok else "degraded",  # Signet's clients expect `healthy`
        "uptime": round(settings.uptime_seconds, 3),
        "version": settings.version,
        "port": settings.port,
        "db": db_ok,
        "shuttingDown": bool(request.app.state.shutting_down),
    }
    if request.state.authenticated:
        body["pid"] = os.getpid()
        body["agentsDir"] = settings.agents_dir
    return JSONResponse(body)


@router.get("/health/live", operation_id="health_live")
async def live() -> JSONResponse:
    """The process is up and its event loop answers."""
    return JSONResponse({"status": "ok"})


@router.get("/health/ready", operation_id="health_ready")
async def ready(request: Request) -> JSONResponse:
    """Ready for traffic: the database answers and no shutdown is under way."""
    if request.app.state.shutting_down:
        return JSONResponse({"status": "unavailable", "error": "shutting down"}, status_code=503)
    if not await off_loop(get_service(request).ping):
        return JSONResponse(
            {"status": "unavailable", "error": "database unavailable"}, status_code=503
        )
    return JSONResponse({"status": "ready"})


@router.get("/api/features", operation_id="features")
async def features(request: Request) -> JSONResponse:
    """agent.yaml's `features:` booleans, as Signet serves them (`{}` when there are none)."""
    return JSONResponse(dict(_settings(request).features))
