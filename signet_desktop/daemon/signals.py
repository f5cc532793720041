"""SIGINT/SIGTERM as a clean stop: no traceback, no death by signal, cleanup always runs.

Before the loop runs, both signals raise KeyboardInterrupt so start-up unwinds through its
`finally` blocks; once it runs, they call the runtime's `request_stop` through the loop
(`add_signal_handler` works on plain asyncio and on qasync's Unix loop alike). After the
loop, while the database closes, the lock is released and the interpreter exits, further
signals are ignored: however many arrive, the process exits with its own code.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable

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
            loop.remove_signal_handler(sig)  # this puts back SIG_DFL: death by signal
        # The loop is done and cleanup follows: a further Ctrl-C or SIGTERM changes nothing.
        ignore_stop_signals()


def ignore_stop_signals() -> None:
    """For a process that is stopping: a late SIGINT/SIGTERM must not turn exit 0 into a kill.

    The process entry points (`run_headless`, `run_desktop`) call it once the server stopped;
    it stays in force through cleanup and interpreter teardown. SIG_IGN, not a Python
    function: finalisation puts SIG_DFL back for Python handlers (a late signal would kill the
    process in its last milliseconds), but keeps SIG_IGN.
    """
    for sig in HANDLED:
        signal.signal(sig, signal.SIG_IGN)


def interrupt_on_term() -> None:
    """Until the loop runs, SIGTERM behaves like Ctrl+C so start-up can unwind and clean up."""
    for sig in HANDLED:
        signal.signal(sig, signal.default_int_handler)
