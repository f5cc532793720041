"""Whether the store can search vectors: the value storage reports and diagnostics judge."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class VecStatus:
    """Whether sqlite-vec loaded on this connection, and why not if it did not."""

    available: bool
    version: str | None
    error: str | None
