"""pgvector's text form of a float32 blob: one writer for the daemon's vector writes, the
query vector of a PostgreSQL vector search and `signet storage migrate`."""

from __future__ import annotations

from functools import lru_cache

import numpy as np


def pg_vector_text(blob: bytes) -> str:
    """A float32 little-endian blob as `[x1,x2,...]`: each value to 9 significant digits,
    which every float32 parses back from exactly (one C formatting call: ~60 µs for 384
    values, against ~180 µs for numpy's shortest repr of each)."""
    values = np.frombuffer(bytes(blob), dtype="<f4")
    return _vector_format(len(values)) % tuple(values.tolist())


@lru_cache(maxsize=8)
def _vector_format(dimensions: int) -> str:
    return "[" + ",".join(["%.9g"] * dimensions) + "]"
