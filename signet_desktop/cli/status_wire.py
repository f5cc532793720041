"""The service's values read back from `/api/status` for `signet status` and `signet doctor`.

The checks in `service/diagnostics.py` judge `VecStatus` and `EmbeddingStatus`; the CLI has
them only as the JSON `api/views.py: service_status_json` wrote. These functions are that
writer's inverse, tolerant of a daemon that leaves a block out (None: it did not say).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from signet_desktop.domain.vector_search import VecStatus
from signet_desktop.embedding.tracker import Coverage
from signet_desktop.service.embeddings.service import EmbeddingStatus


def vector_from_wire(status: Mapping[str, Any]) -> VecStatus | None:
    """`vector: {available, version, error}`, or None when the daemon does not report it."""
    vector = status.get("vector")
    if not isinstance(vector, Mapping):
        return None
    return VecStatus(
        available=bool(vector.get("available")),
        version=_text(vector.get("version")),
        error=_text(vector.get("error")),
    )


def embedding_from_wire(status: Mapping[str, Any]) -> EmbeddingStatus | None:
    """`embedding: {provider, model, dimensions, coverage, vectorSearch}`, or None."""
    embedding = status.get("embedding")
    if not isinstance(embedding, Mapping):
        return None
    dimensions = embedding.get("dimensions")
    return EmbeddingStatus(
        provider=str(embedding.get("provider") or "none"),
        model=_text(embedding.get("model")),
        dimensions=dimensions if isinstance(dimensions, int) else None,
        coverage=_coverage(embedding.get("coverage")),
        vector_search=str(embedding.get("vectorSearch") or "unavailable"),
    )


def _coverage(block: object) -> Coverage | None:
    if not isinstance(block, Mapping):
        return None
    numbers = (block.get("generation"), block.get("total"), block.get("embedded"))
    if not all(isinstance(number, int) for number in numbers):
        return None
    generation, total, embedded = numbers
    assert isinstance(generation, int) and isinstance(total, int) and isinstance(embedded, int)
    return Coverage(generation, str(block.get("status") or "?"), total, embedded)


def _text(value: object) -> str | None:
    return None if value is None else str(value)
