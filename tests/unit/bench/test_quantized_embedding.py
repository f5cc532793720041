"""bench/quantized_embedding.py: its variants really change the graph, and still embed."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

import quantized_embedding as bench

from signet_desktop.embedding.graphs import FLOAT32, GRAPHS, dense_for, lookup_for
from signet_desktop.embedding.onnx_bert import OnnxBert

TEXTS = ["billing runs on Postgres 16", "which database does billing use?", "hello"]


@pytest.fixture(scope="module")
def loaded() -> tuple[object, object]:
    return bench.load()


@pytest.fixture(scope="module")
def exact(loaded: tuple[object, object]) -> np.ndarray:
    """The float32 graph's vectors of TEXTS, the reference every variant is compared with."""
    tokenizer, weights = loaded
    return bench.encode_texts(OnnxBert(weights), tokenizer, TEXTS)  # type: ignore[arg-type]


@pytest.mark.parametrize("variant", [name for name in GRAPHS if name != FLOAT32])
def test_an_int8_variant_is_a_different_graph_of_the_same_function(
    loaded: tuple[object, object], exact: np.ndarray, variant: str
) -> None:
    tokenizer, weights = loaded
    quantized = bench.encode_texts(
        OnnxBert(weights, dense_for(variant), lookup_for(variant)),  # type: ignore[arg-type]
        tokenizer,  # type: ignore[arg-type]
        TEXTS,
    )
    cosines = (exact * quantized).sum(axis=1)
    assert not np.allclose(exact, quantized, atol=1e-5)  # the int8 layers were used
    assert cosines.min() > 0.95  # and still compute (approximately) the model
    np.testing.assert_allclose(np.linalg.norm(quantized, axis=1), 1.0, atol=1e-5)
