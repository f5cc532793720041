"""Interfaces the facade depends on and lower layers implement."""

from __future__ import annotations

from typing import Protocol

from signet_desktop.domain.memory import Memory
from signet_desktop.storage.connect import Connection


class MemoryVectors(Protocol):
    """Embeds memory text before a write, and attaches the vector inside it.

    `prepare` runs outside any transaction (it may call a provider) and returns an opaque
    prepared vector, or None when the embedder is unavailable. `attach` runs inside the
    remember transaction: it stores the vector, or queues a backfill job when there is none.
    """

    def prepare(self, text: str) -> object | None: ...

    def attach(self, conn: Connection, memory: Memory, prepared: object | None) -> bool: ...
