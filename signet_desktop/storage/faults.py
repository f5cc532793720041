"""Named fault points for crash tests: a seam calls `faults.hit("<step>")` at each step.

A variable of the environment names one step as `<step>[:<n>]` (`SIGNET_IMPORT_FAULT` for
imports, `SIGNET_APPLY_FAULT` for the Dreaming apply seam, `SIGNET_DOCUMENT_FAULT` for the
document worker); the process is then killed with SIGKILL at that step's n-th hit (default
the first): no cleanup, no flush, exactly what a power cut or `kill -9` leaves. Unset, a hit
costs one comparison. Each seam lists its steps beside it, so a test can iterate over them.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable


def parse_target(raw: str) -> tuple[str, int] | None:
    """`<step>[:<n>]` as (step, n >= 1); blank is None."""
    raw = raw.strip()
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
    def from_variable(cls, name: str) -> FaultPoints:
        """The fault point the environment variable `name` names, read now."""
        return cls(parse_target(os.environ.get(name, "")))

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
