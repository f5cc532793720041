"""The vector batcher's catch-up thread: guaranteed progress when the lowered thread starves."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Sequence

import pytest

from signet_desktop.service.embeddings.batches import PendingVector, VectorBatcher


def item(text: str) -> PendingVector:
    return PendingVector(text, "default", text, "h")


def nice_of_this_thread() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Recorder:
    """A store that records each batch and its thread; the lowered thread's batch blocks
    until released (a starved thread, as on a busy machine)."""

    def __init__(self, burn_s: float = 0.0) -> None:
        self.batches: list[tuple[str, list[str], int, float]] = []
        self.release = threading.Event()
        self.blocked = threading.Event()
        self.caught_up = threading.Event()
        self._burn_s = burn_s

    def __call__(self, batch: Sequence[PendingVector]) -> None:
        name = threading.current_thread().name
        if name == "remember-vectors":
            self.blocked.set()
            self.release.wait(30)
        else:
            burn_until = time.thread_time() + self._burn_s  # CPU, as an embedding uses it
            while time.thread_time() < burn_until:
                pass
        ids = [p.memory_id for p in batch]
        self.batches.append((name, ids, nice_of_this_thread(), time.monotonic()))
        if name != "remember-vectors":
            self.caught_up.set()


def test_the_catch_up_thread_takes_batches_only_once_the_oldest_vector_waited_too_long() -> None:
    clock, store = Clock(), Recorder()
    batcher = VectorBatcher(
        store, catch_up_after_s=3.0, catch_up_items=2, catch_up_threads=1, clock=clock
    )
    try:
        batcher.submit([item("a")])
        assert store.blocked.wait(10)  # the lowered thread holds "a" and gets no further
        batcher.submit([item("b"), item("c"), item("d")])
        time.sleep(0.2)
        assert batcher.pending == 4 and not store.batches  # 0 s waited: nobody took b, c, d
        clock.now += 3.0
        batcher.submit([])  # wakes the threads to look at the clock again
        assert store.caught_up.wait(10)
        name, ids, _, _ = store.batches[0]
        assert (name, ids) == ("remember-vectors-catch-up", ["b", "c"])  # at most 2 a batch
        assert batcher.drain(0.0) is False  # "a" is still in flight on the lowered thread
    finally:
        store.release.set()
        batcher.close(drain_s=5.0, join_s=5.0)
    assert sorted(i for _, ids, _, _ in store.batches for i in ids) == ["a", "b", "c", "d"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice values")
def test_the_catch_up_thread_keeps_the_process_priority() -> None:
    base = nice_of_this_thread()
    clock, store = Clock(), Recorder()
    batcher = VectorBatcher(store, catch_up_after_s=1.0, clock=clock)
    try:
        batcher.submit([item("a")])
        assert store.blocked.wait(10)
        batcher.submit([item("b")])
        clock.now += 5.0
        batcher.submit([])
        assert store.caught_up.wait(10)
    finally:
        store.release.set()
        batcher.close(drain_s=5.0, join_s=5.0)
    nice = {name.removesuffix("-1"): value for name, _, value, _ in store.batches}
    assert nice["remember-vectors-catch-up"] == base
    assert nice["remember-vectors"] > base  # the lowered one stays lowered


def test_the_catch_up_thread_rests_in_proportion_to_the_cpu_it_used() -> None:
    """Duty 0.1: a batch that used 30 ms of CPU is followed by ~270 ms of rest."""
    clock, store = Clock(), Recorder(burn_s=0.03)
    batcher = VectorBatcher(
        store,
        catch_up_after_s=1.0,
        catch_up_items=1,
        catch_up_duty=0.1,
        catch_up_threads=1,
        clock=clock,
    )
    try:
        batcher.submit([item("a")])
        assert store.blocked.wait(10)
        batcher.submit([item("b"), item("c")])
        clock.now += 5.0
        batcher.submit([])
        deadline = time.monotonic() + 30
        while len(store.batches) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        store.release.set()
        batcher.close(drain_s=5.0, join_s=5.0)
    caught = [at for name, _, _, at in store.batches if name == "remember-vectors-catch-up"]
    assert len(caught) == 2
    # c's batch began >= 270 ms after b's ended; it ended at least 30 ms of CPU later still
    assert caught[1] - caught[0] >= 0.27


def test_without_a_catch_up_delay_there_is_no_catch_up_thread() -> None:
    store = Recorder()
    store.release.set()
    batcher = VectorBatcher(store, catch_up_after_s=None)
    try:
        batcher.submit([item("a")])
        assert batcher.drain(10)
        assert batcher._catch_up == []
    finally:
        batcher.close()
    assert [name for name, _, _, _ in store.batches] == ["remember-vectors"]


def test_catch_up_batches_are_stored_in_parts_sorted_by_length() -> None:
    """Little padding, and each part small enough for the caller's thread."""
    clock, store = Clock(), Recorder()
    batcher = VectorBatcher(
        store,
        catch_up_after_s=1.0,
        catch_up_items=4,
        catch_up_part=2,
        catch_up_threads=1,
        clock=clock,
    )
    try:
        batcher.submit([item("first")])
        assert store.blocked.wait(10)
        batcher.submit([item("x" * 30), item("x" * 5), item("x" * 20), item("x" * 10)])
        clock.now += 5.0
        batcher.submit([])
        deadline = time.monotonic() + 30
        while len(store.batches) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        store.release.set()
        batcher.close(drain_s=5.0, join_s=5.0)
    parts = [
        [len(i) for i in ids] for name, ids, _, _ in store.batches if name != "remember-vectors"
    ]
    assert parts == [[5, 10], [20, 30]]


def test_two_catch_up_threads_embed_at_once() -> None:
    """Each thread gets its own share of a contended machine (and is bounded on its own)."""
    together = threading.Barrier(2, timeout=10)
    names: set[str] = set()

    def store(batch: Sequence[PendingVector]) -> None:
        name = threading.current_thread().name
        if name == "remember-vectors":
            blocked.set()
            release.wait(30)
            return
        together.wait()  # passes only when both catch-up threads are inside a batch
        names.add(name)

    clock, release, blocked = Clock(), threading.Event(), threading.Event()
    batcher = VectorBatcher(store, catch_up_after_s=1.0, catch_up_items=1, clock=clock)
    try:
        batcher.submit([item("a")])
        assert blocked.wait(10)  # the lowered thread holds "a"
        batcher.submit([item("b"), item("c")])
        clock.now += 5.0
        batcher.submit([])
        deadline = time.monotonic() + 30
        while len(names) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        release.set()
        batcher.close(drain_s=5.0, join_s=5.0)
    assert names == {"remember-vectors-catch-up", "remember-vectors-catch-up-1"}
