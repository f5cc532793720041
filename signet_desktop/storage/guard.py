"""Thread marks for open write transactions, and the guard that keeps providers out of them."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

_state = threading.local()


class ProviderCallInWriteTransaction(RuntimeError):
    """A provider (embedding, LLM, URL fetch) ran while this thread held a write transaction."""


def in_write_transaction() -> bool:
    """True while the current thread has a write transaction open."""
    return bool(getattr(_state, "depth", 0))


@contextmanager
def write_transaction_mark() -> Iterator[None]:
    """Mark the current thread as inside a write transaction (used by the writer only)."""
    _state.depth = getattr(_state, "depth", 0) + 1
    try:
        yield
    finally:
        _state.depth -= 1


def assert_provider_call_allowed(what: str) -> None:
    """Raise if a provider call named `what` would run inside a write transaction."""
    if in_write_transaction():
        raise ProviderCallInWriteTransaction(
            f"{what} called inside a SQLite write transaction; "
            "call providers before the transaction that applies their result"
        )
