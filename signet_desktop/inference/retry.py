"""Bounded retries for provider calls: exponential backoff with jitter inside one deadline.

Retried: errors marked `retryable` — 429 (its Retry-After honoured), 5xx, connection failures.
Never retried: other 4xx, bad responses, a missing configuration. Every attempt gets the time
left before the deadline as its timeout, so the whole call ends within `deadline_s` (plus the
few milliseconds an attempt takes to notice its timeout).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from signet_desktop.inference.errors import ProviderError, ProviderRateLimited

_log = logging.getLogger(__name__)
T = TypeVar("T")
_MIN_ATTEMPT_S = 0.05  # do not start an attempt with less time than this left


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """At most `attempts` tries; backoff `base_s * 2**n` capped at `max_s`, ±`jitter`."""

    attempts: int = 4
    base_s: float = 0.5
    max_s: float = 8.0
    jitter: float = 0.2

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("attempts must be at least 1")
        if self.base_s < 0 or self.max_s < 0 or not 0 <= self.jitter <= 1:
            raise ValueError("backoff values must be non-negative and jitter within 0..1")

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number `retry` (0-based)."""
        if retry_after is not None:
            return max(retry_after, 0.0)
        base = min(self.base_s * 2.0**retry, self.max_s)
        return base * (1.0 + self.jitter * (2.0 * random.random() - 1.0))


def call_with_retries(
    attempt: Callable[[float], T],
    *,
    policy: RetryPolicy,
    deadline_s: float,
    what: str,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> T:
    """Run `attempt(timeout_s)` until it succeeds, fails for good, or time runs out.

    The last error is raised as is: when the deadline (or a Retry-After beyond it) leaves no
    room for another attempt, the failure that used the time up is what the caller sees.
    """
    end = clock() + deadline_s
    for number in range(policy.attempts):
        remaining = end - clock()
        try:
            return attempt(max(remaining, _MIN_ATTEMPT_S))
        except ProviderError as error:
            if not error.retryable or number + 1 >= policy.attempts:
                raise
            retry_after = error.retry_after if isinstance(error, ProviderRateLimited) else None
            pause = policy.delay(number, retry_after)
            left = end - clock()
            if pause + _MIN_ATTEMPT_S > left:
                raise  # no room for another attempt before the deadline
            _log.info("%s: %s; retry %d in %.2fs", what, error.message, number + 1, pause)
            sleep(pause)
    raise AssertionError("unreachable: the loop returns or raises")
