"""The ONNX writer: a node of onnxruntime's own domain gets that domain's opset imported."""

from __future__ import annotations

import math

import numpy as np
import onnxruntime as ort  # type: ignore[import-untyped]

from signet_desktop.embedding.onnx_proto import FLOAT, GraphWriter, value_info


def run(model: bytes, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    (out,) = session.run(None, {"x": x})
    return np.asarray(out)


def test_a_contrib_operator_loads_and_runs() -> None:
    g = GraphWriter("contrib")
    g.node("Gelu", ["x"], domain="com.microsoft", outputs=["y"])
    assert g.domains == {"com.microsoft"}
    model = g.model([value_info("x", FLOAT, [3])], [value_info("y", FLOAT, [3])], 18)
    x = np.array([-1.0, 0.0, 2.0], dtype=np.float32)
    expected = [v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x.tolist()]
    np.testing.assert_allclose(run(model, x), expected, atol=1e-5)


def test_int8_initializers_keep_their_type() -> None:
    g = GraphWriter("int8")
    weight = g.constant("w", np.array([[1, -2], [3, 4]], dtype=np.int8))
    cast = g.node("Cast", [weight], to=FLOAT)
    g.node("MatMul", ["x", cast], outputs=["y"])
    assert g.domains == set()
    model = g.model([value_info("x", FLOAT, [1, 2])], [value_info("y", FLOAT, [1, 2])], 18)
    np.testing.assert_allclose(run(model, np.array([[1.0, 1.0]], dtype=np.float32)), [[4, 2]])
