"""The process's last step: exit at once when abandoned work is still running in threads.

A worker or vector batch whose stop budget ran out may still be inside native code (an
onnxruntime call). Finalising the interpreter around such a thread tears down its runtime
under it, which aborts the process ("terminate called without an active exception", exit
-6) or waits on it (executor threads are joined at exit). By then the database is closed, the
lock released and the pid file removed, and the abandoned job's lease was given back: so the
process flushes its output and leaves with `os._exit`, keeping its exit code.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading

log = logging.getLogger(__name__)


def still_running() -> list[str]:
    """Names of the threads other than this one that are still alive."""
    current = threading.current_thread()
    return [t.name for t in threading.enumerate() if t is not current and t.is_alive()]


def leave(code: int) -> int:
    """Return `code`, or end the process now with it when other threads still run."""
    running = still_running()
    if not running:
        return code
    log.info("exiting with %d threads still running (%s)", len(running), ", ".join(running))
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing to say
                stream.flush()
    os._exit(code)
