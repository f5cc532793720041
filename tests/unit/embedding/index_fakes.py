"""A scripted embedder behind the real provider interface: ok, down, slow or returning junk."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import numpy as np

from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.embedding.provider import EmbeddingUnavailable, Vectors
from signet_desktop.storage.guard import assert_provider_call_allowed


class ScriptedEmbedder:
    """HashEmbedder vectors unless `mode` says otherwise.

    Modes: ok | down (EmbeddingUnavailable) | slow (sleeps `delay_s` first) |
    wrong_dims (one column short) | nan | empty (zero-width rows) | crash (a bug: RuntimeError).
    """

    name = "scripted"

    def __init__(self, dimensions: int = 64, model: str | None = None) -> None:
        self.dimensions = dimensions
        self.model = model or f"scripted-{dimensions}"
        self.mode = "ok"
        self.delay_s = 0.0
        self.calls = 0
        self.texts: list[str] = []
        self._inner = HashEmbedder(dimensions)
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> Vectors:
        assert_provider_call_allowed("scripted embedder")
        with self._lock:
            self.calls += 1
            self.texts.extend(texts)
        if self.mode == "down":
            raise EmbeddingUnavailable("scripted: connection refused")
        if self.mode == "crash":
            raise RuntimeError("scripted: unexpected bug")
        if self.mode == "slow":
            time.sleep(self.delay_s)
        if self.mode == "wrong_dims":
            return np.ones((len(texts), self.dimensions - 1), dtype=np.float32)
        if self.mode == "nan":
            return np.full((len(texts), self.dimensions), np.nan, dtype=np.float32)
        if self.mode == "empty":
            return np.zeros((len(texts), 0), dtype=np.float32)
        return self._inner.embed(texts)
