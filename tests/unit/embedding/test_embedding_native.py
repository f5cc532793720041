"""The numpy MiniLM against sentence-transformers' reference vectors, batching and threads."""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tokenizers import Tokenizer

from signet_desktop.embedding import native
from signet_desktop.embedding.bert import gelu_inplace
from signet_desktop.embedding.native import MAX_SEQ_LENGTH, NativeMiniLM
from signet_desktop.embedding.provider import EmbeddingError

FIXTURE = Path(__file__).parents[2] / "fixtures" / "minilm_reference.json"


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return data


@pytest.fixture(scope="module")
def model() -> Iterator[NativeMiniLM]:
    embedder = NativeMiniLM()
    embedder.load()
    yield embedder
    embedder.close()


def test_matches_sentence_transformers_on_every_fixture_sentence(
    model: NativeMiniLM, reference: dict[str, Any]
) -> None:
    sentences = reference["sentences"]
    expected = np.array(reference["vectors"], dtype=np.float32)
    assert len(sentences) >= 20 and expected.shape == (len(sentences), 384)
    out = model.embed(sentences)
    assert out.shape == expected.shape and out.dtype == np.float32
    cosines = (out * expected).sum(axis=1) / np.linalg.norm(expected, axis=1)
    worst = int(np.argmin(cosines))
    assert cosines.min() >= 0.999, f"sentence {worst} {sentences[worst][:40]!r}: {cosines[worst]}"


def test_fixture_covers_truncation(reference: dict[str, Any]) -> None:
    # Some sentences exceed max_seq_length, so the cosine test above covers truncation too.
    untruncated = Tokenizer.from_file(str(native.default_model_dir() / "tokenizer.json"))
    untruncated.no_truncation()
    untruncated.no_padding()
    lengths = [len(e.ids) for e in untruncated.encode_batch(reference["sentences"])]
    assert sum(n > MAX_SEQ_LENGTH for n in lengths) >= 2
    assert min(lengths) == 2  # and an all-whitespace text: just [CLS] [SEP]


def test_rows_are_unit_norm_and_finite(model: NativeMiniLM) -> None:
    out = model.embed(["one", "two words", "a somewhat longer sentence about databases"])
    assert np.isfinite(out).all()
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)


def test_batched_equals_one_at_a_time_in_input_order(
    model: NativeMiniLM, reference: dict[str, Any]
) -> None:
    # Mixed lengths so bucketing reorders internally; output must still follow input order.
    texts = [reference["sentences"][i] for i in (18, 0, 5, 13, 7, 1)]
    batched = model.embed(texts)
    single = np.vstack([model.embed([t]) for t in texts])
    np.testing.assert_allclose(batched, single, atol=2e-5)


def test_small_batches_and_workers_give_the_same_vectors(
    model: NativeMiniLM, reference: dict[str, Any]
) -> None:
    texts = reference["sentences"][:9]
    expected = model.embed(texts)
    tiny = NativeMiniLM(batch_size=2, max_batch_tokens=256)
    np.testing.assert_allclose(tiny.embed(texts), expected, atol=2e-5)
    parallel = NativeMiniLM(batch_size=2, workers=2)
    try:
        np.testing.assert_allclose(parallel.embed(texts), expected, atol=2e-5)
    finally:
        parallel.close()


def test_semantic_neighbours(model: NativeMiniLM) -> None:
    a, b, c = model.embed(
        [
            "The user prefers dark mode.",
            "User likes a dark theme in the editor.",
            "Stock prices fell.",
        ]
    )
    assert float(a @ b) > float(a @ c) + 0.3


def test_empty_input(model: NativeMiniLM, reference: dict[str, Any]) -> None:
    assert model.embed([]).shape == (0, 384)
    empty, spaces = model.embed(["", "   "])
    np.testing.assert_allclose(empty, spaces, atol=1e-6)
    whitespace_ref = np.array(reference["vectors"][reference["sentences"].index("   ")])
    assert float(empty @ whitespace_ref) >= 0.999


def test_rejects_a_bare_string(model: NativeMiniLM) -> None:
    with pytest.raises(TypeError, match="single string"):
        model.embed("hello")


def test_load_is_lazy_idempotent_and_thread_safe(
    monkeypatch: pytest.MonkeyPatch, reference: dict[str, Any], model: NativeMiniLM
) -> None:
    loads: list[Path] = []
    real_load = native._load

    def counting_load(model_dir: Path, engine: native.Engine, graph: str) -> Any:
        loads.append(model_dir)
        return real_load(model_dir, engine, graph)

    monkeypatch.setattr(native, "_load", counting_load)
    fresh = NativeMiniLM()
    assert not fresh.is_loaded
    texts = reference["sentences"][:4]
    expected = model.embed(texts)
    results: list[np.ndarray] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(3)

    def work() -> None:
        try:
            barrier.wait()
            for _ in range(2):
                results.append(fresh.embed(texts))
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors
    assert fresh.is_loaded and len(loads) == 1
    assert len(results) == 6
    for out in results:
        np.testing.assert_allclose(out, expected, atol=1e-6)
    fresh.load()
    assert len(loads) == 1
    fresh.close()


def test_missing_model_files_give_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match="cannot load all-MiniLM-L6-v2"):
        NativeMiniLM(model_dir=tmp_path).load()


def test_default_model_dir_has_the_shipped_files() -> None:
    d = native.default_model_dir()
    for name in ("model.safetensors", "tokenizer.json", "config.json", "1_Pooling/config.json"):
        assert (d / name).is_file()


def test_gelu_matches_erf_definition() -> None:
    x = np.concatenate([np.linspace(-12, 12, 4001), [0.0, -0.0, 1e-8, -1e-8, 40.0, -40.0]])
    expected = np.array([v * 0.5 * (1.0 + math.erf(v / math.sqrt(2.0))) for v in x])
    got = gelu_inplace(x.astype(np.float32).reshape(-1, 1).copy()).ravel()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=5e-7)
    wide = np.linspace(-6, 6, 3 * 2048, dtype=np.float32).reshape(3, 2048)  # several blocks
    np.testing.assert_allclose(
        gelu_inplace(wide.copy()),
        [
            [v * 0.5 * (1.0 + math.erf(v / math.sqrt(2.0))) for v in row]
            for row in wide.astype(float)
        ],
        rtol=1e-5,
        atol=5e-7,
    )
