"""The deterministic hashing embedder used by tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.embedding.provider import EmbeddingProvider


def test_is_a_provider_with_unit_rows() -> None:
    embedder = HashEmbedder()
    assert isinstance(embedder, EmbeddingProvider)
    assert (embedder.name, embedder.dimensions) == ("hash", 384)
    out = embedder.embed(["alpha beta", "gamma", ""])
    assert out.shape == (3, 384) and out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-6)
    assert embedder.embed([]).shape == (0, 384)


def test_deterministic_across_instances_and_processes() -> None:
    texts = ["The user prefers dark mode", "ünïcödé text", ""]
    here = HashEmbedder(64).embed(texts)
    np.testing.assert_array_equal(here, HashEmbedder(64).embed(texts))
    code = (
        "import sys, json; from signet_desktop.embedding.hashing import HashEmbedder;"
        f"print(json.dumps(HashEmbedder(64).embed({texts!r}).tolist()))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    np.testing.assert_array_equal(np.array(json.loads(out.stdout), dtype=np.float32), here)


def test_shared_words_make_similar_vectors() -> None:
    a, b, c = HashEmbedder().embed(
        [
            "user prefers dark mode in the editor",
            "the user prefers dark mode",
            "stock prices fell sharply",
        ]
    )
    assert float(a @ b) > 0.5
    assert float(a @ b) > float(a @ c) + 0.3


def test_case_and_punctuation_do_not_matter() -> None:
    a, b = HashEmbedder().embed(["Dark mode!", "dark   MODE"])
    np.testing.assert_allclose(a, b, atol=1e-7)
