"""The native embedder's batch pool runs one step below the process, whoever starts it."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from signet_desktop.embedding.native import NativeMiniLM
from signet_desktop.embedding.priority import BACKGROUND_NICE_STEP, lower_current_thread

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="per-thread nice values are a Linux feature"
)


def nice_of_this_thread() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def test_a_pool_first_fed_by_a_lowered_worker_is_not_lowered_twice() -> None:
    # The documents worker and the vector batcher run lowered; the pool used to start from
    # them and lower its threads again (nice 19: almost no CPU on a busy machine).
    base = nice_of_this_thread()
    embedder = NativeMiniLM(workers=2)  # the pool needs no model: it is made on first batch
    seen: list[int] = []

    def background() -> None:
        lower_current_thread()
        gate = threading.Barrier(2, timeout=10)

        def task() -> None:
            gate.wait()  # both at once, so the pool starts both threads from this one
            seen.append(nice_of_this_thread())

        for done in [embedder._get_pool().submit(task) for _ in range(2)]:
            done.result(10)

    try:
        thread = threading.Thread(target=background)
        thread.start()
        thread.join(20)
    finally:
        embedder.close()
    assert seen == [min(19, base + BACKGROUND_NICE_STEP)] * 2
    assert nice_of_this_thread() == base
