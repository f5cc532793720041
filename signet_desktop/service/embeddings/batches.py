"""Vectors that follow an acknowledged remember: a micro-batching embedder thread.

`remember` commits the memory (row, history, FTS) and hands it here; the response says the
vector is `pending`. One thread drains the queue: whatever arrived while the previous batch
was embedding becomes the next batch (at most `max_items` texts and `max_chars` characters,
so one oversized text travels alone and never pads a batch of small ones; the native
embedder also buckets by token count inside a call). Each batch is embedded outside any
transaction and written in one short transaction. A batch the embedder refuses is saved as
`embedding_backfill` jobs for the queue worker; later batches are unaffected.

Nothing here is needed for durability: a memory is committed before it is queued, and the
embedding tracker's scan embeds every live memory without a current vector (so a daemon
killed with vectors in flight backfills them after the restart). A full queue therefore
drops the follow-up (counted) instead of blocking remembers.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter, deque
from collections.abc import Callable, Sequence
from typing import Protocol

from signet_desktop.domain.memory import Memory
from signet_desktop.embedding.priority import lower_current_thread
from signet_desktop.embedding.vectors import PendingVector

log = logging.getLogger(__name__)

DEFAULT_MAX_ITEMS = 64
DEFAULT_MAX_CHARS = 32_000
DEFAULT_MAX_QUEUED = 20_000
# At close, what is queued gets this long, and the batch in flight this much more; the rest
# (committed memories without a vector) is embedded by the tracker's scan after the restart.
DEFAULT_DRAIN_S = 0.1
DEFAULT_JOIN_S = 0.2


def split_batches(
    items: Sequence[PendingVector], max_items: int, max_chars: int
) -> list[list[PendingVector]]:
    """Consecutive batches bounded by count and total characters (a long text goes alone)."""
    batches: list[list[PendingVector]] = []
    current: list[PendingVector] = []
    chars = 0
    for item in items:
        size = len(item.content)
        if current and (len(current) >= max_items or chars + size > max_chars):
            batches.append(current)
            current, chars = [], 0
        current.append(item)
        chars += size
    if current:
        batches.append(current)
    return batches


class VectorBatcher:
    """A bounded queue of pending vectors and the one thread that embeds them in batches.

    `store(batch)` embeds and writes one batch (it must not raise for a provider failure:
    it queues backfill jobs instead). Tests call `run_once()` without starting the thread.
    """

    def __init__(
        self,
        store: Callable[[Sequence[PendingVector]], object],
        *,
        max_items: int = DEFAULT_MAX_ITEMS,
        max_chars: int = DEFAULT_MAX_CHARS,
        max_queued: int = DEFAULT_MAX_QUEUED,
        autostart: bool = True,
    ) -> None:
        if max_items < 1 or max_chars < 1 or max_queued < 1:
            raise ValueError("max_items, max_chars and max_queued must be positive")
        self._store = store
        self.max_items = max_items
        self.max_chars = max_chars
        self._max_queued = max_queued
        self._autostart = autostart
        self._queue: deque[PendingVector] = deque()
        self._cond = threading.Condition()
        self._busy = False
        self._closed = False
        self._thread: threading.Thread | None = None
        self.dropped = 0
        self.batches = 0
        self._per_agent: Counter[str] = Counter()  # queued + in flight, for recall's honesty

    @property
    def pending(self) -> int:
        """Vectors queued or being embedded right now."""
        with self._cond:
            return len(self._queue) + (1 if self._busy else 0)

    def pending_for(self, agent_id: str) -> int:
        """This agent's vectors still to be written (queued or being embedded)."""
        with self._cond:
            return self._per_agent.get(agent_id, 0)

    def submit(self, items: Sequence[PendingVector]) -> int:
        """Queue vectors to follow; returns how many were accepted (the rest wait for the scan)."""
        with self._cond:
            if self._closed:
                return 0
            room = max(0, self._max_queued - len(self._queue))
            accepted = list(items[:room])
            self._queue.extend(accepted)
            self._per_agent.update(item.agent_id for item in accepted)
            dropped = len(items) - len(accepted)
            self.dropped += dropped
            if self._autostart and self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="remember-vectors", daemon=True
                )
                self._thread.start()
            self._cond.notify()
        if dropped:
            log.warning("vector queue full: %d memories left to the embedding tracker", dropped)
        return len(accepted)

    def run_once(self) -> bool:
        """Embed and write the next batch; False when nothing was queued."""
        batch = self._take()
        if not batch:
            return False
        try:
            self._store(batch)
        finally:
            with self._cond:
                self._busy = False
                self._per_agent.subtract(item.agent_id for item in batch)
                self._per_agent += Counter()  # drop agents at zero
                self._cond.notify_all()
        return True

    def drain(self, timeout_s: float) -> bool:
        """Wait until the queue is empty and no batch is running; False on timeout."""
        with self._cond:
            return self._cond.wait_for(
                lambda: not self._queue and not self._busy, timeout=timeout_s
            )

    def close(self, drain_s: float = DEFAULT_DRAIN_S, join_s: float = DEFAULT_JOIN_S) -> None:
        """Finish what is queued (up to `drain_s`), then stop; the rest waits for the scan.

        The batch already in flight is waited for (up to `join_s`) so that its write lands
        before the caller closes the database; one still running after that is abandoned
        quietly (its memories are committed and the scan embeds them after the restart).
        """
        if self._thread is not None:
            self.drain(drain_s)
        with self._cond:
            self._closed = True
            left = len(self._queue)
            self._queue.clear()
            self._per_agent.clear()
            self._cond.notify_all()
        if left:
            log.info("%d pending vectors left to the embedding tracker at shutdown", left)
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(join_s)
            if self._thread.is_alive():
                log.info("a vector batch still embedding at shutdown is left to the tracker")

    def _take(self) -> list[PendingVector]:
        with self._cond:
            batch: list[PendingVector] = []
            chars = 0
            while self._queue and len(batch) < self.max_items:
                size = len(self._queue[0].content)
                if batch and chars + size > self.max_chars:
                    break
                batch.append(self._queue.popleft())
                chars += size
            self._busy = bool(batch)
            return batch

    def _run(self) -> None:
        lower_current_thread()  # a backlog of vectors waits behind acks, recall and the GUI
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._queue or self._closed)
                if self._closed:
                    return
            try:
                self.run_once()
            except Exception as exc:  # vectors are derived: the scan retries what is left out
                if self._closed:  # the database may be gone already: expected, not a bug
                    log.info("a vector batch abandoned at shutdown (%s); left to the tracker", exc)
                    return
                log.exception("embedding a batch of remembered memories failed")
            else:
                self.batches += 1


class VectorFollow(Protocol):
    """What the remember path needs from vectors that follow the write."""

    def follow(self, memories: Sequence[Memory]) -> None:
        """Queue vectors for committed memories (returns at once)."""
        ...

    def store_now(self, memories: Sequence[Memory]) -> set[str]:
        """Embed and store now, in batches; the ids that got a vector."""
        ...
