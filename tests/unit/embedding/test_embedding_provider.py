"""validate_vectors and input checks shared by every provider."""

from __future__ import annotations

import numpy as np
import pytest

from signet_desktop.embedding.provider import (
    EmbeddingDimensionMismatch,
    EmbeddingError,
    EmbeddingUnavailable,
    check_texts,
    validate_vectors,
)


def test_normalises_lists_and_arrays_to_float32_rows() -> None:
    out = validate_vectors([[3.0, 4.0], [0.0, 2.0]], 2, "p")
    assert out.dtype == np.float32 and out.flags.c_contiguous
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 1.0]], atol=1e-7)
    arr = validate_vectors(np.array([[1.0, 1.0]], dtype=np.float64), 2, "p")
    np.testing.assert_allclose(np.linalg.norm(arr, axis=1), 1.0, atol=1e-6)


@pytest.mark.parametrize(
    ("raw", "error", "match"),
    [
        ([[1.0, 2.0, 3.0]], EmbeddingDimensionMismatch, "3 dimensions, expected 2"),
        ([[1.0, 2.0], [1.0]], EmbeddingDimensionMismatch, "vector 1 has 1 dimensions"),
        ([[]], EmbeddingError, "vector 0 is empty"),
        ([[1.0, float("nan")]], EmbeddingError, "NaN"),
        ([[1.0, 0.0], [float("inf"), 1.0]], EmbeddingError, "vector 1 contains NaN, infinite"),
        ([[0.0, 0.0]], EmbeddingError, "all zeros"),
        ([[1.0, None]], EmbeddingError, "null"),
        ([[1.0, "x"]], EmbeddingError, "not numeric"),
        ({"embedding": [1.0, 2.0]}, EmbeddingError, "expected a list of vectors"),
        ([1.0, 2.0], EmbeddingError, "vector 0 is float"),
        (np.ones(2), EmbeddingError, "2-D"),
    ],
)
def test_rejects_bad_vectors(raw: object, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        validate_vectors(raw, 2, "p")


def test_rejects_wrong_row_count() -> None:
    with pytest.raises(EmbeddingError, match="expected 2 vectors, got 1"):
        validate_vectors([[1.0, 0.0]], 2, "p", expected_rows=2)


def test_error_hierarchy() -> None:
    assert issubclass(EmbeddingUnavailable, EmbeddingError)
    assert issubclass(EmbeddingDimensionMismatch, EmbeddingError)
    assert not issubclass(EmbeddingDimensionMismatch, EmbeddingUnavailable)


def test_check_texts() -> None:
    assert check_texts(("a", "")) == ["a", ""]
    with pytest.raises(TypeError, match="single string"):
        check_texts("abc")
    with pytest.raises(TypeError, match="text 1 is int"):
        check_texts(["a", 3])  # type: ignore[list-item]
