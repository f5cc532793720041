"""The embedding provider interface, its errors, and the vector checks every provider shares."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


class EmbeddingError(Exception):
    """An embedding could not be produced (bad response, rejected request, invalid vector)."""


class EmbeddingUnavailable(EmbeddingError):
    """The embedder is down or too slow: retries and timeouts were exhausted."""


class EmbeddingDimensionMismatch(EmbeddingError):
    """The embedder returned vectors of another width than the configured dimensions."""


@runtime_checkable
class EmbeddingProvider(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed width.

    `embed(texts)` returns shape (len(texts), dimensions), every row finite with unit norm.
    An empty sequence returns a (0, dimensions) array without calling the backend; an empty or
    whitespace-only text is embedded like any other text. Implementations call
    `storage.guard.assert_provider_call_allowed` first, so they refuse to run inside a
    SQLite write transaction.
    """

    @property
    def name(self) -> str:
        """Provider name as configured ("native", "ollama", "openai", "llama-cpp", "hash")."""
        ...

    @property
    def model(self) -> str:
        """Model identifier; together with `dimensions` it names an embedding generation."""
        ...

    @property
    def dimensions(self) -> int:
        """Width of every vector this provider returns."""
        ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed `texts` in order; raise an `EmbeddingError` subclass on any failure."""
        ...


def check_texts(texts: Sequence[str]) -> list[str]:
    """Return `texts` as a list, refusing a bare string or non-string items (caller bugs)."""
    if isinstance(texts, str | bytes):
        raise TypeError("embed() takes a sequence of texts, not a single string")
    out = list(texts)
    for i, text in enumerate(out):
        if not isinstance(text, str):
            raise TypeError(f"text {i} is {type(text).__name__}, expected str")
    return out


def empty_vectors(dimensions: int) -> Vectors:
    """The (0, dimensions) result for an empty input sequence."""
    return np.zeros((0, dimensions), dtype=np.float32)


def validate_vectors(
    raw: object,
    expected_dims: int,
    provider: str,
    *,
    expected_rows: int | None = None,
) -> Vectors:
    """Check raw vectors from `provider` and return them as unit-norm float32 rows.

    Rejects (raising, never returning a partial result) a wrong row count, empty vectors,
    ragged or non-numeric rows, a width other than `expected_dims`
    (`EmbeddingDimensionMismatch`), non-finite values and zero vectors.
    """
    rows = _as_rows(raw, provider)
    if expected_rows is not None and len(rows) != expected_rows:
        raise EmbeddingError(f"{provider}: expected {expected_rows} vectors, got {len(rows)}")
    for i, row in enumerate(rows):
        if len(row) == 0:
            raise EmbeddingError(f"{provider}: vector {i} is empty")
        if len(row) != expected_dims:
            raise EmbeddingDimensionMismatch(
                f"{provider}: vector {i} has {len(row)} dimensions, expected {expected_dims}"
            )
    try:
        matrix = np.asarray(rows, dtype=np.float64).reshape(len(rows), expected_dims)
    except (TypeError, ValueError) as exc:
        raise EmbeddingError(f"{provider}: vectors are not numeric") from exc
    bad = ~np.isfinite(matrix).all(axis=1)
    if bad.any():
        raise EmbeddingError(
            f"{provider}: vector {int(np.argmax(bad))} contains NaN, infinite or null values"
        )
    norms = np.linalg.norm(matrix, axis=1)
    if (norms == 0.0).any():
        raise EmbeddingError(f"{provider}: vector {int(np.argmax(norms == 0.0))} is all zeros")
    normalised = (matrix / norms[:, None]).astype(np.float32)
    return np.ascontiguousarray(normalised)


def _as_rows(raw: object, provider: str) -> Sequence[Sequence[object]]:
    """View `raw` (ndarray or list of lists) as a sequence of rows without copying twice."""
    if isinstance(raw, np.ndarray):
        if raw.ndim != 2:
            raise EmbeddingError(f"{provider}: expected a 2-D array of vectors, got {raw.ndim}-D")
        return list(raw)
    if not isinstance(raw, list | tuple):
        raise EmbeddingError(f"{provider}: expected a list of vectors, got {type(raw).__name__}")
    for i, row in enumerate(raw):
        if not isinstance(row, list | tuple | np.ndarray):
            raise EmbeddingError(f"{provider}: vector {i} is {type(row).__name__}, not a list")
    return raw
