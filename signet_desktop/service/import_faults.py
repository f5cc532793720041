"""Named fault points in an import, for the crash tests: `SIGNET_IMPORT_FAULT=<step>[:<n>]`.

Each step of an import calls `faults.hit("<step>")`. When the environment names that step
(read once, when the first `FaultPoints.from_env()` is built), the process is killed with
SIGKILL at its n-th hit (default the first): no cleanup, no flush, exactly what a power cut
or `kill -9` leaves. Unset, a hit costs one dict lookup. Steps are listed in `STEPS`; a test
iterates over them.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from functools import lru_cache

ENV = "SIGNET_IMPORT_FAULT"
# In the order an import passes them (service/harness_import.py documents each).
STEPS = (
    "run.started",
    "file.inventoried",
    "file.staged",
    "file.recorded",
    "record.pending",
    "canonical.torn",
    "canonical.appended",
    "record.finalised",
    "file.imported",
    "run.finishing",
)


@lru_cache(maxsize=1)
def _configured() -> tuple[str, int] | None:
    raw = os.environ.get(ENV, "").strip()
    if not raw:
        return None
    step, _, count = raw.partition(":")
    return step, max(1, int(count)) if count.isdigit() else 1


def _kill() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


class FaultPoints:
    """Counts hits per step and fires the configured one (or calls `on_hit` in tests)."""

    def __init__(
        self,
        target: tuple[str, int] | None = None,
        *,
        action: Callable[[], None] = _kill,
        on_hit: Callable[[str], None] | None = None,
    ) -> None:
        self._target = target
        self._action = action
        self._on_hit = on_hit
        self._hits: dict[str, int] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_env(cls) -> FaultPoints:
        return cls(_configured())

    def armed(self, step: str) -> bool:
        """Will the next hit of `step` fire? (`canonical.torn` writes half a line first.)"""
        if self._target is None or self._target[0] != step:
            return False
        return self._hits.get(step, 0) + 1 == self._target[1]

    def hit(self, step: str) -> None:
        if self._on_hit is not None:
            self._on_hit(step)
        if self._target is None or self._target[0] != step:
            return
        with self._lock:
            self._hits[step] = self._hits.get(step, 0) + 1
            fire = self._hits[step] == self._target[1]
        if fire:
            self._action()


NO_FAULTS = FaultPoints()
