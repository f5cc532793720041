"""Scripted embedders behind the real provider interface: ok, down, slow or returning junk."""

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
    Every call is counted and its texts kept; the write-transaction guard runs first.
    """

    name = "scripted"
    label = "scripted"  # how the fake names itself in its errors

    def __init__(self, dimensions: int = 64, model: str | None = None) -> None:
        self.dimensions = dimensions
        self.model = model or f"{self.name}-{dimensions}"
        self.mode = "ok"
        self.delay_s = 0.0
        self.calls = 0
        self.texts: list[str] = []
        self._inner = HashEmbedder(dimensions)
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> Vectors:
        assert_provider_call_allowed(f"{self.label} embedder")
        with self._lock:
            self.calls += 1
            self.texts.extend(texts)
        if self.mode == "down":
            raise EmbeddingUnavailable(f"{self.label}: connection refused")
        if self.mode == "crash":
            raise RuntimeError(f"{self.label}: unexpected bug")
        if self.mode == "slow":
            time.sleep(self.delay_s)
        if self.mode == "wrong_dims":
            return np.ones((len(texts), self.dimensions - 1), dtype=np.float32)
        if self.mode == "nan":
            return np.full((len(texts), self.dimensions), np.nan, dtype=np.float32)
        if self.mode == "empty":
            return np.zeros((len(texts), 0), dtype=np.float32)
        return self._inner.embed(texts)


class SwitchableEmbedder(ScriptedEmbedder):
    """A ScriptedEmbedder that passes for the hash embedder ("hash", "hash-64").

    `down = True` is an embedder server gone (EmbeddingUnavailable), `down = False` is it back.
    """

    name = "hash"
    label = "switchable"

    @property
    def down(self) -> bool:
        return self.mode == "down"

    @down.setter
    def down(self, value: bool) -> None:
        self.mode = "down" if value else "ok"
