"""The channel protocol: what the recall engine asks of each ranker it runs.

A channel has a `name` (the key of its evidence in `RecallHit.channels`, of its weight in
`recall.fusion.channel_weights`, and what `RecallQuery.channels` selects it by) and runs in two
steps, so slow work overlaps:

1. `start(conn, request, pool)` on the caller's thread, for every selected channel before any
   is finished: cheap checks, and any blocking call that may run elsewhere (the semantic
   channel submits its query embedding to the engine's `pool` here);
2. the returned `finish(clock)`, on the caller's thread, in channel order: the search itself,
   its stages timed on `clock`, returning a `ChannelOutcome`.

Every step is a read: never inside a write transaction. Adding a channel is a module that
implements this protocol, a weight in `channel_weights`, and passing it to `RecallEngine`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol

from signet_desktop.domain.recall import RecallFilters, StageTiming
from signet_desktop.recall.calibration import Calibration
from signet_desktop.recall.fusion import ChannelHit
from signet_desktop.storage.connect import Connection


class StageClock:
    """Collects named stage durations for `meta.timings`."""

    def __init__(self) -> None:
        self.stages: list[StageTiming] = []
        self._started = time.perf_counter()

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, (time.perf_counter() - started) * 1000)

    def add(self, name: str, duration_ms: float) -> None:
        self.stages.append(StageTiming(name, duration_ms))

    @property
    def total_ms(self) -> float:
        return (time.perf_counter() - self._started) * 1000


@dataclass(frozen=True, slots=True)
class ChannelRequest:
    """What every channel is asked: the query, its keyword text, scope, filters and depth."""

    text: str
    keyword_text: str
    agent_id: str
    filters: RecallFilters
    k: int
    as_of: str | None = None  # when the question is asked (RecallQuery.as_of; None: now)
    # The capped document count of each keyword term, as the lexical channel's plan took them
    # for this recall (filled by it), so a stage weighing the same terms (the rerank's IDF)
    # reads them rather than counting again: on PostgreSQL a count visits up to 10,001 rows.
    term_counts: dict[str, int] = field(default_factory=dict, compare=False)


Fill = Callable[[Sequence[str], "StageClock"], "ChannelOutcome"]


@dataclass(frozen=True, slots=True)
class ChannelOutcome:
    """A channel's hits (best first, 1-based ranks) and what a person needs to trust them.

    `available`: False when the channel could not run (the result's method then leaves it
    out). `completeness` and `searched_window` become the result's `vectorCompleteness` and
    `searchedWindow` (the semantic channel reports them), `index` the result's `vectorIndex`;
    `note` goes to `meta.notes`. `fill`, when set, is the channel's second look once every
    channel has finished: given the other channels' candidates (best first) it returns this
    outcome again with those it could not see scored (the semantic channel embeds the ones
    without a vector yet, `recall/vector_gaps.py`).
    """

    hits: Sequence[ChannelHit]
    available: bool = True
    completeness: str | None = None
    searched_window: int | None = None
    note: str | None = None
    index: str | None = None  # what the semantic channel searched (`vectorIndex`)
    # The semantic channel's: what its embedder's cosines mean, when measured (recall.calibration)
    calibration: Calibration | None = None
    fill: Fill | None = None


Finish = Callable[[StageClock], ChannelOutcome]


class RecallChannel(Protocol):
    """One ranker the engine runs (see the module docstring for the two steps)."""

    @property
    def name(self) -> str: ...

    def start(self, conn: Connection, request: ChannelRequest, pool: Executor) -> Finish:
        """Begin this query; the returned callable completes it on the caller's thread."""
        ...
