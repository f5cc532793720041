"""GET /api/embeddings/projection: Signet's UMAP map of the agent's embeddings.

200 with `status: "ready"` (nodes, KNN edges) when the cached projection fits today's
vectors; otherwise a background run starts and the route answers 202 with
`status: "computing"` and its progress until the run has cached its result. Zero to two
vectors need no run and are ready at once.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from pydantic import Field

from signet_desktop.api.http.rendering import encode_json
from signet_desktop.api.http.schemas import AgentParams
from signet_desktop.api.http.scope import get_service, off_loop, resolve_agent
from signet_desktop.api.views import projection_json

router = APIRouter(tags=["embeddings"])

COMPUTING: dict[int | str, dict[str, Any]] = {
    202: {
        "description": "computing: a UMAP run is under way; `progress` says how far",
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "properties": {
                        "status": {"const": "computing"},
                        "dimensions": {"type": "integer"},
                        "total": {"type": "integer"},
                        "message": {"type": "string"},
                        "progress": {"type": "object"},
                    },
                    "required": ["status", "dimensions"],
                }
            }
        },
    }
}


class ProjectionParams(AgentParams):
    """Query of GET /api/embeddings/projection."""

    dimensions: int = Field(2, ge=2, le=3, description="2 or 3 components")


@router.get("/api/embeddings/projection", operation_id="embeddings_projection", responses=COMPUTING)
async def embeddings_projection(
    params: Annotated[ProjectionParams, Query()], request: Request
) -> Response:
    """The cached UMAP projection (200), or 202 while it is computed in the background."""
    agent_id = resolve_agent(request, params.agent_id)
    answer = await off_loop(get_service(request).projection.projection, agent_id, params.dimensions)
    body = await off_loop(encode_json, lambda: projection_json(answer))  # 100k nodes: megabytes
    status = 202 if answer.status == "computing" else 200
    return Response(body, status_code=status, media_type="application/json")
