"""`screen.py`: the per-row bound really bounds the int8 screen's error."""

from __future__ import annotations

import numpy as np
import pytest

from signet_desktop.recall.screen import CODE_MAX, code_rows


@pytest.mark.parametrize("seed", range(5))
def test_the_bound_holds_for_every_row(seed: int) -> None:
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((2000, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors[:50] *= rng.uniform(0.5, 1.5, (50, 1)).astype(np.float32)  # not only unit rows
    coded = code_rows(vectors)
    query = rng.standard_normal(384).astype(np.float32)
    query /= np.linalg.norm(query)
    scale = float(np.abs(query).max()) / CODE_MAX
    query_codes = np.rint(query / scale)
    query_error = float(np.linalg.norm(query - query_codes * scale))
    screened = (coded.codes.astype(np.float64) @ query_codes) * coded.scales * scale
    exact = vectors.astype(np.float64) @ query
    bound = coded.errors * np.linalg.norm(query) + coded.norms * query_error
    assert np.all(np.abs(exact - screened) <= bound + 1e-6)
    assert float(bound.max()) < 0.05  # tight enough to screen: ~0.02 for MiniLM-sized rows


def test_a_zero_row_codes_to_zeros() -> None:
    coded = code_rows(np.zeros((2, 8), dtype=np.float32))
    assert not coded.codes.any()
    assert np.all(coded.errors == 0) and np.all(coded.norms == 0)
