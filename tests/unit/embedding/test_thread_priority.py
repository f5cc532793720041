"""Background threads run at a lower CPU priority; the threads that answer requests do not."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import pytest

from signet_desktop.daemon.workers import WorkerThreads
from signet_desktop.embedding.priority import (
    BACKGROUND_NICE_STEP,
    lower_current_thread,
    request_pool,
)
from signet_desktop.service.embeddings.batches import PendingVector, VectorBatcher
from signet_desktop.service.events import EventBus
from signet_desktop.service.workers import WorkerDeclaration

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="per-thread nice values are a Linux feature"
)


def nice_of_this_thread() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def expected_background_nice(base: int) -> int:
    return min(19, base + BACKGROUND_NICE_STEP)


def test_a_lowered_thread_is_nicer_and_the_others_are_unchanged() -> None:
    base = nice_of_this_thread()
    seen: list[tuple[bool, int]] = []

    def background() -> None:
        seen.append((lower_current_thread(), nice_of_this_thread()))

    thread = threading.Thread(target=background)
    thread.start()
    thread.join(10)
    assert seen == [(True, expected_background_nice(base))]
    assert nice_of_this_thread() == base  # the caller's thread, and the process, keep theirs


def test_the_vector_batcher_embeds_at_background_priority() -> None:
    base = nice_of_this_thread()
    stored = threading.Event()
    nice: list[int] = []

    def store(batch: Sequence[PendingVector]) -> None:
        nice.append(nice_of_this_thread())
        stored.set()

    batcher = VectorBatcher(store)
    try:
        batcher.submit([PendingVector("m1", "default", "some text", "hash")])
        assert stored.wait(10)
    finally:
        batcher.close()
    assert nice == [expected_background_nice(base)]


class RecordingWorker:
    def __init__(self) -> None:
        self.nice: list[int] = []
        self.ran = threading.Event()

    def run_once(self) -> bool:
        return False

    def run_forever(self, stop: threading.Event) -> None:
        self.nice.append(nice_of_this_thread())
        self.ran.set()
        stop.wait(10)

    def release_leases(self) -> int:
        return 0


def test_hosted_workers_run_at_background_priority() -> None:
    base = nice_of_this_thread()
    worker = RecordingWorker()
    declaration = WorkerDeclaration("record", ("x",), factory=lambda: worker)
    host = WorkerThreads([declaration], EventBus())
    host.start()
    try:
        assert worker.ran.wait(10)
    finally:
        assert host.stop(10)
    assert worker.nice == [expected_background_nice(base)]


def test_the_native_embedders_batch_pool_runs_at_background_priority() -> None:
    from signet_desktop.embedding.native import NativeMiniLM

    base = nice_of_this_thread()
    embedder = NativeMiniLM(workers=2)  # the pool needs no model: it is made on first batch
    try:
        pool = embedder._get_pool()
        assert pool.submit(nice_of_this_thread).result(10) == expected_background_nice(base)
    finally:
        embedder.close()
    assert nice_of_this_thread() == base


def _first_tasks_from_a_lowered_thread(pool: ThreadPoolExecutor, workers: int) -> list[int]:
    """Submit `workers` concurrent tasks from a lowered thread; the nice value each ran at."""
    gate = threading.Barrier(workers, timeout=10)
    seen: list[int] = []

    def task() -> None:
        gate.wait()  # all at once, so the pool needs (and, if lazy, starts) every thread
        seen.append(nice_of_this_thread())

    def background() -> None:
        lower_current_thread()
        for done in [pool.submit(task) for _ in range(workers)]:
            done.result(10)

    thread = threading.Thread(target=background)
    thread.start()
    thread.join(20)
    return sorted(seen)


def test_a_request_pool_keeps_its_makers_priority_whoever_submits_first() -> None:
    base = nice_of_this_thread()
    lazy = ThreadPoolExecutor(max_workers=2)
    started = request_pool(2, "test-requests")
    try:
        # The failure mode request_pool exists for: lazily started threads inherit the nice
        # value of the first submitter.
        assert _first_tasks_from_a_lowered_thread(lazy, 2) == [expected_background_nice(base)] * 2
        assert _first_tasks_from_a_lowered_thread(started, 2) == [base, base]
    finally:
        lazy.shutdown()
        started.shutdown()
