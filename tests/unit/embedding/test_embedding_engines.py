"""The onnxruntime and numpy engines of NativeMiniLM: same function, same fixture, one path each."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from signet_desktop.embedding import native
from signet_desktop.embedding.native import NativeMiniLM
from signet_desktop.embedding.onnx_proto import _varint, tensor

FIXTURE = Path(__file__).parents[2] / "fixtures" / "minilm_reference.json"


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return data


@pytest.fixture(scope="module")
def numpy_model() -> Iterator[NativeMiniLM]:
    embedder = NativeMiniLM(engine="numpy")
    yield embedder
    embedder.close()


@pytest.fixture(scope="module")
def onnx_model() -> Iterator[NativeMiniLM]:
    embedder = NativeMiniLM()
    yield embedder
    embedder.close()


def test_default_engine_is_onnxruntime(onnx_model: NativeMiniLM) -> None:
    assert onnx_model.engine is None  # not loaded yet
    onnx_model.load()
    assert onnx_model.engine == "onnx"


@pytest.mark.parametrize("engine", ["onnx", "numpy"])
def test_every_engine_matches_sentence_transformers(
    engine: native.Engine,
    onnx_model: NativeMiniLM,
    numpy_model: NativeMiniLM,
    reference: dict[str, Any],
) -> None:
    model = onnx_model if engine == "onnx" else numpy_model
    expected = np.array(reference["vectors"], dtype=np.float32)
    for out in (model.embed(reference["sentences"]), None):
        if out is None:  # and one text at a time, the recall query path
            out = np.vstack([model.embed([s]) for s in reference["sentences"]])
        cosines = (out * expected).sum(axis=1) / np.linalg.norm(expected, axis=1)
        assert cosines.min() >= 0.999, (engine, int(np.argmin(cosines)), float(cosines.min()))
    assert model.engine == engine


def test_engines_agree_on_padded_batches(
    onnx_model: NativeMiniLM, numpy_model: NativeMiniLM, reference: dict[str, Any]
) -> None:
    texts = reference["sentences"]  # mixed lengths: padding and the attention mask matter
    np.testing.assert_allclose(onnx_model.embed(texts), numpy_model.embed(texts), atol=2e-5)


def test_single_text_takes_no_pool_and_no_padding(
    onnx_model: NativeMiniLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    onnx_model.load()
    monkeypatch.setattr(native, "_pad", _forbidden)
    monkeypatch.setattr(native, "_buckets", _forbidden)
    monkeypatch.setattr(NativeMiniLM, "_get_pool", _forbidden)
    (row,) = onnx_model.embed(["  which database does billing use?  "])
    assert row.shape == (384,) and abs(float(np.linalg.norm(row)) - 1.0) < 1e-5


def test_missing_onnxruntime_falls_back_to_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_onnx(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "signet_desktop.embedding.onnx_bert":
            raise ImportError("no onnxruntime here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_onnx)
    embedder = NativeMiniLM()
    embedder.load()
    assert embedder.engine == "numpy"


def test_proto_varints_and_tensors() -> None:
    assert _varint(0) == b"\x00" and _varint(300) == b"\xac\x02"
    assert _varint(-1) == b"\xff" * 9 + b"\x01"  # int64 -1: ten bytes
    raw = np.arange(3, dtype=np.int64)
    assert tensor("t", raw).endswith(raw.tobytes())
    with pytest.raises(KeyError):
        tensor("t", np.zeros(2, dtype=np.float16))


def _forbidden(*args: object, **kwargs: object) -> None:
    raise AssertionError("the single-text path must not pad, bucket or use the pool")
