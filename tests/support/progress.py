"""Waiting on work that reports its progress: fail when it stalls, not when a clock runs out.

Embedding follows an acknowledged remember in the background. On a loaded machine it may take
many times longer than on a quiet one, yet it keeps moving; a fixed deadline then fails a
healthy build. `wait_for_count` waits while the count grows and fails only when it has not
moved for `stall_s` seconds (the first one waits for the model to load) or when `most_s`
passes in all (under pytest's 120 s per test).
"""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for_count(
    read: Callable[[], int],
    target: int,
    *,
    what: str,
    stall_s: float = 60.0,
    most_s: float = 110.0,
    poll_s: float = 0.05,
) -> None:
    """Until `read()` reaches `target`; AssertionError naming `what` when it stalls."""
    start = last_move = time.monotonic()
    seen = read()
    while seen < target:
        now = time.monotonic()
        assert now - last_move < stall_s, f"{what}: stuck at {seen} of {target} for {stall_s} s"
        assert now - start < most_s, f"{what}: {seen} of {target} after {most_s} s"
        time.sleep(poll_s)
        count = read()
        if count > seen:
            seen, last_move = count, time.monotonic()
