"""Vectors that follow an acknowledged remember: micro-batching embedder threads.

`remember` commits the memory (row, history, FTS) and hands it here; the response says the
vector is `pending`. One thread drains the queue: whatever arrived while the previous batch
was embedding becomes the next batch (at most `max_items` texts and `max_chars` characters,
so one oversized text travels alone and never pads a batch of small ones; the native
embedder also buckets by token count inside a call). Each batch is embedded outside any
transaction and written in one short transaction. A batch the embedder refuses is saved as
`embedding_backfill` jobs for the queue worker; later batches are unaffected.

Three threads take batches from the one queue. The main one runs at background priority
(`embedding/priority.py`), so on a machine with idle CPU vectors follow without slowing the
requests someone waits on. On a busy machine a nice +10 thread gets ~10% of a contended core,
and the backlog once grew for minutes while recall ran lexical-only on it. So
`catch_up_threads` (2) catch-up threads keep the process's own priority (a thread cannot lower
its nice value again without CAP_SYS_NICE, hence threads of their own rather than a switch)
and take batches only while the oldest queued vector has waited longer than
`catch_up_after_s`; each bounds its own CPU use to `catch_up_duty` of one core (after a batch
it sleeps in proportion to the CPU time the batch took), so together they never take more
than one core of two from acknowledgements and recalls, and each gets its fair share of a
contended machine while it runs (at load ~20 on 2 cores one thread left the last of 3,000
vectors 131 s behind the last acknowledgement, two 53 s; docs/BENCHMARKS.md). Each takes
`catch_up_items` texts at a time, sorts them by length and stores them in parts of
`catch_up_part`: little padding (LoCoMo turns: 221 texts per CPU-second in sorted parts of 4
against 118 in unsorted calls of 16), and each part is one bucket for the native embedder,
which then runs it on the calling thread rather than its background pool.

Nothing here is needed for durability: a memory is committed before it is queued, and the
embedding tracker's scan embeds every live memory without a current vector (so a daemon
killed with vectors in flight backfills them after the restart). A full queue therefore
drops the follow-up (counted) instead of blocking remembers.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from typing import Protocol

from signet_desktop.domain.errors import Unavailable
from signet_desktop.domain.memory import Memory
from signet_desktop.embedding.priority import lower_current_thread
from signet_desktop.embedding.vectors import PendingVector
from signet_desktop.queue.worker import JobInterrupted, stopped_by

log = logging.getLogger(__name__)

DEFAULT_MAX_ITEMS = 64
DEFAULT_MAX_CHARS = 32_000
DEFAULT_MAX_QUEUED = 20_000
# At close, what is queued gets this long, and the batch in flight this much more; the rest
# (committed memories without a vector) is embedded by the tracker's scan after the restart.
DEFAULT_DRAIN_S = 0.1
DEFAULT_JOIN_S = 0.2
STOP_JOIN_S = 0.5  # then, for a batch told to stop to leave its embedder call
# The catch-up thread (module docstring): when it starts, how much of a core it may use, and
# its batch size (the native embedder's batch size is 32: one bucket, the caller's thread).
DEFAULT_CATCH_UP_AFTER_S = 3.0
DEFAULT_CATCH_UP_DUTY = 0.5
DEFAULT_CATCH_UP_ITEMS = 32
DEFAULT_CATCH_UP_PART = 4
DEFAULT_CATCH_UP_THREADS = 2


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
    """A bounded queue of pending vectors and the two threads that embed them in batches.

    `store(batch)` embeds and writes one batch (it must not raise for a provider failure:
    it queues backfill jobs instead). Tests call `run_once()` without starting the threads.
    """

    def __init__(
        self,
        store: Callable[[Sequence[PendingVector]], object],
        *,
        max_items: int = DEFAULT_MAX_ITEMS,
        max_chars: int = DEFAULT_MAX_CHARS,
        max_queued: int = DEFAULT_MAX_QUEUED,
        autostart: bool = True,
        catch_up_after_s: float | None = DEFAULT_CATCH_UP_AFTER_S,
        catch_up_duty: float = DEFAULT_CATCH_UP_DUTY,
        catch_up_items: int = DEFAULT_CATCH_UP_ITEMS,
        catch_up_part: int = DEFAULT_CATCH_UP_PART,
        catch_up_threads: int = DEFAULT_CATCH_UP_THREADS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`catch_up_after_s`: None runs no catch-up thread (the build before it)."""
        if min(max_items, max_chars, max_queued, catch_up_items, catch_up_part) < 1:
            raise ValueError("batch and queue bounds must be positive")
        if catch_up_threads < 1:
            raise ValueError("catch_up_threads must be positive (catch_up_after_s=None: none)")
        if not 0.0 < catch_up_duty <= 1.0:
            raise ValueError("catch_up_duty must be within (0, 1]")
        self._store = store
        self._stop = threading.Event()  # set by close(): see `queue/worker.py: stopped_by`
        self.max_items = max_items
        self.max_chars = max_chars
        self._max_queued = max_queued
        self._autostart = autostart
        self._catch_up_after_s = catch_up_after_s
        self._catch_up_duty = catch_up_duty
        self._catch_up_items = catch_up_items
        self._catch_up_part = catch_up_part
        self._catch_up_threads = catch_up_threads
        self._clock = clock
        self._queue: deque[tuple[float, PendingVector]] = deque()  # (queued at, item)
        self._cond = threading.Condition()
        self._in_flight = 0  # items of the batches being embedded
        self._closed = False
        self._thread: threading.Thread | None = None
        self._catch_up: list[threading.Thread] = []
        self.dropped = 0
        self.batches = 0
        self.catch_up_batches = 0
        self._per_agent: Counter[str] = Counter()  # queued + in flight, for recall's honesty

    @property
    def pending(self) -> int:
        """Vectors queued or being embedded right now."""
        with self._cond:
            return len(self._queue) + self._in_flight

    def pending_for(self, agent_id: str) -> int:
        """This agent's vectors still to be written (queued or being embedded)."""
        with self._cond:
            return self._per_agent.get(agent_id, 0)

    def oldest_wait_s(self) -> float:
        """How long the oldest queued vector has waited (0 when none is queued)."""
        with self._cond:
            return self._clock() - self._queue[0][0] if self._queue else 0.0

    def submit(self, items: Sequence[PendingVector]) -> int:
        """Queue vectors to follow; returns how many were accepted (the rest wait for the scan)."""
        with self._cond:
            if self._closed:
                return 0
            room = max(0, self._max_queued - len(self._queue))
            accepted = list(items[:room])
            now = self._clock()
            self._queue.extend((now, item) for item in accepted)
            self._per_agent.update(item.agent_id for item in accepted)
            dropped = len(items) - len(accepted)
            self.dropped += dropped
            if self._autostart and self._thread is None:
                self._start_threads()
            self._cond.notify_all()
        if dropped:
            log.warning("vector queue full: %d memories left to the embedding tracker", dropped)
        return len(accepted)

    def run_once(self, max_items: int | None = None, part: int | None = None) -> bool:
        """Embed and write the next batch (at most `max_items`; with `part`, sorted by length
        and stored in parts of that many); False when nothing was queued."""
        batch = self._take(self.max_items if max_items is None else max_items)
        if not batch:
            return False
        try:
            if part is None:
                self._store(batch)
            else:
                ordered = sorted(batch, key=lambda item: len(item.content))
                for at in range(0, len(ordered), part):
                    self._store(ordered[at : at + part])
        finally:
            with self._cond:
                self._in_flight -= len(batch)
                self._per_agent.subtract(item.agent_id for item in batch)
                self._per_agent += Counter()  # drop agents at zero
                self._cond.notify_all()
        return True

    def drain(self, timeout_s: float) -> bool:
        """Wait until the queue is empty and no batch is running; False on timeout."""
        with self._cond:
            return self._cond.wait_for(
                lambda: not self._queue and not self._in_flight, timeout=timeout_s
            )

    def close(self, drain_s: float = DEFAULT_DRAIN_S, join_s: float = DEFAULT_JOIN_S) -> None:
        """Finish what is queued (up to `drain_s`), then stop; the rest waits for the scan.

        The batches already in flight are waited for (up to `join_s`) so that their writes
        land before the caller closes the database; one still running after that is told to
        stop: it leaves its embedder call without writing (`stopped_by`) and its memories,
        committed already, are embedded by the scan after the restart.
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
        deadline = time.monotonic() + join_s
        threads = [
            t
            for t in (self._thread, *self._catch_up)
            if t is not None and t is not threading.current_thread()
        ]
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        if any(thread.is_alive() for thread in threads):
            log.info("a vector batch still embedding at shutdown is left to the tracker")
            self._stop.set()  # it leaves the embedder call without writing
            for thread in threads:
                thread.join(STOP_JOIN_S)

    def _start_threads(self) -> None:
        self._thread = threading.Thread(target=self._run, name="remember-vectors", daemon=True)
        self._thread.start()
        if self._catch_up_after_s is not None:
            for index in range(self._catch_up_threads):
                name = "remember-vectors-catch-up" + (f"-{index}" if index else "")
                thread = threading.Thread(target=self._run_catch_up, name=name, daemon=True)
                self._catch_up.append(thread)
                thread.start()

    def _take(self, max_items: int) -> list[PendingVector]:
        with self._cond:
            batch: list[PendingVector] = []
            chars = 0
            while self._queue and len(batch) < max_items:
                size = len(self._queue[0][1].content)
                if batch and chars + size > self.max_chars:
                    break
                batch.append(self._queue.popleft()[1])
                chars += size
            self._in_flight += len(batch)
            return batch

    def _run(self) -> None:
        lower_current_thread()  # a backlog of vectors waits behind acks, recall and the GUI
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._queue or self._closed)
                if self._closed:
                    return
            done = self._run_guarded()
            if done is None:
                return
            self.batches += done

    def _run_catch_up(self) -> None:
        """At the process's priority: batches only while the oldest vector waits too long."""
        assert self._catch_up_after_s is not None
        after = self._catch_up_after_s
        while True:
            with self._cond:
                while not self._closed:
                    waited = self._clock() - self._queue[0][0] if self._queue else None
                    if waited is not None and waited >= after:
                        break
                    self._cond.wait(None if waited is None else after - waited)
                if self._closed:
                    return
            cpu = time.thread_time()
            done = self._run_guarded(self._catch_up_items, self._catch_up_part)
            if done is None:
                return
            self.catch_up_batches += done
            used = time.thread_time() - cpu
            with self._cond:  # the duty bound; close() wakes it
                self._cond.wait_for(
                    lambda: self._closed, used * (1.0 - self._catch_up_duty) / self._catch_up_duty
                )

    def _run_guarded(self, max_items: int | None = None, part: int | None = None) -> int | None:
        """One batch: 1 stored, 0 failed (logged), None when the batcher closed under it."""
        try:
            with stopped_by(self._stop):
                return int(self.run_once(max_items, part))
        except JobInterrupted:  # closed while the embedder ran: nothing of it is written
            log.info("a vector batch abandoned at shutdown; left to the tracker")
            return None
        except Exception as exc:  # vectors are derived: the scan retries what is left out
            if self._closed:  # the database may be gone already: expected, not a bug
                log.info("a vector batch abandoned at shutdown (%s); left to the tracker", exc)
                return None
            if isinstance(exc, Unavailable):  # the database is down: the tracker catches up
                log.warning("embedding a batch of remembered memories failed: %s", exc.message)
            else:
                log.exception("embedding a batch of remembered memories failed")
        return 0


class VectorFollow(Protocol):
    """What the remember path needs from vectors that follow the write."""

    def follow(self, memories: Sequence[Memory]) -> None:
        """Queue vectors for committed memories (returns at once)."""
        ...

    def store_now(self, memories: Sequence[Memory]) -> set[str]:
        """Embed and store now, in batches; the ids that got a vector."""
        ...
