"""Daemon logging: a rotating `.daemon/logs/daemon.log`, concise lines on stderr, and the
in-memory ring of recent lines the inspector's Health pane shows (`logring.py`).

Only the runtime calls `install`; the handle it returns removes exactly the handlers it added,
so an in-process runtime (tests, the Qt shell) leaves the logging tree as it found it.
"""

from __future__ import annotations

import asyncio
import logging
import logging.handlers
import sys
from dataclasses import dataclass, field
from pathlib import Path

from signet_desktop.daemon.logring import log_ring

LOG_FILE_NAME = "daemon.log"
MAX_BYTES = 5 * 1024 * 1024
BACKUP_COUNT = 3
LEVELS = ("critical", "error", "warning", "info", "debug")

_FILE_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(threadName)s] %(message)s"
_STDERR_FORMAT = "%(levelname)s %(name)s: %(message)s"
# Request lines belong in the file, not on the terminal.
_FILE_ONLY_LOGGERS = ("uvicorn.access",)


class ForcedStopFilter(logging.Filter):
    """After a forced stop, drop uvicorn's tracebacks of the tasks it cancelled on purpose.

    A second Ctrl-C (or SIGTERM) tells uvicorn to cut open connections and the lifespan task;
    each then logs a `CancelledError` traceback, which is the requested outcome, not an error.
    Before a forced stop nothing is filtered.
    """

    def __init__(self) -> None:
        super().__init__()
        self.active = False

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.active or record.levelno < logging.ERROR:
            return True
        exc = record.exc_info[0] if record.exc_info else None
        if exc is not None and issubclass(exc, asyncio.CancelledError):
            return False
        return "CancelledError" not in record.getMessage()


@dataclass(slots=True)
class LogHandle:
    """What `install` changed, to undo on shutdown."""

    handlers: list[tuple[logging.Logger, logging.Handler]] = field(default_factory=list)
    restored: list[tuple[logging.Logger, int, bool]] = field(default_factory=list)
    forced_stop: ForcedStopFilter = field(default_factory=ForcedStopFilter)

    def close(self) -> None:
        logging.getLogger("uvicorn.error").removeFilter(self.forced_stop)
        for logger, handler in self.handlers:
            logger.removeHandler(handler)
            if handler is not log_ring():  # the ring outlives a runtime (the pane keeps it)
                handler.close()
        self.handlers.clear()
        for logger, level, propagate in self.restored:
            logger.setLevel(level)
            logger.propagate = propagate
        self.restored.clear()


def install(logs_dir: Path, level: str = "info", *, stderr: bool = True) -> LogHandle:
    """Attach the file (and stderr) handlers under the `signet_desktop` and `uvicorn` loggers."""
    numeric = logging.getLevelNamesMapping()[level.upper()]
    handle = LogHandle()
    file_handler = logging.handlers.RotatingFileHandler(
        logs_dir / LOG_FILE_NAME, maxBytes=MAX_BYTES, backupCount=BACKUP_COUNT, encoding="utf-8"
    )
    file_handler.setFormatter(logging.Formatter(_FILE_FORMAT))
    stream_handler = logging.StreamHandler(sys.stderr) if stderr else None
    if stream_handler is not None:
        stream_handler.setFormatter(logging.Formatter(_STDERR_FORMAT))
    for name in ("signet_desktop", "uvicorn"):
        logger = logging.getLogger(name)
        handle.restored.append((logger, logger.level, logger.propagate))
        logger.setLevel(numeric)
        logger.propagate = False
        _attach(handle, logger, file_handler)
        if stream_handler is not None:
            _attach(handle, logger, stream_handler)
        _attach(handle, logger, log_ring())  # recent lines for the Health pane
    for name in _FILE_ONLY_LOGGERS:
        logger = logging.getLogger(name)
        handle.restored.append((logger, logger.level, logger.propagate))
        logger.setLevel(numeric)
        logger.propagate = False
        _attach(handle, logger, file_handler)
    logging.getLogger("uvicorn.error").addFilter(handle.forced_stop)
    return handle


def _attach(handle: LogHandle, logger: logging.Logger, handler: logging.Handler) -> None:
    logger.addHandler(handler)
    handle.handlers.append((logger, handler))
