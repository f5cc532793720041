"""A deterministic hashing embedder for tests: shared words give similar vectors, no model.

Each lowercase word token (and each pair of adjacent words, at half weight) is hashed with
BLAKE2b into one of `dimensions` buckets with a sign; the counts are L2-normalised. The same
text gives the same vector in every process. It carries no meaning beyond word overlap, so
configuration refuses it unless explicitly allowed (see `registry.build_embedder`).
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from signet_desktop.embedding.provider import Vectors, check_texts, empty_vectors
from signet_desktop.storage.guard import assert_provider_call_allowed

_TOKEN = re.compile(r"\w+", re.UNICODE)
_EMPTY_TOKEN = "\x00empty"
_BIGRAM_WEIGHT = 0.5


class HashEmbedder:
    """Token-hashing embedder (name "hash"); deterministic and thread-safe."""

    name = "hash"

    def __init__(self, dimensions: int = 384) -> None:
        if dimensions < 8:
            raise ValueError("dimensions must be >= 8")
        self.dimensions = dimensions
        self.model = f"hash-{dimensions}"

    def __repr__(self) -> str:
        return f"HashEmbedder(dimensions={self.dimensions})"

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed `texts` by hashing their words; empty texts share one fixed vector."""
        assert_provider_call_allowed("embedding:hash")
        items = check_texts(texts)
        if not items:
            return empty_vectors(self.dimensions)
        out = np.zeros((len(items), self.dimensions), dtype=np.float64)
        for row, text in enumerate(items):
            words = _TOKEN.findall(text.lower()) or [_EMPTY_TOKEN]
            for word in words:
                self._add(out[row], word, 1.0)
            for left, right in itertools.pairwise(words):
                self._add(out[row], f"{left} {right}", _BIGRAM_WEIGHT)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        # Colliding signed hashes can cancel to zero; fall back to the empty-text vector.
        for zero in np.flatnonzero(norms[:, 0] == 0.0):
            self._add(out[zero], _EMPTY_TOKEN, 1.0)
            norms[zero] = 1.0
        vectors: Vectors = (out / norms).astype(np.float32)
        return vectors

    def _add(self, vector: npt.NDArray[np.float64], token: str, weight: float) -> None:
        digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        sign = 1.0 if value & 1 else -1.0
        vector[(value >> 1) % self.dimensions] += sign * weight
