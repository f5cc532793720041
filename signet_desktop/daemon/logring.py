"""The last few hundred log lines in memory, for the inspector's Health pane.

`daemonlog.install` attaches the process-wide ring (`log_ring()`) beside the file handler, so
the pane shows recent lines without reading the log file; a listener (the Qt bridge) hears
each new line as it is logged, on the logging thread. Records become frozen `LogLine` values
at once: the ring never holds a record's arguments alive.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

DEFAULT_CAPACITY = 500

Listener = Callable[["LogLine"], None]


@dataclass(frozen=True, slots=True)
class LogLine:
    """One logged record, formatted (`exception` is the traceback's last line, if any)."""

    seq: int
    created: float
    level: int
    level_name: str
    logger: str
    thread: str
    message: str
    exception: str | None = None


class LogRing(logging.Handler):
    """A bounded, thread-safe buffer of the newest records, with listeners."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        super().__init__()
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self._lines: deque[LogLine] = deque(maxlen=capacity)
        self._listeners: list[Listener] = []
        self._seq = 0
        self._guard = threading.Lock()

    @property
    def capacity(self) -> int:
        return self._lines.maxlen or 0

    @property
    def listener_count(self) -> int:
        with self._guard:
            return len(self._listeners)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string must not break logging
            message = str(record.msg)
        exception = None
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            exception = f"{type(exc).__name__}: {exc}"
        with self._guard:
            self._seq += 1
            line = LogLine(
                seq=self._seq,
                created=record.created,
                level=record.levelno,
                level_name=record.levelname,
                logger=record.name,
                thread=record.threadName or "",
                message=message,
                exception=exception,
            )
            self._lines.append(line)
            listeners = list(self._listeners)
        for listener in listeners:  # outside the lock: a listener may log
            try:
                listener(line)
            except Exception:
                self.handleError(record)

    def lines(self, min_level: int = logging.NOTSET) -> list[LogLine]:
        """The buffered lines at `min_level` or above, oldest first."""
        with self._guard:
            return [line for line in self._lines if line.level >= min_level]

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener(line)` for every new line; returns the unsubscribe function."""
        with self._guard:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._guard:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def clear(self) -> None:
        with self._guard:
            self._lines.clear()


_RING = LogRing()


def log_ring() -> LogRing:
    """The process's ring (the one `daemonlog.install` attaches)."""
    return _RING
