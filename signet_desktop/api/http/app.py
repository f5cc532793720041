"""The FastAPI application: routes, error handlers and the request gate over one facade."""

from __future__ import annotations

import dataclasses

from fastapi import Depends, FastAPI

from signet_desktop.api.http.control_params import refuse_control_parameters
from signet_desktop.api.http.errors import ErrorBoundary, install_error_handlers
from signet_desktop.api.http.openapi import error_responses, install_openapi
from signet_desktop.api.http.permissions import require_route_permission
from signet_desktop.api.http.redaction import ReplyRedaction
from signet_desktop.api.http.routes import (
    artifacts,
    connectors,
    documents,
    dream,
    embeddings,
    events,
    feedback,
    health,
    hooks,
    inference,
    knowledge,
    maintenance,
    memories,
    memory,
    memory_md,
    ontology,
    pipeline,
    projection,
    queue,
    safety,
    secrets,
    sources,
    status,
    telemetry,
    tokens,
)
from signet_desktop.api.http.security import RequestGate
from signet_desktop.api.http.settings import HttpSettings, check_bind
from signet_desktop.api.mcp.mount import mount_dream_tools, mount_mcp
from signet_desktop.service.facade import SignetService

__all__ = ["HttpSettings", "create_app"]

DOCUMENTS_PATH = "/api/documents"


def create_app(service: SignetService, settings: HttpSettings) -> FastAPI:
    """The HTTP API over `service`. Refuses a non-loopback bind without a token.

    `app.state.shutting_down` is the runtime's to set; /health and /health/ready report it.
    Interactive docs are off; the schema stays at /openapi.json for contract tests.
    """
    check_bind(settings)
    # Documents arrive whole: their route takes up to the configured document size.
    limits = {DOCUMENTS_PATH: service.documents.max_request_bytes, **settings.route_body_bytes}
    settings = dataclasses.replace(settings, route_body_bytes=limits)
    app = FastAPI(
        title="Signet Desktop",
        version=settings.version,
        docs_url=None,
        redoc_url=None,
        openapi_url="/openapi.json",
        # Signet's clients may omit Content-Type; their bodies are still JSON.
        strict_content_type=False,
        # Path and query parameters with a control character are a 422 on every route.
        dependencies=[Depends(refuse_control_parameters)],
    )
    app.state.service = service
    app.state.settings = settings
    app.state.shutting_down = False
    install_error_handlers(app)
    routers = (
        status, memory, memories, embeddings, projection, pipeline, events, hooks, safety,
        sources, artifacts, memory_md, queue, documents, connectors, maintenance, telemetry,
        knowledge, feedback,
        ontology,
        dream, inference, tokens, secrets,
    )  # fmt: skip
    # Every route but the public health probes checks its permission first (permissions.py).
    # The common error statuses are declared on the probes alone (so FastAPI generates the
    # ErrorBody schema) and added to every other operation by install_openapi.
    app.include_router(health.router, responses=error_responses())
    for module in routers:
        app.include_router(module.router, dependencies=[Depends(require_route_permission)])
    mount_mcp(app, service, settings.version)  # Streamable HTTP at /mcp, behind the same gate
    # A harness pass's tools at /mcp/dream, for the holder of a live pass's secret only.
    mount_dream_tools(app, service.dreaming.tool_sessions, settings.version)
    install_openapi(app)
    # Added last = outermost: the gate runs first and tags even the boundary's 500s.
    app.add_middleware(ReplyRedaction)  # innermost: it reads the principal the gate names
    app.add_middleware(ErrorBoundary)
    app.add_middleware(RequestGate, settings=settings, tokens=service.tokens)
    return app
