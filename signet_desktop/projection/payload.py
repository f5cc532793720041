"""The JSON a cached projection is stored as, and the checks that make a row trustworthy.

A row is only used when its payload decodes to exactly `embedding_count` distinct ids, each
with `dimensions` finite coordinates, and edges that index those points. Anything else (cut
JSON, a hand-edited row, an older format) is corrupt: the caller deletes it and recomputes.
Coordinates only: what a point shows (type, tags, text) is read fresh from the memories.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

FORMAT_VERSION = 1
COORD_DIGITS = 3


@dataclass(frozen=True, slots=True)
class CachedLayout:
    """A decoded, checked projection."""

    method: str
    dimensions: int
    ids: tuple[str, ...]
    coords: npt.NDArray[np.float64]
    edges: tuple[tuple[int, int], ...]


def encode(
    *,
    method: str,
    ids: Sequence[str],
    coords: npt.NDArray[np.floating],
    edges: Sequence[tuple[int, int]] = (),
    params: dict[str, Any] | None = None,
) -> str:
    """The payload text for a projection of `ids` (row i of `coords` is `ids[i]`)."""
    if coords.shape[0] != len(ids):
        raise ValueError(f"{coords.shape[0]} coordinate rows for {len(ids)} ids")
    body = {
        "version": FORMAT_VERSION,
        "method": method,
        "dimensions": int(coords.shape[1]),
        "ids": list(ids),
        "coords": np.round(np.asarray(coords, dtype=np.float64), COORD_DIGITS).tolist(),
        "edges": [[int(a), int(b)] for a, b in edges],
        "params": params or {},
    }
    return json.dumps(body, separators=(",", ":"), allow_nan=False)


def decode(text: str, *, embedding_count: int, dimensions: int) -> CachedLayout | None:
    """The layout in `text`, or None when the payload is corrupt or does not fit its key."""
    try:
        body = json.loads(text)
    except ValueError:
        return None
    if not isinstance(body, dict) or body.get("version") != FORMAT_VERSION:
        return None
    ids, coords, edges = body.get("ids"), body.get("coords"), body.get("edges", [])
    if not isinstance(ids, list) or not _ids_ok(ids, embedding_count):
        return None
    matrix = _coords(coords, embedding_count, dimensions)
    checked_edges = _edges(edges, embedding_count)
    if matrix is None or checked_edges is None:
        return None
    return CachedLayout(
        str(body.get("method", "umap")), dimensions, tuple(map(str, ids)), matrix, checked_edges
    )


def _number(value: object) -> bool:
    return type(value) in (int, float) and math.isfinite(value)  # type: ignore[arg-type]


def _ids_ok(ids: list[object], count: int) -> bool:
    return (
        len(ids) == count and all(isinstance(i, str) and i for i in ids) and len(set(ids)) == count
    )


def _coords(raw: object, count: int, dimensions: int) -> npt.NDArray[np.float64] | None:
    if not isinstance(raw, list) or len(raw) != count:
        return None
    for row in raw:
        if not isinstance(row, list) or len(row) != dimensions:
            return None
        if not all(_number(v) for v in row):
            return None
    return np.asarray(raw, dtype=np.float64).reshape(count, dimensions)


def _edges(raw: object, count: int) -> tuple[tuple[int, int], ...] | None:
    if not isinstance(raw, list):
        return None
    out: list[tuple[int, int]] = []
    for edge in raw:
        if not isinstance(edge, list) or len(edge) != 2:
            return None
        a, b = edge
        if not (type(a) is int and type(b) is int and 0 <= a < count and 0 <= b < count):
            return None
        out.append((a, b))
    return tuple(out)
