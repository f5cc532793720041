"""SIGINT/SIGTERM as a clean stop: no traceback, no death by signal, cleanup always runs.

Before the loop runs, both signals raise KeyboardInterrupt so start-up unwinds through its
`finally` blocks; once it runs, they call the runtime's `request_stop` through the loop
(`add_signal_handler` works on plain asyncio and on qasync's Unix loop alike).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

HANDLED = (signal.SIGINT, signal.SIGTERM)


async def serve_with_signals(serve: Callable[[], Awaitable[int]], stop: Callable[[], None]) -> int:
    """Await `serve()` with SIGINT/SIGTERM calling `stop` (main thread, Unix loops)."""
    loop = asyncio.get_running_loop()
    for sig in HANDLED:
        loop.add_signal_handler(sig, stop)
    try:
        return await serve()
    finally:
        for sig in HANDLED:
            loop.remove_signal_handler(sig)


def interrupt_on_term() -> dict[int, Any]:
    """Until the loop runs, SIGTERM behaves like Ctrl+C so start-up can unwind and clean up."""
    previous: dict[int, Any] = {}
    for sig in HANDLED:
        previous[sig] = signal.signal(sig, signal.default_int_handler)
    return previous


def restore_signals(previous: Mapping[int, Any]) -> None:
    """Put back the handlers `interrupt_on_term` replaced."""
    for sig, handler in previous.items():
        with contextlib.suppress(TypeError, ValueError):
            signal.signal(sig, handler)
