"""umap_cache: replaceable 2-D/3-D projections, keyed by agent, model, dimensions and count.

The one writer of the table. Rows hold an opaque JSON payload; what it must contain (and when
a row is corrupt) is `projection/payload.py`'s business. A new projection for an
(agent, model, dimensions) replaces every older one, whatever its embedding count.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from signet_desktop.domain.memory import utc_now
from signet_desktop.storage.connect import Connection

SELECT_ROW = """
SELECT id, agent_id, model, dimensions, embedding_count, payload, created_at
FROM umap_cache
WHERE agent_id = :agent_id AND model = :model AND dimensions = :dimensions
  AND embedding_count = :embedding_count
"""
DELETE_KEY = """
DELETE FROM umap_cache
WHERE agent_id = :agent_id AND model = :model AND dimensions = :dimensions
"""
DELETE_ROW = "DELETE FROM umap_cache WHERE id = :id"
INSERT_ROW = """
INSERT INTO umap_cache (id, agent_id, model, dimensions, embedding_count, payload, created_at)
VALUES (:id, :agent_id, :model, :dimensions, :embedding_count, :payload, :created_at)
"""


@dataclass(frozen=True, slots=True)
class ProjectionRow:
    """One cached projection as stored (payload still JSON text)."""

    id: str
    agent_id: str
    model: str
    dimensions: int
    embedding_count: int
    payload: str
    created_at: str


def _row(r: Any) -> ProjectionRow:
    return ProjectionRow(
        id=str(r["id"]),
        agent_id=str(r["agent_id"]),
        model=str(r["model"]),
        dimensions=int(r["dimensions"]),
        embedding_count=int(r["embedding_count"]),
        payload=str(r["payload"]),
        created_at=str(r["created_at"]),
    )


def find_projection(
    conn: Connection, *, agent_id: str, model: str, dimensions: int, embedding_count: int
) -> ProjectionRow | None:
    """The cached row for exactly this key, if any."""
    row = conn.execute(
        SELECT_ROW,
        {
            "agent_id": agent_id,
            "model": model,
            "dimensions": dimensions,
            "embedding_count": embedding_count,
        },
    ).fetchone()
    return _row(row) if row else None


def store_projection(
    conn: Connection,
    *,
    agent_id: str,
    model: str,
    dimensions: int,
    embedding_count: int,
    payload: str,
) -> ProjectionRow:
    """Replace the (agent, model, dimensions) projection; call inside a write transaction."""
    key = {"agent_id": agent_id, "model": model, "dimensions": dimensions}
    conn.execute(DELETE_KEY, key)
    row = ProjectionRow(
        id=str(uuid.uuid4()),
        agent_id=agent_id,
        model=model,
        dimensions=dimensions,
        embedding_count=embedding_count,
        payload=payload,
        created_at=utc_now(),
    )
    conn.execute(
        INSERT_ROW,
        {
            **key,
            "id": row.id,
            "embedding_count": embedding_count,
            "payload": payload,
            "created_at": row.created_at,
        },
    )
    return row


def delete_projection(conn: Connection, row_id: str) -> bool:
    """Drop one row (a corrupt one); call inside a write transaction."""
    return conn.execute(DELETE_ROW, {"id": row_id}).rowcount > 0
