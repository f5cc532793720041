"""/api/inference/status: which workloads have a model configured, and why not (no secrets)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from signet_desktop.api.http.scope import get_service, off_loop
from signet_desktop.api.views import camel

router = APIRouter(tags=["inference"])


@router.get("/api/inference/status", operation_id="inferenceStatus")
async def inference_status(request: Request) -> JSONResponse:
    """`{enabled, workloads: [{workload, configKey, configured, provider, model, host, target,
    policy, local, priced, reason}]}`; the same for every agent (inference is process-wide)."""
    status = await off_loop(get_service(request).inference.status)
    workloads = [
        {camel(key): value for key, value in workload.items()} for workload in status["workloads"]
    ]
    return JSONResponse({"enabled": status["enabled"], "workloads": workloads})
