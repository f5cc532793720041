"""What the map is drawn from: one agent's live memories with a current vector, and their facts.

Read-only queries over `embeddings` (owned by `embedding/vectors.py`) and `memories` (owned by
`storage/memories.py`). "Has a current vector" is the owner's predicate, imported, not
restated; the join only picks that vector's blob.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from signet_desktop.embedding.generations import Generation
from signet_desktop.embedding.vectors import (
    HAS_CURRENT_VECTOR,
    blob_matrix,
    sent_vector_twin,
    stored_vector,
)
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres

PREVIEW_CHARS = 500  # Signet's guardrails.recallTruncateChars
MAX_POINTS = 200_000  # far past what a workspace holds today; bounds one read's memory

POINT_COLUMNS = """m.id, m.agent_id, m.type, m.tags, m.who, m.importance, m.pinned,
       substr(m.content, 1, :preview) AS preview, m.created_at, m.source_type, m.source_id"""
SELECT_POINTS = f"""
SELECT {POINT_COLUMNS}, e.vector AS vector
FROM memories m
JOIN embeddings e ON e.generation_id = :generation_id AND e.source_type = 'memory'
                 AND e.source_id = m.id
WHERE m.agent_id = :agent_id AND m.is_deleted = 0 AND {HAS_CURRENT_VECTOR}
ORDER BY e.id
LIMIT :limit
"""
SELECT_POINTS_PG = sent_vector_twin(SELECT_POINTS)


@dataclass(frozen=True, slots=True)
class MapPoint:
    """One memory on the map: what colouring, hover and the selection list need."""

    id: str
    agent_id: str
    type: str
    tags: tuple[str, ...]
    who: str | None
    importance: float
    pinned: bool
    preview: str
    created_at: str
    source_type: str | None
    source_id: str | None


@dataclass(frozen=True, slots=True)
class VectorSet:
    """The points of one agent in one generation, and their vectors row for row."""

    generation: Generation | None
    points: tuple[MapPoint, ...]
    matrix: npt.NDArray[np.float32]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(point.id for point in self.points)

    def __len__(self) -> int:
        return len(self.points)


def _tags(raw: object) -> tuple[str, ...]:
    """Tags are a JSON array in this schema; anything else reads as no tags."""
    if not isinstance(raw, str) or not raw:
        return ()
    try:
        values = json.loads(raw)
    except ValueError:
        return ()
    return tuple(str(v) for v in values if str(v).strip()) if isinstance(values, list) else ()


def empty_set(generation: Generation | None, dimensions: int = 0) -> VectorSet:
    """No points (no generation yet, or nothing embedded)."""
    return VectorSet(generation, (), np.zeros((0, dimensions), dtype=np.float32))


def load_vectors(
    conn: Connection, generation: Generation | None, agent_id: str, *, limit: int = MAX_POINTS
) -> VectorSet:
    """The agent's live memories with a current vector in `generation`, oldest vector first."""
    if generation is None:
        return empty_set(None)
    postgres = is_postgres(conn)
    rows = conn.execute(
        SELECT_POINTS_PG if postgres else SELECT_POINTS,
        {
            "generation_id": generation.id,
            "agent_id": agent_id,
            "preview": PREVIEW_CHARS,
            "limit": limit,
        },
    ).fetchall()
    points = tuple(
        MapPoint(
            id=str(r["id"]),
            agent_id=str(r["agent_id"]),
            type=str(r["type"] or "fact"),
            tags=_tags(r["tags"]),
            who=r["who"],
            importance=float(r["importance"] if r["importance"] is not None else 0.5),
            pinned=bool(r["pinned"]),
            preview=str(r["preview"] or ""),
            created_at=str(r["created_at"]),
            source_type=r["source_type"],
            source_id=r["source_id"],
        )
        for r in rows
    )
    if rows and postgres:  # pgvector's binary form: ~1 µs a vector (the text took ~80)
        matrix = np.stack([stored_vector(r["vector"], sent=True) for r in rows])
    else:
        matrix = blob_matrix([bytes(r["vector"]) for r in rows], generation.dimensions)
    return VectorSet(generation, points, matrix)
