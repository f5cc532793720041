"""The query embedder shared by recall channels: each query text is embedded once.

The semantic channel embeds the query on the engine's pool; the traversal channel scores its
candidates against the same vector. Wrapping the embedder the semantic channel is given
keeps the last few single-text results, so the traversal channel can `peek` at the vector
the semantic channel made (never embedding a second time, never waiting for it).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from signet_desktop.embedding.provider import EmbeddingProvider, Vectors

RECENT_QUERIES = 32


class RecentQueryVectors:
    """An `EmbeddingProvider` that forwards to `inner` and remembers recent query vectors."""

    def __init__(self, inner: EmbeddingProvider, keep: int = RECENT_QUERIES) -> None:
        self.inner = inner
        self._keep = keep
        self._recent: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def dimensions(self) -> int:
        return self.inner.dimensions

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed through `inner`; a single text's vector is kept for `peek`."""
        vectors = self.inner.embed(texts)
        if len(texts) == 1 and len(vectors) == 1:
            with self._lock:
                self._recent[texts[0]] = np.ascontiguousarray(vectors[0], dtype=np.float32)
                self._recent.move_to_end(texts[0])
                while len(self._recent) > self._keep:
                    self._recent.popitem(last=False)
        return vectors

    def peek(self, text: str) -> npt.NDArray[np.float32] | None:
        """The vector of a text embedded recently, or None (nothing is computed here)."""
        with self._lock:
            return self._recent.get(text)
